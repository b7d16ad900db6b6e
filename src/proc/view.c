/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Views: an image kept in step with one pid's timeline.
 *
 * A view that switches pids (CPU mode) keeps the images of the pids it
 * followed last (VIEW_OTHERS of them) and where their timelines were
 * applied up to, so a switch back applies only what came since, and a
 * decoder given the image again (hwt_blk_set_image()) still has its
 * blocks. More would be memory (each image maps its files and holds
 * their symbols) for processes that may never run again.
 *
 * Files are checked when a view first needs them (not when records
 * arrive), so build ids from the header count whatever order the caller
 * hands them in, and files no view uses are never opened.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc/proc_int.h"

enum { VIEW_OTHERS = 16 };

/* A pid followed before, and not now. */
struct view_pid {
	struct hwt_image *image;
	uint32_t pid;
	size_t next, space;
	uint64_t left;		/* when (in switches) */
};

struct hwt_proc_view {
	struct hwt_proc_model *m;
	/* The pid followed now: */
	struct hwt_image *image;
	uint32_t pid;
	size_t next;		/* the first op of the pid not applied */
	size_t space;		/* index into m->spaces, a hint */

	uint64_t time;
	struct view_pid others[VIEW_OTHERS];
	size_t nothers;
	uint64_t switches;
};

static struct hwt_image *view_image_new(const struct hwt_proc_model *m)
{
	struct hwt_image *image = hwt_image_new();

	hwt_image_set_symbols(image, !m->config.no_symbols);
	if (image && ((m->config.debug_dir &&
		       hwt_image_set_debug_dir(image, m->config.debug_dir) < 0) ||
		      (m->icache && hwt_image_set_cache(image, m->icache) < 0))) {
		hwt_image_delete(image);
		return NULL;
	}
	return image;
}

struct hwt_proc_view *hwt_proc_view_new(struct hwt_proc_model *m,
					uint32_t pid)
{
	struct hwt_proc_view *v;

	if (!m)
		return NULL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->image = view_image_new(m);
	if (!v->image) {
		free(v);
		return NULL;
	}
	v->m = m;
	v->pid = pid;
	return v;
}

void hwt_proc_view_delete(struct hwt_proc_view *v)
{
	if (!v)
		return;
	hwt_image_delete(v->image);
	for (size_t i = 0; i < v->nothers; i++)
		hwt_image_delete(v->others[i].image);
	free(v);
}

struct hwt_image *hwt_proc_view_image(struct hwt_proc_view *v)
{
	return v ? v->image : NULL;
}

uint32_t hwt_proc_view_pid(const struct hwt_proc_view *v)
{
	return v ? v->pid : 0;
}

static const struct proc_space *view_space(struct hwt_proc_view *v)
{
	struct hwt_proc_model *m = v->m;
	const struct proc_space *s;

	/* The array moves and grows as records come; check the hint. */
	if (v->space < m->nspaces && m->spaces[v->space].pid == v->pid)
		return &m->spaces[v->space];
	s = proc_space_find(m, v->pid);
	if (s)
		v->space = (size_t)(s - m->spaces);
	return s;
}

static const char *file_open_path(struct hwt_proc_model *m, uint32_t idx)
{
	struct proc_file *f = &m->files[idx];
	const char *path = m->paths.s[idx];
	const char *root = m->config.root;

	if (f->open_path)
		return f->open_path;
	if (!strcmp(path, "[vdso]")) {
		if (m->config.vdso_path)
			f->open_path = strdup(m->config.vdso_path);
	} else if (root && *root) {
		size_t n = strlen(root);

		if (asprintf(&f->open_path, "%s%s%s", root,
			     root[n - 1] == '/' || path[0] == '/' ? "" : "/",
			     path) < 0)
			f->open_path = NULL;
	} else {
		f->open_path = strdup(path);
	}
	return f->open_path;
}

/* @id's first @n bytes in hex. */
static void print_id(char *buf, const uint8_t id[20], int n)
{
	static const char digits[] = "0123456789abcdef";

	for (int i = 0; i < n; i++) {
		*buf++ = digits[id[i] >> 4];
		*buf++ = digits[id[i] & 15];
	}
	*buf = '\0';
}

/* @id (zero padded) without its trailing zero bytes. */
static int id_trimmed(const uint8_t id[20])
{
	int n = 20;

	while (n > 1 && !id[n - 1])
		n--;
	return n;
}

