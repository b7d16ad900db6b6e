/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The perf.data writer's record encoder: struct hwt_pd_record to the bytes
 * the kernel (PERF_RECORD_*, <linux/perf_event.h>) or perf (user records)
 * would write. Strings are NUL-terminated and zero-padded to 8 bytes as
 * the kernel pads them; the sample_id_all trailer follows the attr of the
 * record's sample id.
 */
#include <string.h>

#include "perfdata/writer.h"

struct enc {
	uint8_t *p;
	size_t len;
	int too_big;
	const char *why;	/* of a refusal */
};

static int bad(struct enc *e, int code, const char *why)
{
	e->why = why;
	return code;
}

static void put(struct enc *e, const void *v, size_t n)
{
	if (e->too_big || n > HWT_PD_MAX_RECORD - e->len) {
		e->too_big = 1;
		return;
	}
	if (n)
		memcpy(e->p + e->len, v, n);
	e->len += n;
}

static void put_u16(struct enc *e, uint16_t v)
{
	put(e, &v, sizeof(v));
}

static void put_u32(struct enc *e, uint32_t v)
{
	put(e, &v, sizeof(v));
}

static void put_u64(struct enc *e, uint64_t v)
{
	put(e, &v, sizeof(v));
}

static void put_zeros(struct enc *e, size_t n)
{
	static const uint8_t zeros[8];

	while (n && !e->too_big) {
		size_t k = n < sizeof(zeros) ? n : sizeof(zeros);

		put(e, zeros, k);
		n -= k;
	}
}

/* Up to the next multiple of 8. */
static void put_align(struct enc *e)
{
	put_zeros(e, (8 - (e->len & 7)) & 7);
}

static void put_str(struct enc *e, const char *s)
{
	if (!s)
		s = "";
	put(e, s, strlen(s) + 1);
	put_align(e);
}

/* The sample_id_all trailer, in the kernel's order. */
static void put_sample_id(struct enc *e, const struct perf_event_attr *attr,
			  const struct hwt_pd_sample_id *sid, uint64_t id)
{
	uint64_t st;

	if (!attr || !attr->sample_id_all)
		return;
	st = attr->sample_type;
	if (st & PERF_SAMPLE_TID) {
		put_u32(e, sid->pid);
		put_u32(e, sid->tid);
	}
	if (st & PERF_SAMPLE_TIME)
		put_u64(e, sid->time);
	if (st & PERF_SAMPLE_ID)
		put_u64(e, id);
	if (st & PERF_SAMPLE_STREAM_ID)
		put_u64(e, sid->stream_id);
	if (st & PERF_SAMPLE_CPU) {
		put_u32(e, sid->cpu);
		put_u32(e, 0);
	}
	if (st & PERF_SAMPLE_IDENTIFIER)
		put_u64(e, id);
}

/* The sample fields hwt_pd_sample and the sample id carry. */
#define SIMPLE_SAMPLE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |	\
		       PERF_SAMPLE_TID | PERF_SAMPLE_TIME |		\
		       PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |		\
		       PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |	\
		       PERF_SAMPLE_PERIOD)

