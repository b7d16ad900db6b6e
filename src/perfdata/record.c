/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Record bodies: which attr a record belongs to, its sample id (the
 * sample_id_all trailer, or the leading fields of a sample), and the
 * typed fields of struct hwt_pd_record. Header records (attrs, features,
 * build ids, id index) also update the reader as they pass.
 */
#include <stdlib.h>
#include <string.h>

#include "perfdata/reader_int.h"

#define SID_TYPES (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
		   PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |               \
		   PERF_SAMPLE_IDENTIFIER)

/* The bytes after the header and before any trailer. */
struct body {
	const uint8_t *p;
	size_t n;
};

static int too_short(struct hwt_pd_reader *r, const struct hwt_pd_record *rec,
		     size_t have, size_t want)
{
	return pdr_fail(r, HWT_ERR_BAD_FORMAT, rec->file_offset,
			"%s of %u bytes: %zu bytes of fields, %zu needed",
			hwt_pd_record_name(rec->type), rec->size, have, want);
}

/* A string from @at to a NUL before the end of the body. */
static int body_str(struct hwt_pd_reader *r, const struct hwt_pd_record *rec,
		    const struct body *b, size_t at, size_t max,
		    const char **out)
{
	size_t len = b->n > at ? b->n - at : 0;

	if (len > max)
		len = max;
	if (!len || !memchr(b->p + at, 0, len))
		return pdr_fail(r, HWT_ERR_BAD_FORMAT, rec->file_offset + 8 + at,
				"%s: string is not NUL-terminated within the record",
				hwt_pd_record_name(rec->type));
	*out = (const char *)b->p + at;
	return 0;
}

static unsigned int popcount64(uint64_t v)
{
	return (unsigned int)__builtin_popcountll(v);
}

/* The trailer: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER, as present. */
static void parse_trailer(const uint8_t *t, uint64_t st,
			  struct hwt_pd_sample_id *sid)
{
	if (st & PERF_SAMPLE_TID) {
		sid->pid = pdr_u32(t);
		sid->tid = pdr_u32(t + 4);
		sid->present |= HWT_PD_SID_TID;
		t += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		sid->time = pdr_u64(t);
		sid->present |= HWT_PD_SID_TIME;
		t += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		sid->id = pdr_u64(t);
		sid->present |= HWT_PD_SID_ID;
		t += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		sid->stream_id = pdr_u64(t);
		sid->present |= HWT_PD_SID_STREAM_ID;
		t += 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		sid->cpu = pdr_u32(t);
		sid->present |= HWT_PD_SID_CPU;
		t += 8;
	}
	if (st & PERF_SAMPLE_IDENTIFIER) {
		sid->id = pdr_u64(t);
		sid->present |= HWT_PD_SID_IDENTIFIER;
	}
}

/*
 * Which attr a record belongs to, as perf decides it: the only one; the
 * first when ids cannot be told (no sample_id_all, no id field, id 0 of a
 * synthesized record); else by the id found where the first attr's
 * sample_type puts it. NULL when the id is unknown.
 */
static int match_attr(struct hwt_pd_reader *r, struct hwt_pd_record *rec,
		      const struct hwt_pd_attr **out)
{
	const struct hwt_pd_attr *first;
	uint64_t st, id;
	size_t at;

	*out = NULL;
	if (!r->nattrs)
		return 0;
	if (r->raw) {
		/* libipt's rule: the last 8 bytes name the event, else
		 * attr 0's layout. */
		*out = r->attrs[0];
		if (r->nattrs > 1 && rec->size >= 16) {
			const struct hwt_pd_attr *a;

			id = pdr_u64(rec->raw + rec->size - 8);
			a = id ? pdr_find_id(r, id) :
				 r->raw_zero ? r->attrs[r->raw_zero] : NULL;
			if (a)
				*out = a;
		}
		return 0;
	}
	first = r->attrs[0];
	st = first->attr.sample_type;
	*out = first;
	if (r->nattrs == 1)
		return 0;
	if (rec->type == PERF_RECORD_SAMPLE) {
		if (st & PERF_SAMPLE_IDENTIFIER)
			at = 8;
		else if (st & PERF_SAMPLE_ID)
			at = 8 + 8 * popcount64(st & (PERF_SAMPLE_IP |
						      PERF_SAMPLE_TID |
						      PERF_SAMPLE_TIME |
						      PERF_SAMPLE_ADDR));
		else
			return 0;
		if ((size_t)rec->size < at + 8)
			return too_short(r, rec, rec->size - 8u, at);
	} else {
		size_t from_end;

		if (!first->attr.sample_id_all)
			return 0;
		if (st & PERF_SAMPLE_IDENTIFIER)
			from_end = 8;
		else if (st & PERF_SAMPLE_ID)
			from_end = 8 + 8 * popcount64(st & (PERF_SAMPLE_STREAM_ID |
							    PERF_SAMPLE_CPU));
		else
			return 0;
		if ((size_t)rec->size < 8 + from_end)
			return too_short(r, rec, rec->size - 8u, from_end);
		at = rec->size - from_end;
	}
	id = pdr_u64(rec->raw + at);
	if (id)
		*out = pdr_find_id(r, id);
	return 0;
}