/*
 * The copy of build @id (@len bytes; 0: the recording does not say) in
 * the build-id cache (perf's layout: the link .build-id/ab/cdef... names
 * the file, or a directory holding `elf' or `vdso'), if it is there and
 * is that build. A new string, or NULL. Where the length is not said
 * (perf's records before it kept it), the name is the 20 bytes perf then
 * printed, padding and all, or else the id without its trailing zeros.
 */
static char *cache_lookup(const struct hwt_proc_model *m,
			  const uint8_t id[20], int len)
{
	static const char *const leaf[] = { "", "/elf", "/vdso" };
	const char *dir = m->config.buildid_dir;
	int lens[2] = { len ? len : 20, len ? len : id_trimmed(id) };
	uint8_t got[20];
	char hex[41];

	if (!dir || !*dir)
		return NULL;
	for (int k = 0; k < 2 && (!k || lens[1] != lens[0]); k++) {
		print_id(hex, id, lens[k]);
		for (size_t i = 0; i < sizeof(leaf) / sizeof(leaf[0]); i++) {
			char *p;

			if (asprintf(&p, "%s/.build-id/%.2s/%s%s", dir, hex,
				     hex + 2, leaf[i]) < 0)
				return NULL;
			if (hwt_image_build_id(p, got) > 0 &&
			    !memcmp(got, id, 20))
				return p;
			free(p);
		}
	}
	return NULL;
}

/* @f is the copy at @path of build @id from now on. */
static void use_cached(struct proc_file *f, char *path, const uint8_t id[20],
		       int len)
{
	free(f->open_path);
	f->open_path = path;
	memcpy(f->id, id, 20);
	f->has_id = 1;
	f->id_len = (uint8_t)len;
	f->state = PROC_FILE_READABLE;
}

/*
 * Whether the code of @x can be loaded: the file is there and, if the
 * recording names a build id, it is the same (else the build-id cache has
 * it). Problems are warned about once per file. Returns the path to open,
 * or NULL.
 */
static const char *map_file(struct hwt_proc_model *m,
			    const struct proc_mapx *x, uint64_t time,
			    uint32_t pid)
{
	struct proc_file *f = &m->files[x->file];
	const char *path = m->paths.s[x->file], *open_path;
	const uint8_t *want = NULL;
	uint8_t padded[20];
	char a[41], b[41], *cached;
	int ret, want_len = 0;

	if (x->map.build_id_size) {
		memset(padded, 0, sizeof(padded));
		memcpy(padded, x->map.build_id, x->map.build_id_size);
		want = padded;
		want_len = x->map.build_id_size;
	} else if (f->has_hdr_id) {
		want = f->hdr_id;
		want_len = f->hdr_len;
	}
	open_path = file_open_path(m, x->file);
	if (open_path && f->state == PROC_FILE_UNCHECKED) {
		ret = hwt_image_build_id(open_path, f->id);
		f->state = ret < 0 ? PROC_FILE_MISSING : PROC_FILE_READABLE;
		f->has_id = ret > 0;
		f->id_len = (uint8_t)(ret > 0 ? ret : 0);
	}
	if (want && !f->cache_tried &&
	    (!open_path || f->state == PROC_FILE_MISSING ||
	     !f->has_id || memcmp(want, f->id, 20))) {
		f->cache_tried = 1;
		cached = cache_lookup(m, want, want_len);
		if (cached) {
			use_cached(f, cached, want,
				   want_len ? want_len : id_trimmed(want));
			open_path = cached;
		}
	}
	if (!open_path) {
		if (!(f->warned & PROC_WARNED_MISSING))
			proc_warn(m, time, pid, "%s: %s", path,
				  strcmp(path, "[vdso]") ?
				  "out of memory" :
				  "no copy of the vdso given: its code is missing");
		f->warned |= PROC_WARNED_MISSING;
		return NULL;
	}
	if (f->state == PROC_FILE_MISSING) {
		if (!(f->warned & PROC_WARNED_MISSING))
			proc_warn(m, time, pid,
				  "%s: cannot read the file: its code is missing",
				  open_path);
		f->warned |= PROC_WARNED_MISSING;
		return NULL;
	}
	if (want && (!f->has_id || memcmp(want, f->id, 20))) {
		if (!(f->warned & PROC_WARNED_MISMATCH)) {
			print_id(a, want,
				 want_len ? want_len : id_trimmed(want));
			if (f->has_id)
				print_id(b, f->id, f->id_len);
			else
				strcpy(b, "none");
			proc_warn(m, time, pid,
				  "%s: build id %s, the recording has %s: "
				  "its code is left out", open_path, b, a);
		}
		f->warned |= PROC_WARNED_MISMATCH;
		return NULL;
	}
	return open_path;
}