static int put_sample(struct enc *e, const struct hwt_pd_record *rec,
		      const struct perf_event_attr *attr, uint64_t id)
{
	const struct hwt_pd_sample *s = &rec->u.sample;
	uint64_t st;

	if (s->raw) {
		if (s->raw_size & 7)
			return bad(e, -HWT_ERR_INVALID,
				   "sample body not a multiple of 8 bytes");
		put(e, s->raw, s->raw_size);
		return 0;
	}
	st = attr ? attr->sample_type : 0;
	/* Other fields have no place in struct hwt_pd_sample: those samples
	 * are written from their raw body. */
	if (st & ~(uint64_t)SIMPLE_SAMPLE)
		return bad(e, -HWT_ERR_NOT_SUPPORTED,
			   "sample_type has fields only a raw body can give");
	if (st & PERF_SAMPLE_IDENTIFIER)
		put_u64(e, id);
	if (st & PERF_SAMPLE_IP)
		put_u64(e, s->ip);
	if (st & PERF_SAMPLE_TID) {
		put_u32(e, rec->sid.pid);
		put_u32(e, rec->sid.tid);
	}
	if (st & PERF_SAMPLE_TIME)
		put_u64(e, rec->sid.time);
	if (st & PERF_SAMPLE_ADDR)
		put_u64(e, s->addr);
	if (st & PERF_SAMPLE_ID)
		put_u64(e, id);
	if (st & PERF_SAMPLE_STREAM_ID)
		put_u64(e, rec->sid.stream_id);
	if (st & PERF_SAMPLE_CPU) {
		put_u32(e, rec->sid.cpu);
		put_u32(e, 0);
	}
	if (st & PERF_SAMPLE_PERIOD)
		put_u64(e, s->period);
	return 0;
}

static void put_mmap(struct enc *e, const struct hwt_pd_record *rec,
		     uint16_t *misc)
{
	const struct hwt_pd_mmap *m = &rec->u.mmap;

	put_u32(e, m->pid);
	put_u32(e, m->tid);
	put_u64(e, m->start);
	put_u64(e, m->len);
	put_u64(e, m->pgoff);
	if (rec->type == PERF_RECORD_MMAP2) {
		*misc &= (uint16_t)~PERF_RECORD_MISC_MMAP_BUILD_ID;
		if (m->build_id_size) {
			uint8_t id[20] = { 0 };
			size_t n = m->build_id_size < sizeof(id) ?
				   m->build_id_size : sizeof(id);

			*misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
			memcpy(id, m->build_id, n);
			put(e, &(uint8_t){ (uint8_t)n }, 1);
			put_zeros(e, 3);
			put(e, id, sizeof(id));
		} else {
			put_u32(e, m->maj);
			put_u32(e, m->min);
			put_u64(e, m->ino);
			put_u64(e, m->ino_generation);
		}
		put_u32(e, m->prot);
		put_u32(e, m->flags);
	}
	put_str(e, m->filename);
}

static void put_auxtrace_error(struct enc *e, const struct hwt_pd_record *rec)
{
	const struct hwt_pd_auxtrace_error *x = &rec->u.auxtrace_error;
	char msg[64] = { 0 };

	put_u32(e, x->type);
	put_u32(e, x->code);
	put_u32(e, x->cpu);
	put_u32(e, x->pid);
	put_u32(e, x->tid);
	put_u32(e, x->fmt);
	put_u64(e, x->ip);
	/* perf's layouts: fmt 0 has the message right after the ip, fmt 1
	 * puts the time before it, fmt 2 adds the guest machine after it. */
	if (x->fmt >= 1)
		put_u64(e, x->time);
	if (x->msg)
		strncpy(msg, x->msg, sizeof(msg) - 1);
	put(e, msg, sizeof(msg));
	if (x->fmt >= 2) {
		put_u32(e, x->machine_pid);
		put_u32(e, x->vcpu);
	}
}