static int decode_sample(struct hwt_pd_reader *r, struct hwt_pd_record *rec,
			 const struct body *b)
{
	struct hwt_pd_sample *s = &rec->u.sample;
	struct hwt_pd_sample_id *sid = &rec->sid;
	uint64_t st;
	size_t need, at = 0;

	s->raw = b->p;
	s->raw_size = b->n;
	if (!rec->attr)
		return 0;
	st = rec->attr->attr.sample_type;
	s->sample_type = st;
	need = 8 * popcount64(st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
				    PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				    PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
				    PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
				    PERF_SAMPLE_PERIOD));
	if (b->n < need)
		return too_short(r, rec, b->n, need);
	if (st & PERF_SAMPLE_IDENTIFIER) {
		sid->id = pdr_u64(b->p + at);
		sid->present |= HWT_PD_SID_IDENTIFIER;
		at += 8;
	}
	if (st & PERF_SAMPLE_IP) {
		s->ip = pdr_u64(b->p + at);
		at += 8;
	}
	if (st & PERF_SAMPLE_TID) {
		sid->pid = pdr_u32(b->p + at);
		sid->tid = pdr_u32(b->p + at + 4);
		sid->present |= HWT_PD_SID_TID;
		at += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		sid->time = pdr_u64(b->p + at);
		sid->present |= HWT_PD_SID_TIME;
		at += 8;
	}
	if (st & PERF_SAMPLE_ADDR) {
		s->addr = pdr_u64(b->p + at);
		at += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		sid->id = pdr_u64(b->p + at);
		sid->present |= HWT_PD_SID_ID;
		at += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		sid->stream_id = pdr_u64(b->p + at);
		sid->present |= HWT_PD_SID_STREAM_ID;
		at += 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		sid->cpu = pdr_u32(b->p + at);
		sid->present |= HWT_PD_SID_CPU;
		at += 8;
	}
	if (st & PERF_SAMPLE_PERIOD)
		s->period = pdr_u64(b->p + at);
	return 0;
}

static int decode_mmap(struct hwt_pd_reader *r, struct hwt_pd_record *rec,
		       const struct body *b)
{
	struct hwt_pd_mmap *m = &rec->u.mmap;
	const uint8_t *p = b->p;
	size_t fixed = rec->type == PERF_RECORD_MMAP2 ? 64 : 32;

	if (b->n < fixed)
		return too_short(r, rec, b->n, fixed + 1);
	m->pid = pdr_u32(p);
	m->tid = pdr_u32(p + 4);
	m->start = pdr_u64(p + 8);
	m->len = pdr_u64(p + 16);
	m->pgoff = pdr_u64(p + 24);
	if (rec->type == PERF_RECORD_MMAP2) {
		m->is_mmap2 = 1;
		if (rec->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			if (p[32] > sizeof(m->build_id))
				return pdr_fail(r, HWT_ERR_BAD_FORMAT,
						rec->file_offset + 8 + 32,
						"PERF_RECORD_MMAP2: build id size %u is larger than 20",
						p[32]);
			m->build_id_size = p[32];
			memcpy(m->build_id, p + 36, sizeof(m->build_id));
		} else {
			m->maj = pdr_u32(p + 32);
			m->min = pdr_u32(p + 36);
			m->ino = pdr_u64(p + 40);
			m->ino_generation = pdr_u64(p + 48);
		}
		m->prot = pdr_u32(p + 56);
		m->flags = pdr_u32(p + 60);
	}
	return body_str(r, rec, b, fixed, SIZE_MAX, &m->filename);
}