static int apply_map(struct hwt_proc_view *v, const struct proc_mapx *x,
		     uint64_t time)
{
	struct hwt_proc_model *m = v->m;
	struct proc_file *f = &m->files[x->file];
	const struct hwt_proc_map *map = &x->map;
	const char *path = NULL;
	uint64_t len = map->len;
	int err;

	if (!len)
		return 0;
	if (map->start + len < map->start)
		len = UINT64_MAX - map->start;
	pthread_mutex_lock(&m->lock);
	if (x->code)
		path = map_file(m, x, time, v->pid);
	pthread_mutex_unlock(&m->lock);
	/* A new mapping replaces whatever was there, code or not. */
	err = hwt_image_remove(v->image, map->start, len);
	if (err < 0 && err != -HWT_ERR_INVALID)
		return err;
	if (!path)
		return 0;
	err = hwt_image_add_mmap(v->image, path, map->pgoff, len, map->start);
	if (err == -HWT_ERR_NOMEM)
		return err;
	pthread_mutex_lock(&m->lock);
	if (err < 0 && !(f->warned & PROC_WARNED_MAP)) {
		proc_warn(m, time, v->pid,
			  "%s: cannot map offset 0x%llx (%s): its code is missing",
			  path, (unsigned long long)map->pgoff, hwt_errstr(err));
		f->warned |= PROC_WARNED_MAP;
	}
	pthread_mutex_unlock(&m->lock);
	return 0;
}

/* Apply the ops of @s from v->next up to @time. */
static int view_apply(struct hwt_proc_view *v, const struct proc_space *s,
		      uint64_t time)
{
	size_t i, end, start;
	int err;

	for (end = v->next; end < s->nops && s->ops[end].time <= time; end++)
		;
	if (end == v->next)
		return 0;
	/* Only what the last replacement left matters. */
	start = v->next;
	for (i = end; i > v->next; i--) {
		if (s->ops[i - 1].kind == PROC_OP_CLEAR) {
			hwt_image_clear(v->image);
			start = i;
			break;
		}
	}
	for (i = start; i < end; i++) {
		if (s->ops[i].kind != PROC_OP_MAP)
			continue;
		err = apply_map(v, &v->m->maps[s->ops[i].map], s->ops[i].time);
		if (err < 0)
			return err;
		/* Applied, even if an error follows later. */
		v->next = i + 1;
	}
	v->next = end;
	return 0;
}

int hwt_proc_view_advance(struct hwt_proc_view *v, uint64_t time)
{
	const struct proc_space *s;
	uint64_t gen;
	int err;

	if (!v)
		return -HWT_ERR_INVALID;
	if (time < v->time)
		return 0;
	v->time = time;
	s = view_space(v);
	if (!s)
		return 0;
	gen = hwt_image_generation(v->image);
	err = view_apply(v, s, time);
	if (err < 0)
		return err;
	return hwt_image_generation(v->image) != gen;
}

/* The place of @pid among the others, made (with a new image) if new:
 * in place of the one left longest ago if they are all taken. */
static struct view_pid *view_other(struct hwt_proc_view *v, uint32_t pid)
{
	struct hwt_image *image;
	struct view_pid *o;

	for (size_t i = 0; i < v->nothers; i++)
		if (v->others[i].pid == pid)
			return &v->others[i];
	image = view_image_new(v->m);
	if (!image)
		return NULL;
	if (v->nothers < VIEW_OTHERS) {
		o = &v->others[v->nothers++];
	} else {
		o = &v->others[0];
		for (size_t i = 1; i < v->nothers; i++)
			if (v->others[i].left < o->left)
				o = &v->others[i];
		hwt_image_delete(o->image);
	}
	*o = (struct view_pid){ image, pid, 0, 0, 0 };
	return o;
}

int hwt_proc_view_set_pid(struct hwt_proc_view *v, uint32_t pid)
{
	const struct proc_space *s;
	struct view_pid *o, now;

	if (!v)
		return -HWT_ERR_INVALID;
	if (pid == v->pid)
		return 0;
	o = view_other(v, pid);
	if (!o)
		return -HWT_ERR_NOMEM;
	now = (struct view_pid){ v->image, v->pid, v->next, v->space,
				 ++v->switches };
	v->image = o->image;
	v->pid = o->pid;
	v->next = o->next;
	v->space = o->space;
	*o = now;
	s = view_space(v);
	if (s) {
		int err = view_apply(v, s, v->time);

		if (err < 0)
			return err;
	}
	return 1;
}
