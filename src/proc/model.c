/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The process model: sideband records in, timelines out.
 *
 * A pid's timeline is a list of operations (a mapping appears, the space
 * is replaced). A new process copies its parent's operations since the
 * parent's last replacement, so its timeline alone rebuilds its space at
 * any time and views never look at other pids.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "proc/proc_int.h"

void proc_warn(const struct hwt_proc_model *m, uint64_t time, uint32_t pid,
	       const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!m->config.warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	m->config.warn(m->config.warn_ctx, time, pid, msg);
}

/* ---- interned strings ---- */

/* Where @s is or would go in @p->sorted; *@found if it is there. */
static size_t strs_pos(const struct proc_strs *p, const char *s, int *found)
{
	size_t lo = 0, hi = p->n;

	*found = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(p->s[p->sorted[mid]], s);

		if (!c) {
			*found = 1;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int strs_intern(struct proc_strs *p, const char *s, uint32_t *idx)
{
	size_t pos;
	int found, err;
	char *copy;

	pos = strs_pos(p, s, &found);
	if (found) {
		*idx = p->sorted[pos];
		return 0;
	}
	if (p->n >= UINT32_MAX)
		return -HWT_ERR_NOMEM;
	err = hwt_grow((void **)&p->s, &p->cap, p->n + 1, sizeof(*p->s));
	if (err < 0)
		return err;
	err = hwt_grow((void **)&p->sorted, &p->capsorted, p->n + 1,
			   sizeof(*p->sorted));
	if (err < 0)
		return err;
	copy = strdup(s);
	if (!copy)
		return -HWT_ERR_NOMEM;
	memmove(&p->sorted[pos + 1], &p->sorted[pos],
		(p->n - pos) * sizeof(*p->sorted));
	p->sorted[pos] = (uint32_t)p->n;
	p->s[p->n] = copy;
	*idx = (uint32_t)p->n++;
	return 0;
}

static void strs_free(struct proc_strs *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->s[i]);
	free(p->s);
	free(p->sorted);
}

/* A path, with its file entry. */
static int path_intern(struct hwt_proc_model *m, const char *path,
		       uint32_t *idx)
{
	size_t n = m->paths.n;
	int err;

	err = hwt_grow((void **)&m->files, &m->capfiles, n + 1,
			   sizeof(*m->files));
	if (err < 0)
		return err;
	err = strs_intern(&m->paths, path, idx);
	if (err < 0)
		return err;
	if (m->paths.n != n)
		memset(&m->files[*idx], 0, sizeof(m->files[*idx]));
	return 0;
}

/* ---- model ---- */

void hwt_proc_config_init(struct hwt_proc_config *config)
{
	if (config)
		memset(config, 0, sizeof(*config));
}

struct hwt_proc_model *hwt_proc_new(const struct hwt_proc_config *config)
{
	struct hwt_proc_model *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	pthread_mutex_init(&m->lock, NULL);
	if (config) {
		m->config = *config;
		m->config.root = NULL;
		m->config.vdso_path = NULL;
		m->config.buildid_dir = NULL;
		m->config.debug_dir = NULL;
		if ((config->root && !(m->config.root = strdup(config->root))) ||
		    (config->vdso_path &&
		     !(m->config.vdso_path = strdup(config->vdso_path))) ||
		    (config->buildid_dir &&
		     !(m->config.buildid_dir = strdup(config->buildid_dir))) ||
		    (config->debug_dir ?
		     !(m->config.debug_dir = strdup(config->debug_dir)) :
		     config->root && *config->root &&
		     asprintf((char **)&m->config.debug_dir, "%s/usr/lib/debug",
			      config->root) < 0)) {
			hwt_proc_delete(m);
			return NULL;
		}
	}
	if (!m->config.no_image_cache) {
		m->icache = hwt_image_cache_new();
		if (!m->icache) {
			hwt_proc_delete(m);
			return NULL;
		}
	}
	return m;
}

void hwt_proc_delete(struct hwt_proc_model *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->paths.n; i++)
		free(m->files[i].open_path);
	free(m->files);
	strs_free(&m->paths);
	strs_free(&m->comms);
	free(m->maps);
	for (i = 0; i < m->nspaces; i++)
		free(m->spaces[i].ops);
	free(m->spaces);
	for (i = 0; i < m->nthreads; i++)
		free(m->threads[i].comms);
	free(m->threads);
	for (i = 0; i < m->ncpus; i++)
		free(m->cpus[i].runs);
	free(m->cpus);
	free(m->scratch);
	/* (Views' images may hold it still: it goes with the last.) */
	hwt_image_cache_delete(m->icache);
	free((char *)m->config.root);
	free((char *)m->config.vdso_path);
	free((char *)m->config.buildid_dir);
	free((char *)m->config.debug_dir);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

/*
 * Bisection over an array of structs whose first member is a uint32_t
 * key: the index of @key or where it would go.
 */
static size_t key_pos(const void *arr, size_t n, size_t elem, uint32_t key,
		      int *found)
{
	size_t lo = 0, hi = n;

	*found = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t k;

		memcpy(&k, (const char *)arr + mid * elem, sizeof(k));
		if (k == key) {
			*found = 1;
			return mid;
		}
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The item with @key in a sorted array, inserted zeroed if not there. */
static void *key_get(void **arr, size_t *n, size_t *cap, size_t elem,
		     uint32_t key)
{
	size_t pos;
	char *base;
	int found;

	pos = key_pos(*arr, *n, elem, key, &found);
	if (found)
		return (char *)*arr + pos * elem;
	if (hwt_grow(arr, cap, *n + 1, elem) < 0)
		return NULL;
	base = *arr;
	memmove(base + (pos + 1) * elem, base + pos * elem, (*n - pos) * elem);
	memset(base + pos * elem, 0, elem);
	memcpy(base + pos * elem, &key, sizeof(key));
	(*n)++;
	return base + pos * elem;
}

struct proc_space *proc_space_find(const struct hwt_proc_model *m,
				   uint32_t pid)
{
	int found;
	size_t pos = key_pos(m->spaces, m->nspaces, sizeof(*m->spaces), pid,
			     &found);

	return found ? &m->spaces[pos] : NULL;
}

static struct proc_space *space_get(struct hwt_proc_model *m, uint32_t pid)
{
	return key_get((void **)&m->spaces, &m->nspaces, &m->capspaces,
		       sizeof(*m->spaces), pid);
}

static const struct proc_thread *thread_find(const struct hwt_proc_model *m,
					     uint32_t tid)
{
	int found;
	size_t pos = key_pos(m->threads, m->nthreads, sizeof(*m->threads),
			     tid, &found);

	return found ? &m->threads[pos] : NULL;
}

static struct proc_thread *thread_get(struct hwt_proc_model *m, uint32_t tid,
				      uint32_t pid)
{
	struct proc_thread *t;

	t = key_get((void **)&m->threads, &m->nthreads, &m->capthreads,
		    sizeof(*m->threads), tid);
	if (t)
		t->pid = pid;
	return t;
}

static int space_push(struct proc_space *s, uint64_t time, uint32_t kind,
		      uint32_t map)
{
	struct proc_op *op;
	int err;

	err = hwt_grow((void **)&s->ops, &s->capops, s->nops + 1,
			   sizeof(*s->ops));
	if (err < 0)
		return err;
	op = &s->ops[s->nops++];
	op->time = time;
	op->kind = kind;
	op->map = map;
	return 0;
}

/* A fresh address space for @s at @time (exec, or a pid used again). */
static int space_replace(struct proc_space *s, uint64_t time)
{
	s->ended = 0;
	if (!s->nops)
		return 0;
	return space_push(s, time, PROC_OP_CLEAR, 0);
}

/*
 * Whether a mapping can have code we can read: executable, user space,
 * and a file (or the vdso), not anonymous memory or a device.
 */
static int map_has_code(const struct hwt_pd_record *rec)
{
	const struct hwt_pd_mmap *mm = &rec->u.mmap;
	const char *p = mm->filename;
	uint16_t mode = rec->misc & PERF_RECORD_MISC_CPUMODE_MASK;

	if (mode == PERF_RECORD_MISC_KERNEL ||
	    mode == PERF_RECORD_MISC_GUEST_KERNEL ||
	    mode == PERF_RECORD_MISC_HYPERVISOR || mm->pid == UINT32_MAX)
		return 0;
	if (mm->is_mmap2 ? !(mm->prot & PROT_EXEC)
			 : (rec->misc & PERF_RECORD_MISC_MMAP_DATA))
		return 0;
	if (!p || !mm->len)
		return 0;
	if (!strcmp(p, "[vdso]"))
		return 1;
	return p[0] == '/' && p[1] != '/' && strncmp(p, "/dev/", 5) &&
	       strncmp(p, "/memfd:", 7) && strncmp(p, "/SYSV", 5) &&
	       strncmp(p, "/anon_hugepage", 14);
}

static int add_mmap(struct hwt_proc_model *m, const struct hwt_pd_record *rec,
		    uint64_t time)
{
	const struct hwt_pd_mmap *mm = &rec->u.mmap;
	struct proc_space *s;
	struct proc_mapx *x;
	uint32_t file;
	int err;

	if (m->nmaps >= UINT32_MAX)
		return -HWT_ERR_NOMEM;
	err = path_intern(m, mm->filename ? mm->filename : "", &file);
	if (err < 0)
		return err;
	err = hwt_grow((void **)&m->maps, &m->capmaps, m->nmaps + 1,
			   sizeof(*m->maps));
	if (err < 0)
		return err;
	if (!thread_get(m, mm->tid, mm->pid))
		return -HWT_ERR_NOMEM;
	s = space_get(m, mm->pid);
	if (!s)
		return -HWT_ERR_NOMEM;
	/* A pid seen again after its exit without a fork: used again. */
	if (s->ended) {
		err = space_replace(s, time);
		if (err < 0)
			return err;
	}
	err = space_push(s, time, PROC_OP_MAP, (uint32_t)m->nmaps);
	if (err < 0)
		return err;

	x = &m->maps[m->nmaps++];
	memset(x, 0, sizeof(*x));
	x->map.start = mm->start;
	x->map.len = mm->len;
	x->map.pgoff = mm->pgoff;
	x->map.time = time;
	if (mm->is_mmap2)
		x->map.prot = mm->prot;
	else
		x->map.prot = (rec->misc & PERF_RECORD_MISC_MMAP_DATA) ?
			      PROT_READ : PROT_READ | PROT_EXEC;
	x->map.path = m->paths.s[file];
	if (mm->build_id_size) {
		x->map.build_id_size = mm->build_id_size > 20 ? 20 :
				       mm->build_id_size;
		memcpy(x->map.build_id, mm->build_id, x->map.build_id_size);
	}
	x->file = file;
	x->code = (uint8_t)map_has_code(rec);
	return 0;
}

static int comm_push(struct hwt_proc_model *m, uint32_t tid, uint32_t pid,
		     uint64_t time, uint32_t comm)
{
	struct proc_thread *t = thread_get(m, tid, pid);
	struct proc_comm *c;
	int err;

	if (!t)
		return -HWT_ERR_NOMEM;
	if (t->ncomms && t->comms[t->ncomms - 1].comm == comm)
		return 0;
	err = hwt_grow((void **)&t->comms, &t->capcomms, t->ncomms + 1,
			   sizeof(*t->comms));
	if (err < 0)
		return err;
	c = &t->comms[t->ncomms++];
	c->time = time;
	c->comm = comm;
	return 0;
}

static int add_comm(struct hwt_proc_model *m, const struct hwt_pd_record *rec,
		    uint64_t time)
{
	const struct hwt_pd_comm *c = &rec->u.comm;
	struct proc_space *s;
	uint32_t idx;
	int err;

	err = strs_intern(&m->comms, c->comm ? c->comm : "", &idx);
	if (err < 0)
		return err;
	err = comm_push(m, c->tid, c->pid, time, idx);
	if (err < 0 || !c->exec)
		return err;
	s = space_get(m, c->pid);
	if (!s)
		return -HWT_ERR_NOMEM;
	return space_replace(s, time);
}

/* The latest comm of @t at or before @time: index, or -1. */
static int64_t thread_comm_at(const struct proc_thread *t, uint64_t time)
{
	size_t lo = 0, hi = t->ncomms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->comms[mid].time <= time)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? (int64_t)t->comms[lo - 1].comm : -1;
}

static int add_fork(struct hwt_proc_model *m, const struct hwt_pd_record *rec,
		    uint64_t time)
{
	const struct hwt_pd_task *t = &rec->u.task;
	const struct proc_thread *parent;
	struct proc_space *child, *ps;
	size_t i, first;
	int64_t comm = -1;
	uint32_t ppid = t->ppid;
	int err;

	parent = thread_find(m, t->ptid);
	if (parent)
		comm = thread_comm_at(parent, time);
	if (!thread_get(m, t->tid, t->pid))
		return -HWT_ERR_NOMEM;
	if (comm >= 0) {
		err = comm_push(m, t->tid, t->pid, time, (uint32_t)comm);
		if (err < 0)
			return err;
	}
	if (t->pid == t->ppid)
		return 0;	/* a thread shares its process's space */

	child = space_get(m, t->pid);
	if (!child)
		return -HWT_ERR_NOMEM;
	err = space_replace(child, time);
	if (err < 0)
		return err;
	ps = proc_space_find(m, ppid);	/* after space_get: may move */
	if (!ps || ps == child)
		return 0;
	for (first = ps->nops; first > 0; first--)
		if (ps->ops[first - 1].kind == PROC_OP_CLEAR)
			break;
	err = hwt_grow((void **)&child->ops, &child->capops,
			   child->nops + (ps->nops - first),
			   sizeof(*child->ops));
	if (err < 0)
		return err;
	for (i = first; i < ps->nops; i++)
		if (ps->ops[i].kind == PROC_OP_MAP)
			space_push(child, time, PROC_OP_MAP, ps->ops[i].map);
	return 0;
}

static int add_exit(struct hwt_proc_model *m, const struct hwt_pd_record *rec)
{
	const struct hwt_pd_task *t = &rec->u.task;
	struct proc_space *s;

	if (t->pid != t->tid)
		return 0;
	s = proc_space_find(m, t->pid);
	if (s)
		s->ended = 1;
	return 0;
}

static int cpu_push(struct hwt_proc_model *m, uint32_t cpu, uint64_t time,
		    uint32_t pid, uint32_t tid, uint32_t known)
{
	struct proc_cpu *c;
	struct proc_run *r;
	int err;

	c = key_get((void **)&m->cpus, &m->ncpus, &m->capcpus,
		    sizeof(*m->cpus), cpu);
	if (!c)
		return -HWT_ERR_NOMEM;
	if (c->nruns) {
		r = &c->runs[c->nruns - 1];
		if (r->known == known && r->pid == pid && r->tid == tid)
			return 0;
	}
	err = hwt_grow((void **)&c->runs, &c->capruns, c->nruns + 1,
			   sizeof(*c->runs));
	if (err < 0)
		return err;
	r = &c->runs[c->nruns++];
	r->time = time;
	r->pid = pid;
	r->tid = tid;
	r->known = known;
	return 0;
}

static int add_switch(struct hwt_proc_model *m,
		      const struct hwt_pd_record *rec, uint64_t time)
{
	const struct hwt_pd_switch *sw = &rec->u.sw;
	const struct hwt_pd_sample_id *sid = &rec->sid;

	if (!(sid->present & HWT_PD_SID_CPU))
		return 0;
	if (sw->cpu_wide && sw->out) {
		/* Written by the task leaving; next_prev is the one coming. */
		if (!thread_get(m, sw->next_prev_tid, sw->next_prev_pid))
			return -HWT_ERR_NOMEM;
		return cpu_push(m, sid->cpu, time, sw->next_prev_pid,
				sw->next_prev_tid, 1);
	}
	if (!(sid->present & HWT_PD_SID_TID))
		return 0;
	if (sw->out)
		return cpu_push(m, sid->cpu, time, 0, 0, 0);
	if (!thread_get(m, sid->tid, sid->pid))
		return -HWT_ERR_NOMEM;
	return cpu_push(m, sid->cpu, time, sid->pid, sid->tid, 1);
}

static int add_itrace_start(struct hwt_proc_model *m,
			    const struct hwt_pd_record *rec, uint64_t time)
{
	const struct hwt_pd_itrace_start *it = &rec->u.itrace_start;

	if (!thread_get(m, it->tid, it->pid))
		return -HWT_ERR_NOMEM;
	if (!(rec->sid.present & HWT_PD_SID_CPU))
		return 0;
	return cpu_push(m, rec->sid.cpu, time, it->pid, it->tid, 1);
}

int hwt_proc_add(struct hwt_proc_model *m, const struct hwt_pd_record *rec)
{
	uint64_t time = 0;

	if (!m || !rec)
		return -HWT_ERR_INVALID;
	if (rec->sid.present & HWT_PD_SID_TIME)
		time = rec->sid.time;
	else if (rec->type == PERF_RECORD_FORK ||
		 rec->type == PERF_RECORD_EXIT)
		time = rec->u.task.time;
	/* Timelines stay sorted even if the caller's order slips. */
	if (time < m->now)
		time = m->now;
	m->now = time;

	switch (rec->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return add_mmap(m, rec, time);
	case PERF_RECORD_COMM:
		return add_comm(m, rec, time);
	case PERF_RECORD_FORK:
		return add_fork(m, rec, time);
	case PERF_RECORD_EXIT:
		return add_exit(m, rec);
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return add_switch(m, rec, time);
	case PERF_RECORD_ITRACE_START:
		return add_itrace_start(m, rec, time);
	default:
		return 0;
	}
}

int hwt_proc_add_build_ids(struct hwt_proc_model *m,
			   const struct hwt_pd_build_id *ids, size_t n)
{
	size_t i;
	uint32_t idx;
	int err;

	if (!m || (n && !ids))
		return -HWT_ERR_INVALID;
	for (i = 0; i < n; i++) {
		struct proc_file *f;
		size_t sz = ids[i].size ? ids[i].size : 20;

		if (!ids[i].filename)
			continue;
		err = path_intern(m, ids[i].filename, &idx);
		if (err < 0)
			return err;
		f = &m->files[idx];
		memset(f->hdr_id, 0, sizeof(f->hdr_id));
		memcpy(f->hdr_id, ids[i].id, sz > 20 ? 20 : sz);
		f->hdr_len = (uint8_t)(ids[i].size > 20 ? 20 : ids[i].size);
		f->has_hdr_id = 1;
	}
	return 0;
}

/* ---- queries ---- */

/* Put @map into the sorted, disjoint @out (n of them), clipping others. */
static int scratch_insert(struct hwt_proc_model *m, size_t *n,
			  const struct hwt_proc_map *map)
{
	struct hwt_proc_map *out, front, back;
	uint64_t begin = map->start, end = map->start + map->len;
	size_t lo, hi, nnew, at;
	int has_front = 0, has_back = 0, err;

	if (!map->len)
		return 0;
	if (end < begin)
		end = UINT64_MAX;
	err = hwt_grow((void **)&m->scratch, &m->capscratch, *n + 3,
			   sizeof(*m->scratch));
	if (err < 0)
		return err;
	out = m->scratch;
	for (lo = 0; lo < *n && out[lo].start + out[lo].len <= begin; lo++)
		;
	for (hi = lo; hi < *n && out[hi].start < end; hi++)
		;
	if (lo < hi && out[lo].start < begin) {
		front = out[lo];
		front.len = begin - front.start;
		has_front = 1;
	}
	if (lo < hi && out[hi - 1].start + out[hi - 1].len > end) {
		back = out[hi - 1];
		back.len = back.start + back.len - end;
		back.pgoff += end - back.start;
		back.start = end;
		has_back = 1;
	}
	nnew = (size_t)has_front + 1 + (size_t)has_back;
	memmove(&out[lo + nnew], &out[hi], (*n - hi) * sizeof(*out));
	at = lo;
	if (has_front)
		out[at++] = front;
	out[at++] = *map;
	if (has_back)
		out[at] = back;
	*n = *n - (hi - lo) + nnew;
	return 0;
}

size_t hwt_proc_maps(struct hwt_proc_model *m, uint32_t pid, uint64_t time,
		     const struct hwt_proc_map **maps)
{
	const struct proc_space *s;
	size_t i, n = 0;

	if (maps)
		*maps = NULL;
	if (!m || !maps)
		return 0;
	s = proc_space_find(m, pid);
	if (!s)
		return 0;
	for (i = 0; i < s->nops && s->ops[i].time <= time; i++) {
		if (s->ops[i].kind == PROC_OP_CLEAR) {
			n = 0;
			continue;
		}
		if (scratch_insert(m, &n, &m->maps[s->ops[i].map].map) < 0)
			return 0;
	}
	*maps = m->scratch;
	return n;
}

const char *hwt_proc_debug_dir(const struct hwt_proc_model *m)
{
	return m ? m->config.debug_dir : NULL;
}

uint32_t hwt_proc_pid_of(const struct hwt_proc_model *m, uint32_t tid)
{
	const struct proc_thread *t = m ? thread_find(m, tid) : NULL;

	return t ? t->pid : tid;
}

const char *hwt_proc_comm(const struct hwt_proc_model *m, uint32_t tid,
			  uint64_t time)
{
	const struct proc_thread *t = m ? thread_find(m, tid) : NULL;
	int64_t idx;

	if (!t)
		return NULL;
	idx = thread_comm_at(t, time);
	return idx < 0 ? NULL : m->comms.s[idx];
}

/* The run of @cpu at @time (the last one that started by then). */
static const struct proc_run *run_at(const struct hwt_proc_model *m,
				     uint32_t cpu, uint64_t time,
				     const struct proc_run **first)
{
	const struct proc_cpu *c;
	size_t pos, lo = 0, hi;
	int found;

	pos = key_pos(m->cpus, m->ncpus, sizeof(*m->cpus), cpu, &found);
	if (!found)
		return NULL;
	c = &m->cpus[pos];
	hi = c->nruns;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->runs[mid].time <= time)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = c->runs;
	return lo ? &c->runs[lo - 1] : NULL;
}