static int decode_auxtrace_error(struct hwt_pd_reader *r,
				 struct hwt_pd_record *rec,
				 const struct body *b)
{
	struct hwt_pd_auxtrace_error *e = &rec->u.auxtrace_error;
	const uint8_t *p = b->p;
	size_t msg_at;

	if (b->n < 32)
		return too_short(r, rec, b->n, 32);
	e->type = pdr_u32(p);
	e->code = pdr_u32(p + 4);
	e->cpu = pdr_u32(p + 8);
	e->pid = pdr_u32(p + 12);
	e->tid = pdr_u32(p + 16);
	e->fmt = pdr_u32(p + 20);
	e->ip = pdr_u64(p + 24);
	/* format 0 had no time: the message followed the ip */
	msg_at = 32;
	if (e->fmt >= 1) {
		if (b->n < 40)
			return too_short(r, rec, b->n, 40);
		e->time = pdr_u64(p + 32);
		msg_at = 40;
	}
	if (e->fmt >= 2 && b->n >= msg_at + 64 + 8) {
		e->machine_pid = pdr_u32(p + msg_at + 64);
		e->vcpu = pdr_u32(p + msg_at + 68);
	}
	return body_str(r, rec, b, msg_at, 64, &e->msg);
}

static int copy_words(struct hwt_pd_reader *r, const struct hwt_pd_record *rec,
		      const uint8_t *p, size_t n, const uint64_t **out)
{
	/* a copy: record bytes need not be 8-aligned in a hostile file */
	if (n > r->scratch_cap) {
		uint64_t *ns = realloc(r->scratch, n * sizeof(*ns));

		if (!ns)
			return pdr_fail(r, HWT_ERR_NOMEM, rec->file_offset,
					"out of memory");
		r->scratch = ns;
		r->scratch_cap = n;
	}
	if (n)
		memcpy(r->scratch, p, n * sizeof(uint64_t));
	*out = r->scratch;
	return 0;
}

static int apply_header_attr(struct hwt_pd_reader *r,
			     const struct hwt_pd_record *rec,
			     const struct body *b)
{
	uint32_t sz;

	if (b->n < PERF_ATTR_SIZE_VER0)
		return too_short(r, rec, b->n, PERF_ATTR_SIZE_VER0);
	sz = pdr_u32(b->p + 4);
	if (!sz)
		sz = PERF_ATTR_SIZE_VER0;
	if (sz < PERF_ATTR_SIZE_VER0 || sz > b->n)
		return pdr_fail(r, HWT_ERR_BAD_FORMAT, rec->file_offset + 12,
				"PERF_RECORD_ATTR: attr size %u does not fit the record's %zu bytes",
				sz, b->n);
	return pdr_add_attr(r, b->p, sz, b->p + sz, (b->n - sz) / 8,
			    rec->file_offset);
}

/*
 * ID_INDEX says, per id, which mmap (idx), cpu and tid it was opened for;
 * the idx is not an attr index (perf's perf_event__process_id_index), so
 * ids stay mapped by the attrs' own lists. Only the layout is checked.
 */
static int check_id_index(struct hwt_pd_reader *r,
			  const struct hwt_pd_record *rec,
			  const struct body *b)
{
	uint64_t nr;

	if (b->n < 8)
		return too_short(r, rec, b->n, 8);
	nr = pdr_u64(b->p);
	if (nr > (b->n - 8) / 32)
		return pdr_fail(r, HWT_ERR_BAD_FORMAT, rec->file_offset + 8,
				"PERF_RECORD_ID_INDEX: %llu entries do not fit in %zu bytes",
				(unsigned long long)nr, b->n - 8);
	return 0;
}

/* EVENT_UPDATE of type NAME: pipe mode's way to name an attr. */
static int apply_event_update(struct hwt_pd_reader *r,
			      const struct hwt_pd_record *rec,
			      const struct body *b)
{
	const uint64_t update_name = 2;	/* perf's PERF_EVENT_UPDATE__NAME */
	const struct hwt_pd_attr *a;
	const char *name;
	char *copy;
	int err;

	if (b->n < 16)
		return too_short(r, rec, b->n, 16);
	if (pdr_u64(b->p) != update_name)
		return 0;
	err = body_str(r, rec, b, 16, SIZE_MAX, &name);
	if (err)
		return err;
	a = pdr_find_id(r, pdr_u64(b->p + 8));
	if (!a)
		return 0;
	copy = strdup(name);
	if (!copy)
		return pdr_fail(r, HWT_ERR_NOMEM, rec->file_offset,
				"out of memory");
	/* the reader owns its attrs; callers only see them const */
	free((void *)a->name);
	((struct hwt_pd_attr *)a)->name = copy;
	return 0;
}

