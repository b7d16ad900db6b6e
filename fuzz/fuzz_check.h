/* SPDX-License-Identifier: BSD-2-Clause */
/* The fuzz targets' check: a broken promise aborts, naming the line. */
#ifndef HWT_FUZZ_CHECK_H
#define HWT_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

/*
 * The CLI targets quiet the commands' messages (the point of bad input,
 * not news) with fuzz_quiet() ... fuzz_loud(): the stdio stream stderr
 * goes to /dev/null, only the stream. fd 2 stays, so ASan's report and
 * libFuzzer's (its own stream) are seen, and a failed CHECK brings the
 * stream back first. (With fd 2 sent to /dev/null, both were lost: only
 * a crash file was left.)
 */
static FILE *fuzz_loud_stream;

static inline void fuzz_quiet(void)
{
	static FILE *quiet;

	if (!quiet)
		quiet = fopen("/dev/null", "w");
	if (!quiet)
		abort();
	fflush(stderr);
	fuzz_loud_stream = stderr;
	stderr = quiet;
}

static inline void fuzz_loud(void)
{
	if (!fuzz_loud_stream)
		return;
	fflush(stderr);
	stderr = fuzz_loud_stream;
	fuzz_loud_stream = NULL;
}

#define CHECK(cond)                                                         \
	do {                                                                \
		if (!(cond)) {                                              \
			fuzz_loud();                                        \
			fprintf(stderr, "%s:%d: check failed: %s\n",        \
				__FILE__, __LINE__, #cond);                 \
			abort();                                            \
		}                                                           \
	} while (0)

#endif
