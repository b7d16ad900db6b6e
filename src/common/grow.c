/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/error.h>

#include "common/grow.h"

int hwt_grow_(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *p;

	ncap = *cap ? *cap : 8;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / elem)
			return -HWT_ERR_NOMEM;
		ncap *= 2;
	}
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -HWT_ERR_NOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

int hwt_strset(char **to, const char *s)
{
	char *copy = NULL;

	if (s && !(copy = strdup(s)))
		return -HWT_ERR_NOMEM;
	free(*to);
	*to = copy;
	return 0;
}