/* Records that change what the reader knows (pipe mode, perf inject). */
static int apply_user(struct hwt_pd_reader *r, struct hwt_pd_record *rec,
		      const struct body *b)
{
	/* a second pass (rewind) has seen these already */
	if (rec->file_offset < r->applied_until)
		return 0;
	switch (rec->type) {
	case HWT_PD_HEADER_ATTR:
		return apply_header_attr(r, rec, b);
	case HWT_PD_HEADER_FEATURE:
		if (b->n < 8)
			return too_short(r, rec, b->n, 8);
		return pdr_feature(r, (unsigned int)(pdr_u64(b->p) < 256 ?
						     pdr_u64(b->p) : 256),
				   b->p + 8, b->n - 8, rec->file_offset + 16);
	case HWT_PD_HEADER_BUILD_ID:
		return pdr_build_id(r, rec->raw, rec->size, rec->file_offset);
	case HWT_PD_ID_INDEX:
		return check_id_index(r, rec, b);
	case HWT_PD_EVENT_UPDATE:
		return apply_event_update(r, rec, b);
	default:
		return 0;
	}
}

static int decode_user(struct hwt_pd_reader *r, struct hwt_pd_record *rec,
		       const struct body *b)
{
	const uint8_t *p = b->p;
	int err = apply_user(r, rec, b);

	if (err)
		return err;
	switch (rec->type) {
	case HWT_PD_AUXTRACE_INFO:
		if (b->n < 8)
			return too_short(r, rec, b->n, 8);
		rec->u.auxtrace_info.type = pdr_u32(p);
		rec->u.auxtrace_info.npriv = (b->n - 8) / 8;
		return copy_words(r, rec, p + 8, rec->u.auxtrace_info.npriv,
				  &rec->u.auxtrace_info.priv);
	case HWT_PD_AUXTRACE: {
		struct hwt_pd_auxtrace *a = &rec->u.auxtrace;

		if (b->n < 40)
			return too_short(r, rec, b->n, 40);
		a->size = pdr_u64(p);
		a->offset = pdr_u64(p + 8);
		a->reference = pdr_u64(p + 16);
		a->idx = pdr_u32(p + 24);
		a->tid = pdr_u32(p + 28);
		a->cpu = pdr_u32(p + 32);
		a->data = rec->raw + rec->size;
		a->data_file_offset = rec->file_offset + rec->size;
		return 0;
	}
	case HWT_PD_AUXTRACE_ERROR:
		return decode_auxtrace_error(r, rec, b);
	case HWT_PD_TIME_CONV: {
		struct hwt_pd_time_conv *t = &rec->u.time_conv;

		if (b->n < 24)
			return too_short(r, rec, b->n, 24);
		t->time_shift = pdr_u64(p);
		t->time_mult = pdr_u64(p + 8);
		t->time_zero = pdr_u64(p + 16);
		if (b->n >= 42) {
			t->time_cycles = pdr_u64(p + 24);
			t->time_mask = pdr_u64(p + 32);
			t->cap_user_time_zero = p[40];
			t->cap_user_time_short = p[41];
			t->extended = 1;
		}
		return 0;
	}
	default:
		return 0;
	}
}

