/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Symbol lookup: one array sorted by address, one symbol per address, and
 * a running maximum of the ends so that nested or unsized symbols are
 * found without scanning far back.
 */
#include <stdlib.h>
#include <string.h>

#include "image/image_int.h"

static int sym_cmp(const void *a, const void *b)
{
	const struct img_sym *x = a, *y = b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	/* Deterministic among equals, whatever the input order. */
	return strcmp(x->name, y->name);
}

/* @s sorted and one symbol an address: each one's maxend. */
static void sym_maxends(struct img_sym *s, size_t n)
{
	uint64_t maxend = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i].end > maxend)
			maxend = s[i].end;
		s[i].maxend = maxend;
	}
}

/* @s sorted: the best-ranked symbol at each address kept (the first), and
 * maxends set. Returns the new count. */
static size_t sym_unique(struct img_sym *s, size_t nsyms)
{
	size_t i, n = 0;

	for (i = 0; i < nsyms; i++) {
		if (n && s[n - 1].begin == s[i].begin)
			continue;
		s[n++] = s[i];
	}
	sym_maxends(s, n);
	return n;
}

size_t img_sym_sort_unique(struct img_sym *s, size_t nsyms)
{
	if (!nsyms)
		return 0;	/* @s may be NULL */
	qsort(s, nsyms, sizeof(*s), sym_cmp);
	return sym_unique(s, nsyms);
}

void img_sym_drop_range(struct hwt_image *image, uint64_t begin,
			uint64_t end)
{
	size_t i, n = 0;

	for (i = 0; i < image->nsyms; i++)
		if (image->syms[i].begin < begin || image->syms[i].begin >= end)
			image->syms[n++] = image->syms[i];
	if (n != image->nsyms) {
		/* (Still sorted, one an address.) */
		image->nsyms = n;
		sym_maxends(image->syms, n);
	}
}

int img_sym_add(struct hwt_image *image, const struct img_sym *syms,
		size_t n)
{
	struct img_sym *s;
	size_t i, j, k;
	int err;

	if (!n)
		return 0;
	err = hwt_grow((void **)&image->syms, &image->capsyms,
			  image->nsyms + n, sizeof(*image->syms));
	if (err < 0)
		return err;
	/*
	 * Merged from the back into place, not sorted again: each process
	 * of a perf.data maps its libraries one by one, and sorting all of
	 * the image's symbols again at each was a tenth of hwt last's
	 * instructions on a shell's recording. Of equals, the image's come
	 * first, as a stable sort of the two one after the other has them.
	 */
	s = image->syms;
	i = image->nsyms;
	j = n;
	for (k = i + j; j;) {
		if (i && sym_cmp(&s[i - 1], &syms[j - 1]) > 0)
			s[--k] = s[--i];
		else
			s[--k] = syms[--j];
	}
	image->nsyms = sym_unique(s, image->nsyms + n);
	return 0;
}

int hwt_image_symbol_range(const struct hwt_image *image, uint64_t vaddr,
			   const char **name, uint64_t *offset,
			   uint64_t *start, uint64_t *end)
{
	const struct img_sym *s;
	uint64_t below = 0;
	size_t lo, hi;

	if (!image || !name || !offset || !start || !end)
		return -HWT_ERR_INVALID;

	/* hi: the number of symbols starting at or below @vaddr. */
	lo = 0;
	hi = image->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (image->syms[mid].begin <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* The answer holds until a symbol starts: the one that contains
	 * @vaddr and starts last wins until it ends. Below @vaddr it holds
	 * down to its start, or down to the end of a symbol after it that
	 * ends first (@below: such a symbol wins where it is), or with none,
	 * down to the end of every symbol below. */
	*end = hi < image->nsyms ? image->syms[hi].begin : UINT64_MAX;
	*name = NULL;
	*offset = 0;
	while (hi--) {
		s = &image->syms[hi];
		if (s->maxend <= vaddr) {
			if (s->maxend > below)
				below = s->maxend;
			break;
		}
		if (vaddr < s->end) {
			*name = s->name;
			*offset = vaddr - s->begin;
			*start = s->begin > below ? s->begin : below;
			if (s->end < *end)
				*end = s->end;
			return 0;
		}
		if (s->end > below)
			below = s->end;
	}
	*start = below;
	return -HWT_ERR_NOMAP;
}

int hwt_image_symbol_extent(const struct hwt_image *image, uint64_t vaddr,
			    const char **name, uint64_t *offset,
			    uint64_t *end)
{
	uint64_t start;

	return hwt_image_symbol_range(image, vaddr, name, offset, &start,
				      end);
}

int hwt_image_symbol(const struct hwt_image *image, uint64_t vaddr,
		     const char **name, uint64_t *offset)
{
	const char *n;
	uint64_t off, end;
	int err;

	if (!name || !offset)
		return -HWT_ERR_INVALID;
	err = hwt_image_symbol_extent(image, vaddr, &n, &off, &end);
	if (err < 0)
		return err;
	*name = n;
	*offset = off;
	return 0;
}
