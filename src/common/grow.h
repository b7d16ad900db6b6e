/* SPDX-License-Identifier: BSD-2-Clause */
/* Internal to libhwt and its command: growing arrays, owned strings. */
#ifndef HWT_COMMON_GROW_H
#define HWT_COMMON_GROW_H

#include <stddef.h>

/*
 * Make *@arr (of *@cap elements of @elem bytes) hold at least @need,
 * doubling: 0, or -HWT_ERR_NOMEM (also when the size would overflow).
 */
int hwt_grow_(void **arr, size_t *cap, size_t need, size_t elem);

/* (The test inline: callers grow by one, once a record, and the call
 * was 1% of hwt calls' instructions.) */
static inline int hwt_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	return hwt_grow_(arr, cap, need, elem);
}

/* *@to (freed) becomes a copy of @s (NULL: none): 0, or -HWT_ERR_NOMEM
 * (*@to as it was). */
int hwt_strset(char **to, const char *s);

#endif