int hwt_proc_running(const struct hwt_proc_model *m, uint32_t cpu,
		     uint64_t time, uint32_t *pid, uint32_t *tid)
{
	const struct proc_run *r, *first;

	if (!m || !pid || !tid)
		return -HWT_ERR_INVALID;
	r = run_at(m, cpu, time, &first);
	if (!r || !r->known)
		return -HWT_ERR_NOMAP;
	*pid = r->pid;
	*tid = r->tid;
	return 0;
}

int hwt_proc_ran_on(const struct hwt_proc_model *m, uint32_t cpu,
		    uint32_t pid, uint32_t tid)
{
	const struct proc_cpu *c;
	size_t pos;
	int found;

	if (!m)
		return 0;
	pos = key_pos(m->cpus, m->ncpus, sizeof(*m->cpus), cpu, &found);
	if (!found)
		return 0;
	c = &m->cpus[pos];
	for (size_t i = 0; i < c->nruns; i++)
		if (c->runs[i].known && c->runs[i].pid == pid &&
		    c->runs[i].tid == tid)
			return 1;
	return 0;
}

int hwt_proc_ran_last(const struct hwt_proc_model *m, uint32_t cpu,
		      uint64_t time, uint32_t *pid, uint32_t *tid)
{
	const struct proc_run *r, *first;

	if (!m || !pid || !tid)
		return -HWT_ERR_INVALID;
	r = run_at(m, cpu, time, &first);
	/* (Unknown runs never follow each other: cpu_push() merges them.) */
	while (r && !r->known)
		r = r > first ? r - 1 : NULL;
	if (!r)
		return -HWT_ERR_NOMAP;
	*pid = r->pid;
	*tid = r->tid;
	return 0;
}
