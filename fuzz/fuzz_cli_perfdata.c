/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for everything that reads a perf.data file above the
 * reader (fuzz_perfdata covers that): the input is a file, and the
 * commands run on it as a user would run them, each in-process:
 *
 *   hwt info, hwt sideband (and with records chosen), hwt dump --quiet,
 *   hwt flow --stat (sideband into the process model, streams in
 *   pieces, images from the mappings the file names, lost-data notes),
 *   hwt calls, hwt last
 *
 * None may crash, hang or leak (ASan/UBSan decide); a broken file is an
 * error message and an exit status. Output goes to /dev/null, but for
 * hwt flow --blocks, --branches and --time -j2 (several CPUs' streams in
 * time order: the marks of time and thread made where one thread makes
 * them) and hwt calls -j2 (and --stream, --time, --folded, --timeline),
 * and both with lines chosen (--tid, -C, --time-range: flow through the
 * merge's ranges, from a PSB before the windows' start where one is
 * found, calls through the history's hidden lines), which must
 * print what -j1 prints (segments decoded on threads, each
 * with its own view of the processes, lost-data notes placed as one
 * thread places them; calls replayed on a stack per traced thread and joined across
 * cuts; each segment's time as one thread has it). Streams are cut into
 * 4 KiB pieces and those into 512-byte segments, so that small inputs
 * reach the cutting too, and hwt calls keeps 64 lines in memory. And
 * hwt calls --time, flow --branches and flow --time (instructions;
 * blocks in batches that end where the time may move or a lost-data note
 * comes due) must print what they print with the blocks one at a time
 * (HWT_ONE_BLOCK), and flow --disasm (instructions from the kept walks,
 * texts kept by image), calls --time (calls' last instructions from
 * the kept walks) and flow --branches (blocks that end at every branch,
 * unwalked) what they print with every instruction walked and read
 * (HWT_WALK_EACH; --branches: blocks that run on, walked), flow
 * --branches and last --time what they print with every instruction
 * decoded (HWT_NO_CACHE: no block cache, none carried from process to
 * process), and last --time (blocks that end at every branch, unwalked)
 * what it prints from walked blocks that run on (HWT_LAST_WALK).
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

/* What hwt A0 ARGS... -jN prints of @path (ARGS: @args, NULL-ended, at
 * most 6), in a memfd. */
static int output_v(int (*cmd)(int, char **), const char *a0,
		    const char *const *args, const char *path, const char *jobs)
{
	char *argv[10] = { (char *)a0 };
	int argc = 1, fd = memfd_create("out", 0);

	for (; *args && argc < 7; args++)
		argv[argc++] = (char *)*args;
	argv[argc++] = (char *)jobs;
	argv[argc++] = (char *)path;
	argv[argc] = NULL;
	CHECK(fd >= 0);
	CHECK(dup2(fd, STDOUT_FILENO) >= 0);
	optind = 1;
	cmd(argc, argv);
	fflush(stdout);
	CHECK(dup2(devnull, STDOUT_FILENO) >= 0);
	return fd;
}

/* Two outputs (memfds) must be the same; both are closed. */
static void same_fds(int one, int two)
{
	off_t n = lseek(one, 0, SEEK_END);

	CHECK(n >= 0 && lseek(two, 0, SEEK_END) == n);
	if (n > 0) {
		void *a = mmap(NULL, (size_t)n, PROT_READ, MAP_SHARED, one, 0);
		void *b = mmap(NULL, (size_t)n, PROT_READ, MAP_SHARED, two, 0);

		CHECK(a != MAP_FAILED && b != MAP_FAILED);
		CHECK(!memcmp(a, b, (size_t)n));
		munmap(a, (size_t)n);
		munmap(b, (size_t)n);
	}
	close(one);
	close(two);
}

static int output(int (*cmd)(int, char **), const char *a0, const char *a1,
		  const char *path, const char *jobs)
{
	const char *const args[] = { a1, NULL };

	return output_v(cmd, a0, args, path, jobs);
}

static void same_with_jobs_v(int (*cmd)(int, char **), const char *a0,
			     const char *const *args, const char *path)
{
	int one = output_v(cmd, a0, args, path, "-j1");

	same_fds(one, output_v(cmd, a0, args, path, "-j2"));
}

static void same_with_jobs(int (*cmd)(int, char **), const char *a0,
			   const char *a1, const char *path)
{
	const char *const args[] = { a1, NULL };

	same_with_jobs_v(cmd, a0, args, path);
}

/* What hwt A0 A1 A2 prints is what it prints with @env set to 1: the
 * reference way (HWT_ONE_BLOCK: blocks one at a time, not in batches;
 * HWT_WALK_EACH: every instruction walked, not the kept walks;
 * HWT_NO_CACHE: every instruction decoded, no block cache carried from
 * process to process; HWT_NO_IMAGE_CACHE: each image maps its files and
 * reads their symbols itself). */
static void same_as_env_v(int (*cmd)(int, char **), const char *a0,
			  const char *a1, const char *a2, const char *path,
			  const char *env)
{
	int fast = output(cmd, a0, a1, path, a2), ref;

	setenv(env, "1", 1);
	ref = output(cmd, a0, a1, path, a2);
	unsetenv(env);
	same_fds(fast, ref);
}

static void same_as_env(int (*cmd)(int, char **), const char *a0,
			const char *a1, const char *path, const char *env)
{
	same_as_env_v(cmd, a0, a1, "-j1", path, env);
}

static void same_one_block(int (*cmd)(int, char **), const char *a0,
			   const char *a1, const char *path)
{
	same_as_env(cmd, a0, a1, path, "HWT_ONE_BLOCK");
}

/* coverage --lcov --drcov: the same counts and files with -j1 and -j2,
 * and with the blocks given out one by one (HWT_NO_TALLY), not tallied by
 * the decoder. */
static void same_lcov(const char *path)
{
	int f[6];
	char p[6][64];

	for (int i = 0; i < 6; i++) {
		f[i] = memfd_create("cover", 0);
		CHECK(f[i] >= 0);
		snprintf(p[i], sizeof(p[i]), "/proc/self/fd/%d", f[i]);
	}
	{
		const char *const a1[] = { "--lcov", p[0], "--drcov", p[1],
					   NULL };
		const char *const a2[] = { "--lcov", p[2], "--drcov", p[3],
					   NULL };
		const char *const a3[] = { "--lcov", p[4], "--drcov", p[5],
					   NULL };
		int one = output_v(cmd_coverage, "coverage", a1, path, "-j1");
		int ref;

		same_fds(one, output_v(cmd_coverage, "coverage", a2, path,
				       "-j2"));
		setenv("HWT_NO_TALLY", "1", 1);
		ref = output_v(cmd_coverage, "coverage", a3, path, "-j1");
		unsetenv("HWT_NO_TALLY");
		same_fds(ref, output_v(cmd_coverage, "coverage", a1, path,
				       "-j1"));
	}
	/* (same_fds() closes both: a duplicate of the -j1 files first.) */
	same_fds(dup(f[0]), f[2]);
	same_fds(dup(f[1]), f[3]);
	same_fds(f[0], f[4]);
	same_fds(f[1], f[5]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd;

	if (devnull < 0) {
		devnull = open("/dev/null", O_WRONLY);
		CHECK(devnull >= 0);
		CHECK(dup2(devnull, STDOUT_FILENO) >= 0);
		setenv("HWT_PIECE_SIZE", "4096", 1);
		setenv("HWT_SEGMENT_SIZE", "512", 1);
		setenv("HWT_CALLS_CHUNK", "64", 1);
		/* No build-id cache or debug files of this machine. */
		setenv("HOME", "/nonexistent", 1);
	}
	fd = memfd_create("perf.data", 0);
	CHECK(fd >= 0);
	CHECK(write(fd, data, size) == (ssize_t)size);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

	fuzz_quiet();

	run(cmd_info, "info", NULL, path);
	run(cmd_sideband, "sideband", NULL, path);
	run(cmd_dump, "dump", "--quiet", path);
	run(cmd_flow, "flow", "--stat", path);
	same_with_jobs(cmd_flow, "flow", "--blocks", path);
	same_with_jobs(cmd_calls, "calls", "-v", path);
	same_with_jobs(cmd_calls, "calls", "--stream", path);
	same_with_jobs(cmd_calls, "calls", "--time", path);
	same_with_jobs(cmd_calls, "calls", "--folded", path);
	same_with_jobs(cmd_calls, "calls", "--timeline", path);
	same_one_block(cmd_calls, "calls", "--time", path);
	same_with_jobs(cmd_flow, "flow", "--branches", path);
	same_one_block(cmd_flow, "flow", "--branches", path);
	same_one_block(cmd_flow, "flow", "--time", path);
	same_with_jobs(cmd_flow, "flow", "--time", path);
	same_as_env(cmd_flow, "flow", "--disasm", path, "HWT_WALK_EACH");
	same_with_jobs(cmd_flow, "flow", "--srcline", path);
	same_as_env(cmd_calls, "calls", "--time", path, "HWT_WALK_EACH");
	same_as_env(cmd_flow, "flow", "--branches", path, "HWT_WALK_EACH");
	run(cmd_last, "last", "--time", path);
	same_as_env(cmd_flow, "flow", "--branches", path, "HWT_NO_CACHE");
	same_as_env_v(cmd_last, "last", "--time", "-n64", path,
		      "HWT_NO_CACHE");
	same_as_env_v(cmd_last, "last", "--time", "-n64", path,
		      "HWT_LAST_WALK");
	same_as_env(cmd_calls, "calls", "-v", path, "HWT_NO_IMAGE_CACHE");
	same_lcov(path);
	/* Lines chosen (the seeds' threads, CPUs and times). */
	{
		static const char *const tid[] = { "--tid", "1235", NULL };
		static const char *const win[] = {
			"--by-stream", "--time-range",
			"0x1d2c3b4a8078,0x1d2c3b4aa788", NULL };
		static const char *const cpu[] = {
			"-C", "1", "--time-range", "13364.92104,", NULL };
		static const char *const last[] = {
			"-C", "0-1", "--pid", "1234", "--at", "0x1d2c3b4a9400",
			NULL };
		static const char *const sb[] = {
			"--tid", "1235", "--time-range", "13364.92,", NULL };
		int fd2 = output_v(cmd_last, "last", last, path, "-n4");

		close(fd2);
		close(output_v(cmd_sideband, "sideband", sb, path,
			       "--file-order"));
		same_with_jobs_v(cmd_flow, "flow", tid, path);
		same_with_jobs_v(cmd_flow, "flow", win, path);
		same_with_jobs_v(cmd_flow, "flow", cpu, path);
		same_with_jobs_v(cmd_calls, "calls", tid, path);
		same_with_jobs_v(cmd_calls, "calls", cpu, path);
		same_with_jobs(cmd_calls, "calls", "--perf-time", path);
		run(cmd_flow, "flow", "--perf-time", path);
	}

	fuzz_loud();
	close(fd);
	return 0;
}
