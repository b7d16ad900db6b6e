/* SPDX-License-Identifier: BSD-2-Clause */
/* The fuzz targets' check: a broken promise aborts, naming the line. */
#ifndef HWT_FUZZ_CHECK_H
#define HWT_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                         \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "%s:%d: check failed: %s\n",        \
				__FILE__, __LINE__, #cond);                 \
			abort();                                            \
		}                                                           \
	} while (0)

#endif
