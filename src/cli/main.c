/* SPDX-License-Identifier: BSD-2-Clause */
/* hwt: git-style dispatcher for the subcommands. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

#define HWT_VERSION "0.1.0"

struct subcommand {
	const char *name;
	int (*run)(int argc, char **argv);
	void (*help)(void);
	const char *summary;
};

static const struct subcommand subcommands[] = {
	{ "record", cmd_record, help_record,
	  "run a program with its control flow traced, into perf.data" },
	{ "dump", cmd_dump, help_dump,
	  "print the Intel PT packets of a trace, one per line" },
	{ "ptdump", cmd_ptdump, help_ptdump,
	  "libipt ptdump drop-in: ptdump's options and output format" },
	{ "flow", cmd_flow, help_flow,
	  "the executed instructions, blocks or branches of a trace" },
	{ "calls", cmd_calls, help_calls,
	  "function-call history, indented by call depth" },
	{ "last", cmd_last, help_last,
	  "how did I get here: the last branches and calls of each thread" },
	{ "coverage", cmd_coverage, help_coverage,
	  "AFL-style edge bitmap; line (lcov) and code (drcov) coverage" },
	{ "ptxed", cmd_ptxed, help_ptxed,
	  "libipt ptxed drop-in: ptxed's options and output format" },
	{ "info", cmd_info, help_info,
	  "what a perf.data file holds: events, streams, threads, lost data" },
	{ "sideband", cmd_sideband, help_sideband,
	  "the sideband records of a perf.data file in time order" },
};

#define NSUB (sizeof(subcommands) / sizeof(subcommands[0]))

static const struct subcommand *find(const char *name)
{
	for (size_t i = 0; i < NSUB; i++)
		if (!strcmp(subcommands[i].name, name))
			return &subcommands[i];
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: hwt <command> [<args>]\n\ncommands:\n");
	for (size_t i = 0; i < NSUB; i++)
		fprintf(f, "  %-8s %s\n", subcommands[i].name,
			subcommands[i].summary);
	fprintf(f, "  %-8s %s\n", "help", "show help for a command");
	fprintf(f, "\n'hwt help <command>' or 'hwt <command> --help' "
		"for details.\n");
}

static int help(int argc, char **argv)
{
	const struct subcommand *sc;

	if (argc < 2) {
		usage(stdout);
		return 0;
	}
	sc = find(argv[1]);
	if (!sc) {
		fprintf(stderr, "hwt: no such command '%s'; see 'hwt help'\n",
			argv[1]);
		return 2;
	}
	sc->help();
	return 0;
}

int main(int argc, char **argv)
{
	const struct subcommand *sc;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "-h"))
		return help(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("hwt %s\n", HWT_VERSION);
		return 0;
	}
	sc = find(argv[1]);
	if (!sc) {
		fprintf(stderr, "hwt: '%s' is not a hwt command; see 'hwt help'\n",
			argv[1]);
		return 2;
	}
	return sc->run(argc - 1, argv + 1);
}
