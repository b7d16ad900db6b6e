/* SPDX-License-Identifier: BSD-2-Clause */
/* hwt record: between the command (record.c) and running the source
 * (record_run.c). */
#ifndef HWT_CLI_RECORD_H
#define HWT_CLI_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <hwt/perfdata.h>

/* The directory holding vgpt-amd64-linux (VALGRIND_LIB): $HWT_VGPT_LIB,
 * else next to the hwt binary (build tree or libexec). 0 or -1. */
int rec_find_vgpt(char *dir, size_t len);

/* @name as execvp would find it: 0, 126 (not executable), 127 (none). */
int rec_find_program(const char *name, char *path, size_t len);

struct rec_run {
	const char *vglib;	/* VALGRIND_LIB */
	const char *dir;	/* the work directory (logs) */
	const char *prefix;	/* --vgpt-out */
	const char *program;	/* resolved path */
	int argc;		/* the command line, argv[0] the name given */
	char **argv;
	uint64_t ring;		/* --vgpt-ring, 0: off */
	const char *filter;	/* --vgpt-filter, or NULL */
	int truth;		/* --vgpt-truth=yes */
	int one_cpu;		/* --vgpt-drain-thread=no */
};

/* Run the program under vgpt: its pid (Valgrind runs it in its own
 * process) and wait status. 0 or -1. */
int rec_run(const struct rec_run *r, pid_t *pid, int *status);

#define REC_MAX_EXITS 64
#define REC_MAX_ERRORS 8

/* What Valgrind's logs said: fatal signals per process, vgpt errors. */
struct rec_logs {
	struct hwt_pd_exit exits[REC_MAX_EXITS];
	size_t nexits;
	char errors[REC_MAX_ERRORS][256];
	size_t nerrors;
	int printed;		/* something was copied to stderr */
};

/* Read (and copy to stderr) DIR/vg.PID.log. */
void rec_read_logs(const char *dir, struct rec_logs *lg);

#endif
