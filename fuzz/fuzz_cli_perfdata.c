/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for everything that reads a perf.data file above the
 * reader (fuzz_perfdata covers that): the input is a file, and the
 * commands run on it as a user would run them, each in-process:
 *
 *   hwt info, hwt sideband, hwt dump --quiet, hwt flow --stat (sideband
 *   into the process model, streams in pieces, images from the mappings
 *   the file names, lost-data notes), hwt calls, hwt last
 *
 * None may crash, hang or leak (ASan/UBSan decide); a broken file is an
 * error message and an exit status, which is all that is checked here.
 * Output goes to /dev/null. Streams are cut into 4 KiB pieces so that
 * small inputs reach the cutting too.
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli/cli.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int devnull = -1;

static int run(int (*cmd)(int, char **), const char *a0, const char *a1,
	       const char *path)
{
	char *argv[4] = { (char *)a0, (char *)a1, (char *)path, NULL };
	int argc = 3, ret;

	if (!a1) {
		argv[1] = (char *)path;
		argv[2] = NULL;
		argc = 2;
	}
	optind = 1;
	ret = cmd(argc, argv);
	fflush(stdout);
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd, saved;

	if (devnull < 0) {
		devnull = open("/dev/null", O_WRONLY);
		CHECK(devnull >= 0);
		CHECK(dup2(devnull, STDOUT_FILENO) >= 0);
		setenv("HWT_PIECE_SIZE", "4096", 1);
		/* No build-id cache or debug files of this machine. */
		setenv("HOME", "/nonexistent", 1);
	}
	fd = memfd_create("perf.data", 0);
	CHECK(fd >= 0);
	CHECK(write(fd, data, size) == (ssize_t)size);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

	/* The commands' messages are the point of bad input, not news. */
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	CHECK(saved >= 0);
	CHECK(dup2(devnull, STDERR_FILENO) >= 0);

	run(cmd_info, "info", NULL, path);
	run(cmd_sideband, "sideband", NULL, path);
	run(cmd_dump, "dump", "--quiet", path);
	run(cmd_flow, "flow", "--stat", path);
	run(cmd_calls, "calls", NULL, path);
	run(cmd_last, "last", NULL, path);

	fflush(stderr);
	CHECK(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	close(fd);
	return 0;
}