/* The record body after the header; *@trailer if a sample id follows. */
static int put_body(struct enc *e, const struct hwt_pd_record *rec,
		    uint16_t *misc, int *trailer)
{
	const struct hwt_pd_task *t = &rec->u.task;
	const struct hwt_pd_switch *sw = &rec->u.sw;

	*trailer = 1;
	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		put_mmap(e, rec, misc);
		break;
	case PERF_RECORD_COMM:
		*misc &= (uint16_t)~PERF_RECORD_MISC_COMM_EXEC;
		if (rec->u.comm.exec)
			*misc |= PERF_RECORD_MISC_COMM_EXEC;
		put_u32(e, rec->u.comm.pid);
		put_u32(e, rec->u.comm.tid);
		put_str(e, rec->u.comm.comm);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		put_u32(e, t->pid);
		put_u32(e, t->ppid);
		put_u32(e, t->tid);
		put_u32(e, t->ptid);
		put_u64(e, t->time);
		break;
	case PERF_RECORD_LOST:
		put_u64(e, rec->u.lost.id);
		put_u64(e, rec->u.lost.lost);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		put_u64(e, rec->u.lost_samples.lost);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		put_u64(e, rec->u.throttle.time);
		put_u64(e, rec->u.throttle.id);
		put_u64(e, rec->u.throttle.stream_id);
		break;
	case PERF_RECORD_AUX:
		put_u64(e, rec->u.aux.aux_offset);
		put_u64(e, rec->u.aux.aux_size);
		put_u64(e, rec->u.aux.flags);
		break;
	case PERF_RECORD_ITRACE_START:
		put_u32(e, rec->u.itrace_start.pid);
		put_u32(e, rec->u.itrace_start.tid);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		*misc &= (uint16_t)~(PERF_RECORD_MISC_SWITCH_OUT |
				     PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
		if (sw->out)
			*misc |= PERF_RECORD_MISC_SWITCH_OUT;
		if (sw->out && sw->preempt)
			*misc |= PERF_RECORD_MISC_SWITCH_OUT_PREEMPT;
		if (rec->type == PERF_RECORD_SWITCH_CPU_WIDE) {
			put_u32(e, sw->next_prev_pid);
			put_u32(e, sw->next_prev_tid);
		}
		break;
	case PERF_RECORD_KSYMBOL:
		put_u64(e, rec->u.ksymbol.addr);
		put_u32(e, rec->u.ksymbol.len);
		put_u16(e, rec->u.ksymbol.ksym_type);
		put_u16(e, rec->u.ksymbol.flags);
		put_str(e, rec->u.ksymbol.name);
		break;
	case PERF_RECORD_TEXT_POKE: {
		const struct hwt_pd_text_poke *tp = &rec->u.text_poke;
		size_t n = (size_t)tp->old_len + tp->new_len;

		if (n && !tp->bytes)
			return bad(e, -HWT_ERR_INVALID, "no bytes");
		put_u64(e, tp->addr);
		put_u16(e, tp->old_len);
		put_u16(e, tp->new_len);
		put(e, tp->bytes, n);
		put_align(e);
		break;
	}
	case HWT_PD_AUXTRACE_INFO:
		*trailer = 0;
		if (rec->u.auxtrace_info.npriv && !rec->u.auxtrace_info.priv)
			return bad(e, -HWT_ERR_INVALID, "no priv words");
		put_u32(e, rec->u.auxtrace_info.type);
		put_u32(e, 0);
		for (size_t i = 0; i < rec->u.auxtrace_info.npriv; i++)
			put_u64(e, rec->u.auxtrace_info.priv[i]);
		break;
	case HWT_PD_AUXTRACE_ERROR:
		*trailer = 0;
		put_auxtrace_error(e, rec);
		break;
	case HWT_PD_TIME_CONV:
		*trailer = 0;
		put_u64(e, rec->u.time_conv.time_shift);
		put_u64(e, rec->u.time_conv.time_mult);
		put_u64(e, rec->u.time_conv.time_zero);
		if (rec->u.time_conv.extended) {
			put_u64(e, rec->u.time_conv.time_cycles);
			put_u64(e, rec->u.time_conv.time_mask);
			put(e, &rec->u.time_conv.cap_user_time_zero, 1);
			put(e, &rec->u.time_conv.cap_user_time_short, 1);
			put_zeros(e, 6);
		}
		break;
	case HWT_PD_FINISHED_ROUND:
	case HWT_PD_FINISHED_INIT:
		*trailer = 0;
		break;
	default:
		return 1;	/* not encoded here */
	}
	return 0;
}

