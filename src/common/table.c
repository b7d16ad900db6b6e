/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdlib.h>
#include <sys/mman.h>

#include "common/table.h"

/*
 * What is mapped for a table of @bytes: from 2 MiB on, whole huge pages,
 * so that the kernel places the mapping on their boundaries and backs
 * all of it (a 3 MiB mapping got one huge page and 1 MiB of small ones).
 */
static size_t table_len(size_t bytes)
{
	const size_t huge = (size_t)2 << 20;

	return bytes < huge ? bytes : (bytes + huge - 1) & ~(huge - 1);
}

void *hwt_table_new(size_t bytes)
{
	size_t len = table_len(bytes);
	void *p;

	if (bytes < HWT_TABLE_MAP)
		return calloc(1, bytes ? bytes : 1);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	(void)madvise(p, len, MADV_HUGEPAGE);	/* a hint */
#endif
	hwt_table_touch(p, bytes);
	return p;
}

void *hwt_table_grow(void *table, size_t bytes)
{
	size_t len = table_len(bytes), nlen = table_len(2 * bytes);
	void *p;

	if (bytes < HWT_TABLE_MAP)
		return NULL;
#ifdef __SANITIZE_THREAD__
	/* ThreadSanitizer does not follow mremap(): it takes the pages at
	 * their new place for another thread's that was there before. */
	return NULL;
#endif
	p = mremap(table, len, nlen, MREMAP_MAYMOVE);
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	(void)madvise(p, nlen, MADV_HUGEPAGE);	/* a hint */
#endif
	hwt_table_touch((uint8_t *)p + bytes, bytes);
	return p;
}

void hwt_table_free(void *table, size_t bytes)
{
	if (!table)
		return;
	if (bytes < HWT_TABLE_MAP)
		free(table);
	else
		munmap(table, table_len(bytes));
}
