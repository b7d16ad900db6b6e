/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tests/cli/vgpt_events.sh: exec PROG: a forked child execs this program
 * again; the parent tries an execve that fails, then execs PROG: three
 * images, two processes, under --trace-children=yes.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static int work(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += i % 7 ? i : -i;
	return s;
}

int main(int argc, char **argv)
{
	pid_t c;

	if (argc < 2)
		return 2;
	if (argc > 2) {
		printf("%s %d\n", argv[1], work(1000));
		return 0;
	}
	c = fork();
	if (c == 0) {
		execl(argv[0], argv[0], "child", "x", (char *)NULL);
		_exit(127);
	}
	waitpid(c, NULL, 0);
	printf("parent %d\n", work(500));
	fflush(stdout);
	execl("/nonexistent", "x", (char *)NULL);
	execl(argv[1], argv[1], (char *)NULL);
	return 1;
}
