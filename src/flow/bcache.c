/* SPDX-License-Identifier: BSD-2-Clause */
#include "flow/bcache.h"

#include <stdlib.h>
#include <string.h>

#include <hwt/error.h>

enum {
	BC_INIT_SLOTS = 1u << 12,
	/* Beyond this many slots (48 MiB) we start over rather than grow. */
	BC_MAX_SLOTS = 1u << 20
};

static size_t bc_slot(const struct hwt_bcache *bc, uint64_t ip)
{
	return (size_t) (ip ^ (ip >> 21) ^ (ip >> 42)) & bc->mask;
}

int hwt_bcache_init(struct hwt_bcache *bc)
{
	bc->slots = calloc(BC_INIT_SLOTS, sizeof(*bc->slots));
	if (!bc->slots)
		return -HWT_ERR_NOMEM;

	bc->mask = BC_INIT_SLOTS - 1;
	bc->used = 0;
	bc->generation = 0;
	bc->secs = NULL;
	bc->nsecs = 0;
	bc->secs_cap = 0;
	return 0;
}

void hwt_bcache_fini(struct hwt_bcache *bc)
{
	free(bc->slots);
	bc->slots = NULL;
	free(bc->secs);
	bc->secs = NULL;
	bc->nsecs = 0;
	bc->secs_cap = 0;
	bc->mask = 0;
	bc->used = 0;
}

void hwt_bcache_clear(struct hwt_bcache *bc)
{
	if (!bc->used)
		return;

	memset(bc->slots, 0, (bc->mask + 1) * sizeof(*bc->slots));
	bc->used = 0;
}

static void bc_insert(struct hwt_bcache *bc, const struct hwt_bc_entry *entry)
{
	size_t i;

	i = bc_slot(bc, entry->ip);
	for (;;) {
		struct hwt_bc_entry *e = &bc->slots[i];

		if (!e->ninsn) {
			*e = *entry;
			bc->used += 1;
			return;
		}
		if (e->ip == entry->ip) {
			*e = *entry;
			return;
		}
		i = (i + 1) & bc->mask;
	}
}

static int bc_grow(struct hwt_bcache *bc)
{
	struct hwt_bc_entry *old, *slots;
	size_t n, i;

	n = (bc->mask + 1) * 2;
	if (n > BC_MAX_SLOTS) {
		hwt_bcache_clear(bc);
		return 0;
	}

	slots = calloc(n, sizeof(*slots));
	if (!slots) {
		/* Keep working with what we have: forget the entries. */
		hwt_bcache_clear(bc);
		return 0;
	}

	old = bc->slots;
	n = bc->mask + 1;
	bc->slots = slots;
	bc->mask = n * 2 - 1;
	bc->used = 0;
	for (i = 0; i < n; ++i)
		if (old[i].ninsn)
			bc_insert(bc, &old[i]);
	free(old);
	return 0;
}

int hwt_bcache_add(struct hwt_bcache *bc, const struct hwt_bc_entry *entry)
{
	if (!entry->ninsn)
		return -HWT_ERR_INTERNAL;

	/* Keep the load at most 1/2 so probes stay short. */
	if ((bc->used + 1) * 2 > bc->mask + 1) {
		int err = bc_grow(bc);

		if (err < 0)
			return err;
	}

	bc_insert(bc, entry);
	return 0;
}

int hwt_bcache_sec(struct hwt_bcache *bc, uint64_t end, uintptr_t delta)
{
	size_t i;

	/* Most recent first: a block's instructions share their section. */
	for (i = bc->nsecs; i--;)
		if (bc->secs[i].end == end && bc->secs[i].delta == delta)
			return (int) i;

	if (bc->nsecs == bc->secs_cap) {
		struct hwt_bc_sec *secs;
		size_t cap = bc->secs_cap ? bc->secs_cap * 2 : 8;

		if (cap > (size_t) UINT16_MAX + 1)
			cap = (size_t) UINT16_MAX + 1;
		if (bc->nsecs == cap) {
			/* Entries refer to the indices: forget them all. */
			hwt_bcache_clear(bc);
			bc->nsecs = 0;
		} else {
			secs = realloc(bc->secs, cap * sizeof(*secs));
			if (!secs)
				return -HWT_ERR_NOMEM;
			bc->secs = secs;
			bc->secs_cap = cap;
		}
	}

	bc->secs[bc->nsecs].end = end;
	bc->secs[bc->nsecs].delta = delta;
	return (int) bc->nsecs++;
}
