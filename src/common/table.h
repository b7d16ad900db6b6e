/* SPDX-License-Identifier: BSD-2-Clause */
/* Internal to libhwt: tables read at random, big enough to span pages. */
#ifndef HWT_COMMON_TABLE_H
#define HWT_COMMON_TABLE_H

#include <stddef.h>
#include <stdint.h>

/*
 * A zeroed table of @bytes, NULL if there is no memory. From
 * HWT_TABLE_MAP bytes on (where malloc would map it too) it is mapped
 * here with huge pages asked for (transparent huge pages in "madvise"
 * mode, Debian's default), and written first (hwt_table_touch()). Tables
 * looked up at random by a hash take a TLB miss nearly every lookup on
 * 4 KiB pages, and a page walk under virtualisation costs what a cache
 * miss does; thousands of first-touch page faults besides.
 */
enum { HWT_TABLE_MAP = 1u << 17 };

void *hwt_table_new(size_t bytes);
/* @bytes as given to hwt_table_new(). */
void hwt_table_free(void *table, size_t bytes);

/*
 * @table of @bytes (HWT_TABLE_MAP or more) made twice as big where it is
 * mapped, or moved with its pages (mremap(), no copy): the old bytes
 * first, the new half zeroed and written first. NULL if it cannot be
 * (the table stays as it was); else hwt_table_free() it with 2 * @bytes.
 */
void *hwt_table_grow(void *table, size_t bytes);

/*
 * Write zeroed memory first, a page at a time, before it is read: a
 * probe reads a slot before it writes it, and a fresh page read first is
 * the shared zero page, whose write fault then flushes the mapping from
 * every CPU the process runs on. With hwt flow -j2 on a VM those
 * cross-CPU flushes were 5% of the time (synthetic trace, -j2: 175 ms ->
 * 159 ms of CPU).
 */
static inline void hwt_table_touch(void *p, size_t bytes)
{
	for (size_t off = 0; off < bytes; off += 4096)
		((volatile uint8_t *)p)[off] = 0;
}

#endif
