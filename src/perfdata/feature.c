/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Feature sections (file mode) and HEADER_FEATURE records (pipe mode):
 * both carry the same bytes. Strings are perf's: a u32 length, then that
 * many bytes holding a NUL-terminated string padded with zeros.
 */
#include <stdlib.h>
#include <string.h>

#include "perfdata/reader_int.h"

struct cur {
	struct hwt_pd_reader *r;
	const uint8_t *p;
	size_t n, pos;
	uint64_t off;
	unsigned int feat;
};

static int cur_short(struct cur *c, size_t want)
{
	return pdr_fail(c->r, HWT_ERR_BAD_FORMAT, c->off + c->pos,
			"feature %s: %zu bytes needed, %zu left in the section",
			hwt_pd_feature_name(c->feat), want, c->n - c->pos);
}

static int cur_u32(struct cur *c, uint32_t *v)
{
	if (c->n - c->pos < 4)
		return cur_short(c, 4);
	*v = pdr_u32(c->p + c->pos);
	c->pos += 4;
	return 0;
}

static int cur_u64(struct cur *c, uint64_t *v)
{
	if (c->n - c->pos < 8)
		return cur_short(c, 8);
	*v = pdr_u64(c->p + c->pos);
	c->pos += 8;
	return 0;
}

static int cur_str(struct cur *c, char **out)
{
	uint64_t at = c->off + c->pos;
	const uint8_t *s, *nul;
	uint32_t len;
	int err;

	*out = NULL;
	err = cur_u32(c, &len);
	if (err)
		return err;
	if (len > c->n - c->pos)
		return pdr_fail(c->r, HWT_ERR_BAD_FORMAT, at,
				"feature %s: string of %u bytes runs past the section (%zu left)",
				hwt_pd_feature_name(c->feat), len, c->n - c->pos);
	s = c->p + c->pos;
	nul = memchr(s, 0, len);
	if (!nul)
		return pdr_fail(c->r, HWT_ERR_BAD_FORMAT, at,
				"feature %s: string is not NUL-terminated within its %u bytes",
				hwt_pd_feature_name(c->feat), len);
	*out = strdup((const char *)s);
	if (!*out)
		return pdr_fail(c->r, HWT_ERR_NOMEM, at, "out of memory");
	c->pos += len;
	return 0;
}

static int feat_string(struct cur *c, const char **slot)
{
	char *s;
	int err = cur_str(c, &s);

	if (err)
		return err;
	free((void *)*slot);
	*slot = s;
	return 0;
}

static void free_cmdline(struct hwt_pd_info *info)
{
	for (size_t i = 0; i < info->ncmdline; i++)
		free((void *)info->cmdline[i]);
	free((void *)info->cmdline);
	info->cmdline = NULL;
	info->ncmdline = 0;
}

static int feat_cmdline(struct cur *c)
{
	struct hwt_pd_info *info = &c->r->info;
	uint32_t nr;
	char **argv;
	int err;

	err = cur_u32(c, &nr);
	if (err)
		return err;
	/* each string takes at least its u32 length */
	if (nr > (c->n - c->pos) / 4)
		return pdr_fail(c->r, HWT_ERR_BAD_FORMAT, c->off + c->pos - 4,
				"feature CMDLINE: %u arguments cannot fit in %zu bytes",
				nr, c->n - c->pos);
	free_cmdline(info);
	argv = calloc(nr ? nr : 1, sizeof(*argv));
	if (!argv)
		return pdr_fail(c->r, HWT_ERR_NOMEM, c->off, "out of memory");
	info->cmdline = (const char *const *)argv;
	for (uint32_t i = 0; i < nr; i++) {
		err = cur_str(c, &argv[i]);
		if (err)
			return err;
		info->ncmdline = i + 1;
	}
	return 0;
}