static int decode_kernel(struct hwt_pd_reader *r, struct hwt_pd_record *rec,
			 const struct body *b)
{
	const uint8_t *p = b->p;

	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return decode_mmap(r, rec, b);
	case PERF_RECORD_COMM:
		if (b->n < 8)
			return too_short(r, rec, b->n, 9);
		rec->u.comm.pid = pdr_u32(p);
		rec->u.comm.tid = pdr_u32(p + 4);
		rec->u.comm.exec = !!(rec->misc & PERF_RECORD_MISC_COMM_EXEC);
		return body_str(r, rec, b, 8, SIZE_MAX, &rec->u.comm.comm);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (b->n < 24)
			return too_short(r, rec, b->n, 24);
		rec->u.task.pid = pdr_u32(p);
		rec->u.task.ppid = pdr_u32(p + 4);
		rec->u.task.tid = pdr_u32(p + 8);
		rec->u.task.ptid = pdr_u32(p + 12);
		rec->u.task.time = pdr_u64(p + 16);
		return 0;
	case PERF_RECORD_LOST:
		if (b->n < 16)
			return too_short(r, rec, b->n, 16);
		rec->u.lost.id = pdr_u64(p);
		rec->u.lost.lost = pdr_u64(p + 8);
		return 0;
	case PERF_RECORD_LOST_SAMPLES:
		if (b->n < 8)
			return too_short(r, rec, b->n, 8);
		rec->u.lost_samples.lost = pdr_u64(p);
		return 0;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		if (b->n < 24)
			return too_short(r, rec, b->n, 24);
		rec->u.throttle.time = pdr_u64(p);
		rec->u.throttle.id = pdr_u64(p + 8);
		rec->u.throttle.stream_id = pdr_u64(p + 16);
		return 0;
	case PERF_RECORD_AUX:
		if (b->n < 24)
			return too_short(r, rec, b->n, 24);
		rec->u.aux.aux_offset = pdr_u64(p);
		rec->u.aux.aux_size = pdr_u64(p + 8);
		rec->u.aux.flags = pdr_u64(p + 16);
		return 0;
	case PERF_RECORD_ITRACE_START:
		if (b->n < 8)
			return too_short(r, rec, b->n, 8);
		rec->u.itrace_start.pid = pdr_u32(p);
		rec->u.itrace_start.tid = pdr_u32(p + 4);
		return 0;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		rec->u.sw.out = !!(rec->misc & PERF_RECORD_MISC_SWITCH_OUT);
		rec->u.sw.preempt =
			!!(rec->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
		if (rec->type == PERF_RECORD_SWITCH)
			return 0;
		if (b->n < 8)
			return too_short(r, rec, b->n, 8);
		rec->u.sw.cpu_wide = 1;
		rec->u.sw.next_prev_pid = pdr_u32(p);
		rec->u.sw.next_prev_tid = pdr_u32(p + 4);
		return 0;
	case PERF_RECORD_KSYMBOL:
		if (b->n < 16)
			return too_short(r, rec, b->n, 17);
		rec->u.ksymbol.addr = pdr_u64(p);
		rec->u.ksymbol.len = pdr_u32(p + 8);
		rec->u.ksymbol.ksym_type = pdr_u16(p + 12);
		rec->u.ksymbol.flags = pdr_u16(p + 14);
		return body_str(r, rec, b, 16, SIZE_MAX, &rec->u.ksymbol.name);
	case PERF_RECORD_TEXT_POKE: {
		struct hwt_pd_text_poke *t = &rec->u.text_poke;

		if (b->n < 12)
			return too_short(r, rec, b->n, 12);
		t->addr = pdr_u64(p);
		t->old_len = pdr_u16(p + 8);
		t->new_len = pdr_u16(p + 10);
		if (b->n - 12 < (size_t)t->old_len + t->new_len)
			return too_short(r, rec, b->n,
					 12 + (size_t)t->old_len + t->new_len);
		t->bytes = p + 12;
		return 0;
	}
	default:
		return 0;
	}
}

int pdr_decode(struct hwt_pd_reader *r, struct hwt_pd_record *rec)
{
	struct body b = { rec->raw + 8, rec->size - 8u };
	const struct hwt_pd_attr *a;
	int err;

	/* A raw stream holds what the kernel writes, nothing of perf's. */
	if (!hwt_pd_record_name(rec->type) ||
	    (r->raw && rec->type >= HWT_PD_HEADER_ATTR)) {
		r->unknown++;
		return 0;
	}
	if (rec->type >= HWT_PD_HEADER_ATTR)
		return decode_user(r, rec, &b);
	err = match_attr(r, rec, &a);
	if (err)
		return err;
	rec->attr = a;
	if (rec->type == PERF_RECORD_SAMPLE)
		return decode_sample(r, rec, &b);
	if (a && a->attr.sample_id_all) {
		size_t tsize = 8 * popcount64(a->attr.sample_type & SID_TYPES);

		if (b.n < tsize)
			return pdr_fail(r, HWT_ERR_BAD_FORMAT, rec->file_offset,
					"%s of %u bytes is too short for its %zu-byte sample id",
					hwt_pd_record_name(rec->type), rec->size,
					tsize);
		b.n -= tsize;
		parse_trailer(b.p + b.n, a->attr.sample_type, &rec->sid);
	}
	return decode_kernel(r, rec, &b);
}

uint64_t pdr_payload_size(const uint8_t *rec, uint32_t type, uint16_t size)
{
	if (type == HWT_PD_AUXTRACE && size >= 16)
		return pdr_u64(rec + 8);
	if (type == HWT_PD_HEADER_TRACING_DATA && size >= 12)
		return pdr_u32(rec + 8);
	return 0;
}
