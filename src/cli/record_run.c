/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt record, the portable source: running a program under Valgrind with
 * vgpt (src/record/vgpt) and reading what Valgrind said about it.
 *
 * Valgrind runs the program in its own process, so the child hwt waits
 * for is the program: its wait status is the program's. Valgrind's
 * messages go to one log per process (--log-file=DIR/vg.%p.log, forked
 * children included); a program killed by a signal has its signal and
 * the instruction that faulted there ("Process terminating with default
 * action of signal 11 (SIGSEGV)" ... "at 0x10915C: main (crash.c:2)").
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/record.h"

int rec_find_vgpt(char *dir, size_t len)
{
	const char *env = getenv("HWT_VGPT_LIB");
	char exe[PATH_MAX], probe[PATH_MAX + 64];
	static const char *const rel[] = { "vgpt", "../libexec/hwt/vgpt" };
	ssize_t n;
	char *slash;

	if (env && *env) {
		snprintf(dir, len, "%s", env);
		snprintf(probe, sizeof(probe), "%s/vgpt-amd64-linux", env);
		return access(probe, X_OK) ? -1 : 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(probe, sizeof(probe), "%s/%s/vgpt-amd64-linux", exe,
			 rel[i]);
		if (!access(probe, X_OK)) {
			snprintf(dir, len, "%s/%s", exe, rel[i]);
			return 0;
		}
	}
	return -1;
}

int rec_find_program(const char *name, char *path, size_t len)
{
	const char *p = getenv("PATH");
	int found_noexec = 0;

	if (strchr(name, '/')) {
		snprintf(path, len, "%s", name);
		if (access(path, F_OK))
			return 127;
		return access(path, X_OK) ? 126 : 0;
	}
	if (!p || !*p)
		p = "/usr/local/bin:/usr/bin:/bin";
	while (*p) {
		size_t n = strcspn(p, ":");
		struct stat st;

		snprintf(path, len, "%.*s/%s", (int)(n ? n : 1),
			 n ? p : ".", name);
		if (!stat(path, &st) && S_ISREG(st.st_mode)) {
			if (!access(path, X_OK))
				return 0;
			found_noexec = 1;
		}
		p += n;
		if (*p == ':')
			p++;
	}
	return found_noexec ? 126 : 127;
}

static volatile sig_atomic_t child_pid;

static void forward(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

int rec_run(const struct rec_run *r, pid_t *pid_out, int *status)
{
	struct sigaction sa, old_int, old_quit, old_term, old_hup;
	size_t n = 0, nargs = 16 + (size_t)r->argc;
	char **args = calloc(nargs, sizeof(*args));
	char out[PATH_MAX + 16], log[PATH_MAX + 32], ring[64];
	char *filter = NULL;
	pid_t pid, w;
	int ret = 0;

	if (!args)
		return -1;
	snprintf(out, sizeof(out), "--vgpt-out=%s", r->prefix);
	snprintf(log, sizeof(log), "--log-file=%s/vg.%%p.log", r->dir);
	args[n++] = (char *)"valgrind";
	args[n++] = (char *)"-q";
	args[n++] = (char *)"--tool=vgpt";
	args[n++] = out;
	args[n++] = log;
	/* Programs it execs are traced on, as perf record follows them. */
	args[n++] = (char *)"--trace-children=yes";
	if (r->truth)
		args[n++] = (char *)"--vgpt-truth=yes";
	if (r->one_cpu)
		args[n++] = (char *)"--vgpt-drain-thread=no";
	if (r->ring) {
		snprintf(ring, sizeof(ring), "--vgpt-ring=%" PRIu64, r->ring);
		args[n++] = ring;
	}
	if (r->filter) {
		if (asprintf(&filter, "--vgpt-filter=%s", r->filter) < 0) {
			free(args);
			return -1;
		}
		args[n++] = filter;
	}
	args[n++] = (char *)r->program;
	for (int i = 1; i < r->argc; i++)
		args[n++] = r->argv[i];
	args[n] = NULL;

	/* As system(3): the terminal's ^C and ^\ reach the program (it is
	 * in our process group), and we stay to write what it left. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGQUIT, &sa, &old_quit);
	sa.sa_handler = forward;
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		sigaction(SIGHUP, &old_hup, NULL);
		signal(SIGXFSZ, SIG_DFL);
		setenv("VALGRIND_LIB", r->vglib, 1);
		execvp("valgrind", args);
		fprintf(stderr, "hwt record: cannot run valgrind: %s\n",
			strerror(errno));
		_exit(127);
	}
	if (pid < 0) {
		fprintf(stderr, "hwt record: fork: %s\n", strerror(errno));
		ret = -1;
	} else {
		child_pid = pid;
		*pid_out = pid;
		do
			w = waitpid(pid, status, 0);
		while (w < 0 && errno == EINTR);
		child_pid = 0;
		if (w < 0) {
			fprintf(stderr, "hwt record: waitpid: %s\n",
				strerror(errno));
			ret = -1;
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	free(filter);
	free(args);
	return ret;
}

/* One log: the fatal signal and its instruction; vgpt's own errors. */
static int read_log(const char *path, uint32_t pid, struct rec_logs *lg)
{
	static const char fatal[] =
		"Process terminating with default action of signal ";
	char line[1024];
	int want_ip = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		const char *body = strstr(line, "== ");
		const char *s;

		body = body ? body + 3 : line;
		if (*body && *body != '\n')
			lg->printed = 1;
		fputs(line, stderr);
		if ((s = strstr(body, fatal))) {
			struct hwt_pd_exit *e;

			if (lg->nexits == REC_MAX_EXITS)
				continue;
			e = &lg->exits[lg->nexits++];
			memset(e, 0, sizeof(*e));
			e->pid = pid;
			e->signal = (uint32_t)strtoul(s + strlen(fatal), NULL,
						      10);
			want_ip = 1;
		} else if (want_ip && (s = strstr(body, " at 0x"))) {
			struct hwt_pd_exit *e = &lg->exits[lg->nexits - 1];

			e->ip = strtoull(s + 4, NULL, 16);
			e->flags |= HWT_PD_EXIT_HAVE_IP;
			want_ip = 0;
		} else if (!strncmp(body, "vgpt: ", 6) &&
			   lg->nerrors < REC_MAX_ERRORS) {
			snprintf(lg->errors[lg->nerrors++],
				 sizeof(lg->errors[0]), "%.*s",
				 (int)strcspn(body, "\n"), body);
		}
	}
	fclose(f);
	return 0;
}

void rec_read_logs(const char *dir, struct rec_logs *lg)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	memset(lg, 0, sizeof(*lg));
	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[PATH_MAX + 256], *end;
		unsigned long pid;

		if (strncmp(de->d_name, "vg.", 3))
			continue;
		pid = strtoul(de->d_name + 3, &end, 10);
		if (strcmp(end, ".log") || pid > UINT32_MAX)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		read_log(path, (uint32_t)pid, lg);
	}
	closedir(d);
}