int pdr_build_id(struct hwt_pd_reader *r, const uint8_t *p, size_t n,
		 uint64_t off)
{
	struct hwt_pd_build_id *b;
	const uint8_t *nul;
	uint16_t misc;
	char *name;

	/* header, pid, 20 bytes of id, size, 3 reserved, then the filename */
	if (n < 36)
		return pdr_fail(r, HWT_ERR_BAD_FORMAT, off,
				"build id record of %zu bytes, at least 36 needed", n);
	nul = memchr(p + 36, 0, n - 36);
	if (!nul)
		return pdr_fail(r, HWT_ERR_BAD_FORMAT, off + 36,
				"build id filename is not NUL-terminated within the record");
	misc = pdr_u16(p + 4);
	if ((misc & PERF_RECORD_MISC_EXT_RESERVED) && p[32] > 20)
		return pdr_fail(r, HWT_ERR_BAD_FORMAT, off + 32,
				"build id size %u is larger than 20", p[32]);
	if (r->info.nbuild_ids == r->capbids) {
		size_t cap = r->capbids ? 2 * r->capbids : 16;
		struct hwt_pd_build_id *nb = realloc(r->bids, cap * sizeof(*nb));

		if (!nb)
			return pdr_fail(r, HWT_ERR_NOMEM, off, "out of memory");
		r->bids = nb;
		r->capbids = cap;
		r->info.build_ids = nb;
	}
	name = strdup((const char *)p + 36);
	if (!name)
		return pdr_fail(r, HWT_ERR_NOMEM, off, "out of memory");
	b = &r->bids[r->info.nbuild_ids++];
	memset(b, 0, sizeof(*b));
	b->pid = (int32_t)pdr_u32(p + 8);
	memcpy(b->id, p + 12, 20);
	/* PERF_RECORD_MISC_BUILD_ID_SIZE shares the bit: without it, SHA-1 */
	b->size = (misc & PERF_RECORD_MISC_EXT_RESERVED) ? p[32] : 20;
	b->filename = name;
	return 0;
}

static int feat_build_id(struct cur *c)
{
	while (c->pos < c->n) {
		size_t left = c->n - c->pos;
		uint16_t size;
		int err;

		if (left < 8)
			return cur_short(c, 8);
		size = pdr_u16(c->p + c->pos + 6);
		if (size < 8 || size > left)
			return pdr_fail(c->r, HWT_ERR_BAD_FORMAT, c->off + c->pos,
					"build id record size %u (%zu bytes left in the section)",
					size, left);
		err = pdr_build_id(c->r, c->p + c->pos, size, c->off + c->pos);
		if (err)
			return err;
		c->pos += size;
	}
	return 0;
}

/* hwt's own: u32 count, u32 entry size, entries (newer ones longer). */
static int feat_exit(struct cur *c)
{
	struct hwt_pd_reader *r = c->r;
	uint32_t nr, size;
	int err;

	err = cur_u32(c, &nr);
	if (!err)
		err = cur_u32(c, &size);
	if (err)
		return err;
	if (size < sizeof(struct hwt_pd_exit))
		return pdr_fail(r, HWT_ERR_BAD_FORMAT, c->off + 4,
				"HWT_EXIT entries of %u bytes, at least %zu needed",
				size, sizeof(struct hwt_pd_exit));
	if (nr > (c->n - c->pos) / size)
		return pdr_fail(r, HWT_ERR_BAD_FORMAT, c->off,
				"HWT_EXIT: %u entries of %u bytes do not fit in %zu bytes",
				nr, size, c->n - c->pos);
	free(r->exits);
	r->exits = calloc(nr ? nr : 1, sizeof(*r->exits));
	if (!r->exits)
		return pdr_fail(r, HWT_ERR_NOMEM, c->off, "out of memory");
	for (uint32_t i = 0; i < nr; i++, c->pos += size)
		memcpy(&r->exits[i], c->p + c->pos, sizeof(*r->exits));
	r->info.exits = r->exits;
	r->info.nexits = nr;
	return 0;
}

