/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for libipt's perf_event sideband in hwt ptxed and hwt
 * ptdump (src/cli/ipt_sb.c; fuzz_perfdata covers the raw reader below
 * it). The input is a sideband file; it is given, in-process, to
 *
 *   hwt ptxed --pevent:primary INPUT (and again as a secondary channel)
 *             with every --sb:* output, --event:tick and a kernel start,
 *             over a fixed trace whose time moves on between branches;
 *   hwt ptdump --pevent INPUT --sb:verbose over the same trace,
 *
 * so that its records are printed and applied: contexts made, forked,
 * exec'd and switched, files mapped (below a scratch sysroot that holds
 * code.bin), the decoder's image rebuilt. The sample type (which decides
 * where each record's time is) is one of three, or per event
 * (--pevent:sample-config), picked by the input's size in 8-byte words
 * (fuzz/corpus/cli_sideband/hand-*.sb are padded to theirs). Nothing may
 * crash, hang or leak; the output goes to /dev/null.
 */
#include <fcntl.h>
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
static char dir[64], code[96], trace[96], sysroot[80];

static void write_file(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	CHECK(fd >= 0);
	CHECK(write(fd, p, n) == (ssize_t)n);
	close(fd);
}

static void cleanup(void)
{
	unlink(code);
	unlink(trace);
	rmdir(dir);
}

/* jmp rax at 0x1000, 0x2000 and in the kernel; a trace that loops
 * through them with a TSC before each TIP. */
static void setup(void)
{
	static const uint8_t jmp[0x10] = { 0xff, 0xe0 };
	uint8_t pt[512];
	size_t n = 0;

	snprintf(dir, sizeof(dir), "/tmp/hwt-fuzz-sb.XXXXXX");
	CHECK(mkdtemp(dir));
	snprintf(code, sizeof(code), "%s/code.bin", dir);
	snprintf(trace, sizeof(trace), "%s/trace.pt", dir);
	snprintf(sysroot, sizeof(sysroot), "%s/", dir);
	write_file(code, jmp, sizeof(jmp));
	atexit(cleanup);

	for (int i = 0; i < 8; i++) {		/* PSB */
		pt[n++] = 0x02;
		pt[n++] = 0x82;
	}
	pt[n++] = 0x99;				/* MODE.Exec 64-bit */
	pt[n++] = 0x01;
	for (uint64_t t = 1; t <= 12; t++) {
		static const uint64_t to[3] = { 0x1000, 0x2000,
						0xffffffff80000000ull };
		uint64_t ip = to[t % 3];

		pt[n++] = 0x19;			/* TSC */
		for (int b = 0; b < 7; b++)
			pt[n++] = (uint8_t)((t * 3) >> (8 * b));
		if (t == 1) {
			pt[n++] = 0x7d;		/* FUP, sext48 IP */
			for (int b = 0; b < 6; b++)
				pt[n++] = (uint8_t)(0x1000ull >> (8 * b));
			pt[n++] = 0x02;		/* PSBEND */
			pt[n++] = 0x23;
			continue;
		}
		pt[n++] = 0x6d;			/* TIP, sext48 IP */
		for (int b = 0; b < 6; b++)
			pt[n++] = (uint8_t)(ip >> (8 * b));
	}
	pt[n++] = 0x01;				/* TIP.PGD, suppressed */
	write_file(trace, pt, n);

	devnull = open("/dev/null", O_WRONLY);
	CHECK(devnull >= 0);
	CHECK(dup2(devnull, STDOUT_FILENO) >= 0);
}

static void run(int (*cmd)(int, char **), char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	optind = 1;
	(void)cmd(argc, argv);
	fflush(stdout);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const types[4] = { "0x4", "0x6", "0x102c6",
					      "0x10006" };
	char sb[64], raw[128];
	/* By the number of 8-byte words: records come in those. */
	unsigned sel = (unsigned)((size >> 3) % 4);
	const char *st = types[sel];
	/* The fourth: per event, as perf-get-opts.bash writes it. */
	char *cfg = sel == 3 ? "--pevent:sample-config" : "--sb:offset";
	char *cfg0 = sel == 3 ? "0:0x10006" : "--sb:offset";
	char *cfg9 = sel == 3 ? "9:0x100c6" : "--sb:offset";
	int fd;

	if (devnull < 0)
		setup();
	fd = memfd_create("sideband", 0);
	CHECK(fd >= 0);
	CHECK(write(fd, data, size) == (ssize_t)size);
	snprintf(sb, sizeof(sb), "/proc/self/fd/%d", fd);
	snprintf(raw, sizeof(raw), "%s:0x1000", code);

	fuzz_quiet();

	{
		char *argv[] = {
			"ptxed", "--raw", raw, "--event:tick", "--sb:verbose",
			"--sb:offset", "--sb:time", "--sb:filename",
			"--sb:switch", "--sb:warn", "--pevent:sample-type",
			(char *)st, cfg, cfg0, cfg, cfg9,
			"--pevent:kernel-start",
			"0xffffffff80000000", "--pevent:sysroot", sysroot,
			"--pevent:vdso-x64", code, "--pevent:kcore", code,
			"--pevent:primary", sb, "--pevent:tsc-offset", "2",
			"--pevent:secondary", sb, "--pt", trace, NULL
		};
		run(cmd_ptxed, argv);
	}
	{
		char *argv[] = {
			"ptdump", "--sb:verbose", "--sb:time", "--sb:warn",
			"--pevent:sample-type", (char *)st, cfg, cfg0, cfg,
			cfg9, "--pevent", sb,
			trace, NULL
		};
		run(cmd_ptdump, argv);
	}

	fuzz_loud();
	close(fd);
	return 0;
}