/* A record the writer does not encode: its bytes as they are. */
static int write_raw(struct hwt_pd_writer *w, const struct hwt_pd_record *rec,
		     struct enc *e)
{
	struct perf_event_header h;

	if (!rec->raw)
		return bad(e, -HWT_ERR_INVALID,
			   "not encoded by the writer and no raw bytes");
	memcpy(&h, rec->raw, sizeof(h));
	if (h.size < sizeof(h) || (rec->size && rec->size != h.size))
		return bad(e, -HWT_ERR_INVALID,
			   "raw header size does not match");
	return hwt_pd_writer_emit(w, rec->raw, h.size, NULL, 0, 0);
}

static int write_auxtrace(struct hwt_pd_writer *w,
			  const struct hwt_pd_record *rec, struct enc *e)
{
	const struct hwt_pd_auxtrace *a = &rec->u.auxtrace;
	struct perf_event_header h = {
		.type = HWT_PD_AUXTRACE,
		.misc = rec->misc,
		.size = 48,
	};
	/* perf record pads the trace to 8 bytes and counts the padding. */
	size_t pad = (8 - (a->size & 7)) & 7;

	if (a->size && !a->data)
		return bad(e, -HWT_ERR_INVALID, "no data");
	if (a->size > SIZE_MAX - 8)
		return bad(e, -HWT_ERR_INVALID, "data too large");
	put(e, &h, sizeof(h));
	put_u64(e, a->size + pad);
	put_u64(e, a->offset);
	put_u64(e, a->reference);
	put_u32(e, a->idx);
	put_u32(e, a->tid);
	put_u32(e, a->cpu);
	put_u32(e, 0);
	return hwt_pd_writer_emit(w, e->p, e->len, a->data, (size_t)a->size,
				  pad);
}

static int encode(struct hwt_pd_writer *w, const struct hwt_pd_record *rec,
		  struct enc *e)
{
	const struct perf_event_attr *attr;
	struct perf_event_header h;
	uint64_t id, first_id = 0;
	uint16_t misc;
	int trailer = 0, ret;

	if (rec->type == HWT_PD_AUXTRACE)
		return write_auxtrace(w, rec, e);
	if (rec->type == HWT_PD_ID_INDEX)
		return write_raw(w, rec, e);

	attr = hwt_pd_writer_attr_of(w, rec->sid.id, &first_id);
	/* No id given: the record belongs to the attr it was matched to. */
	id = rec->sid.id ? rec->sid.id : first_id;
	misc = rec->misc;
	put_zeros(e, sizeof(h));	/* the header, filled in below */
	if (rec->type == PERF_RECORD_SAMPLE) {
		ret = put_sample(e, rec, attr, id);
	} else {
		ret = put_body(e, rec, &misc, &trailer);
		if (ret == 1)
			return write_raw(w, rec, e);
	}
	if (ret < 0)
		return ret;
	if (trailer)
		put_sample_id(e, attr, &rec->sid, id);
	if (e->too_big)
		return bad(e, -HWT_ERR_INVALID,
			   "larger than a record can be (64 KiB)");
	h.type = rec->type;
	h.misc = misc;
	h.size = (uint16_t)e->len;
	memcpy(e->p, &h, sizeof(h));
	return hwt_pd_writer_emit(w, e->p, e->len, NULL, 0, 0);
}

int hwt_pd_write(struct hwt_pd_writer *w, const struct hwt_pd_record *rec)
{
	struct enc e = { 0 };
	const char *name;
	int ret;

	if (!w || !rec)
		return -HWT_ERR_INVALID;
	e.p = hwt_pd_writer_scratch(w);
	ret = encode(w, rec, &e);
	if (ret < 0 && e.why) {
		name = hwt_pd_record_name(rec->type);
		if (name)
			hwt_pd_writer_refuse(w, ret, "%s: %s", name, e.why);
		else
			hwt_pd_writer_refuse(w, ret, "record type %u: %s",
					     rec->type, e.why);
	}
	return ret;
}