static int feat_event_desc(struct cur *c)
{
	struct hwt_pd_reader *r = c->r;
	uint32_t nr, attr_size, nids = 0;
	int err;

	err = cur_u32(c, &nr);
	if (!err)
		err = cur_u32(c, &attr_size);
	if (err)
		return err;
	/* every event takes its attr, a u32 id count and a string length */
	if (nr > (c->n - c->pos) / ((uint64_t)attr_size + 8))
		return pdr_fail(r, HWT_ERR_BAD_FORMAT, c->off,
				"feature EVENT_DESC: %u events of %u-byte attrs cannot fit in %zu bytes",
				nr, attr_size, c->n);
	for (uint32_t i = 0; i < nr; i++) {
		char *name;

		if (attr_size > c->n - c->pos)
			return cur_short(c, attr_size);
		c->pos += attr_size;
		err = cur_u32(c, &nids);
		if (!err)
			err = cur_str(c, &name);
		if (err)
			return err;
		if (nids > (c->n - c->pos) / 8) {
			free(name);
			return pdr_fail(r, HWT_ERR_BAD_FORMAT, c->off + c->pos,
					"feature EVENT_DESC: event %u has %u ids, %zu bytes left",
					i, nids, c->n - c->pos);
		}
		c->pos += (size_t)nids * 8;
		/* perf pairs descriptions with attrs by position */
		if (i < r->nattrs) {
			free((void *)r->attrs[i]->name);
			r->attrs[i]->name = name;
		} else {
			free(name);
		}
	}
	return 0;
}

int pdr_feature_known(unsigned int feat)
{
	switch (feat) {
	case HWT_PD_FEAT_BUILD_ID:
	case HWT_PD_FEAT_HOSTNAME:
	case HWT_PD_FEAT_OSRELEASE:
	case HWT_PD_FEAT_VERSION:
	case HWT_PD_FEAT_ARCH:
	case HWT_PD_FEAT_NRCPUS:
	case HWT_PD_FEAT_CPUDESC:
	case HWT_PD_FEAT_CPUID:
	case HWT_PD_FEAT_TOTAL_MEM:
	case HWT_PD_FEAT_CMDLINE:
	case HWT_PD_FEAT_EVENT_DESC:
	case HWT_PD_FEAT_CLOCK_DATA:
	case HWT_PD_FEAT_HWT_EXIT:
		return 1;
	default:
		return 0;
	}
}

int pdr_feature(struct hwt_pd_reader *r, unsigned int feat, const uint8_t *p,
		size_t n, uint64_t off)
{
	struct cur c = { .r = r, .p = p, .n = n, .off = off, .feat = feat };
	struct hwt_pd_info *info = &r->info;
	uint32_t a, b;
	int err = 0;

	if (feat < 256)
		info->features[feat / 64] |= 1ull << (feat % 64);
	switch (feat) {
	case HWT_PD_FEAT_HOSTNAME:
		return feat_string(&c, &info->hostname);
	case HWT_PD_FEAT_OSRELEASE:
		return feat_string(&c, &info->osrelease);
	case HWT_PD_FEAT_VERSION:
		return feat_string(&c, &info->version);
	case HWT_PD_FEAT_ARCH:
		return feat_string(&c, &info->arch);
	case HWT_PD_FEAT_CPUDESC:
		return feat_string(&c, &info->cpudesc);
	case HWT_PD_FEAT_CPUID:
		return feat_string(&c, &info->cpuid);
	case HWT_PD_FEAT_NRCPUS:
		err = cur_u32(&c, &a);
		if (!err)
			err = cur_u32(&c, &b);
		if (!err) {
			info->nr_cpus_avail = a;
			info->nr_cpus_online = b;
		}
		return err;
	case HWT_PD_FEAT_TOTAL_MEM:
		return cur_u64(&c, &info->total_mem);
	case HWT_PD_FEAT_CMDLINE:
		return feat_cmdline(&c);
	case HWT_PD_FEAT_BUILD_ID:
		return feat_build_id(&c);
	case HWT_PD_FEAT_EVENT_DESC:
		return feat_event_desc(&c);
	case HWT_PD_FEAT_HWT_EXIT:
		return feat_exit(&c);
	case HWT_PD_FEAT_CLOCK_DATA: {
		uint32_t version, clockid;
		uint64_t tod, ns;

		err = cur_u32(&c, &version);
		if (!err)
			err = cur_u32(&c, &clockid);
		if (!err)
			err = cur_u64(&c, &tod);
		if (!err)
			err = cur_u64(&c, &ns);
		if (!err) {
			info->clockid = clockid;
			info->clock_tod_ns = tod;
			info->clock_ns = ns;
		}
		return err;
	}
	default:
		return 0;
	}
}
