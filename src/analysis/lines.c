/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Source lines from DWARF (elfutils libdw): the image says which file and
 * offset an address comes from; the file's PT_LOAD segments turn the
 * offset into its link-time address, which the line tables are keyed by.
 * A file without DWARF may have a separate debug file, found by build id
 * (/usr/lib/debug/.build-id/xx/yyyy.debug, as Debian's -dbgsym packages
 * install them, or below the directory set: the image's symbols are
 * looked up so too, hwt_image_debug_file()). Each file is opened once.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <hwt/analysis.h>
#include <hwt/proc.h>

#include "common/grow.h"

/* A compile unit's address range. */
struct ln_range {
	uint64_t lo, hi;
	Dwarf_Off cu;
};

struct ln_file {
	char *path;
	int fd, dbg_fd;
	Elf *elf;		/* the mapped file: its segments */
	Dwarf *dw;		/* its DWARF, or the debug file's; NULL */
	/* Its units' ranges, sorted, for DWARF without .debug_aranges
	 * (clang's default): made the first time they are needed. */
	struct ln_range *ranges;
	size_t nranges;
	uint8_t have_ranges;
	/* Its PT_LOAD segments, read once for load_map(), which is asked
	 * per row and per instruction (gelf_getphdr() each time: 7% of
	 * --lcov's instructions on python3's libraries). */
	struct ln_load *loads;
	size_t nloads;
	uint8_t have_loads;
};

struct ln_load {
	uint64_t vaddr, off, filesz;
};

/* A relative source name joined to its compile unit's directory, by
 * the two names' pointers (libdw's, stable while the file is open). */
struct ln_join {
	const char *dir, *src;
	char *path;
};

struct hwt_an_lines {
	struct ln_file *f;
	size_t n;
	size_t last;			/* the file asked last, + 1 (get()) */
	struct ln_join *joins;		/* open addressing, @jmask + 1 */
	size_t njoins, jmask;
	char *debug_dir;		/* NULL: /usr/lib/debug */
};

struct hwt_an_lines *hwt_an_lines_new(void)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	return calloc(1, sizeof(struct hwt_an_lines));
}

int hwt_an_lines_set_debug_dir(struct hwt_an_lines *s, const char *dir)
{
	/* (A file looked up already keeps what it found.) */
	if (!s || s->n)
		return -HWT_ERR_INVALID;
	return hwt_strset(&s->debug_dir, dir);
}

void hwt_an_lines_delete(struct hwt_an_lines *s)
{
	if (!s)
		return;
	free(s->debug_dir);
	for (size_t i = 0; i < s->n; i++) {
		struct ln_file *f = &s->f[i];

		if (f->dw)
			dwarf_end(f->dw);
		if (f->elf)
			elf_end(f->elf);
		if (f->fd >= 0)
			close(f->fd);
		if (f->dbg_fd >= 0)
			close(f->dbg_fd);
		free(f->path);
		free(f->ranges);
		free(f->loads);
	}
	free(s->f);
	for (size_t i = 0; s->joins && i <= s->jmask; i++)
		free(s->joins[i].path);
	free(s->joins);
	free(s);
}

/* @path with "." and "x/.." taken out, in place (a name, not a file:
 * links are not followed). */
static void normalise(char *path)
{
	char *out = path, *p = path;

	while (*p) {
		char *seg = p, *end = strchr(p, '/'), *last;
		size_t n = end ? (size_t)(end - seg) : strlen(seg);

		p = end ? end + 1 : seg + n;
		if (n == 0 && seg != path)
			continue;
		if (n == 1 && seg[0] == '.')
			continue;
		/* The last name written, "x/" (not "/" nor "../"). */
		last = out > path ? out - 1 : out;
		while (last > path && last[-1] != '/')
			last--;
		if (n == 2 && seg[0] == '.' && seg[1] == '.' &&
		    ((last < out && out - last > 1 &&
		      strncmp(last, "../", 3)) ||
		     (path[0] == '/' && out == path + 1))) {
			/* (Above the root is the root.) */
			out = last < out && out - last > 1 ? last : out;
			continue;
		}
		memmove(out, seg, n);
		out += n;
		if (end)
			*out++ = '/';
	}
	if (out > path + 1 && out[-1] == '/')
		out--;
	*out = 0;
}

static size_t join_hash(const char *dir, const char *src)
{
	uint64_t h = ((uintptr_t)dir ^ (uintptr_t)src * 0x9e3779b97f4a7c15ull) *
		     0xff51afd7ed558ccdull;

	return (size_t)(h >> 32);
}

static struct ln_join *join_slot(struct ln_join *tab, size_t mask,
				 const char *dir, const char *src)
{
	size_t i = join_hash(dir, src) & mask;

	while (tab[i].path && (tab[i].dir != dir || tab[i].src != src))
		i = (i + 1) & mask;
	return &tab[i];
}

/* @src of compile unit @cu as a path from the root, where it is not
 * one: its directory's (DW_AT_comp_dir) joined to it. NULL: no memory. */
static const char *full_name(struct hwt_an_lines *s, Dwarf_Die *cu,
			     const char *src)
{
	Dwarf_Attribute attr;
	const char *dir;
	struct ln_join *j;

	/* (A relative directory, as -fdebug-prefix-map leaves it: the path
	 * from the build's root. libdw has joined the directory to the names
	 * of the files in it, not to those of the line table's other
	 * directories.) */
	dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
	if (src[0] == '/' || !dir || !dir[0] ||
	    (!strncmp(src, dir, strlen(dir)) && src[strlen(dir)] == '/'))
		dir = "";
	if (2 * (s->njoins + 1) > s->jmask + 1 || !s->joins) {
		size_t mask = s->joins ? 2 * s->jmask + 1 : 255;
		struct ln_join *tab = calloc(mask + 1, sizeof(*tab));

		if (!tab)
			return NULL;
		for (size_t i = 0; s->joins && i <= s->jmask; i++)
			if (s->joins[i].path)
				*join_slot(tab, mask, s->joins[i].dir,
					   s->joins[i].src) = s->joins[i];
		free(s->joins);
		s->joins = tab;
		s->jmask = mask;
	}
	j = join_slot(s->joins, s->jmask, dir, src);
	if (!j->path) {
		size_t nd = strlen(dir), ns = strlen(src);

		j->path = malloc(nd + ns + 2);
		if (!j->path)
			return NULL;
		memcpy(j->path, dir, nd);
		if (nd)
			j->path[nd++] = '/';
		memcpy(j->path + nd, src, ns + 1);
		normalise(j->path);
		j->dir = dir;
		j->src = src;
		s->njoins++;
	}
	return j->path;
}

static Dwarf *debug_file(const struct hwt_an_lines *s, struct ln_file *f)
{
	char *path;

	if (hwt_image_debug_file(f->path, s->debug_dir, &path) != 1)
		return NULL;
	f->dbg_fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (f->dbg_fd < 0)
		return NULL;
	return dwarf_begin(f->dbg_fd, DWARF_C_READ);
}

static struct ln_file *get(struct hwt_an_lines *s, const char *path)
{
	struct ln_file *f;

	/* (Asked once an instruction, mostly for the file before.) */
	if (s->last && !strcmp(s->f[s->last - 1].path, path))
		return &s->f[s->last - 1];
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->f[i].path, path)) {
			s->last = i + 1;
			return &s->f[i];
		}
	f = realloc(s->f, (s->n + 1) * sizeof(*f));
	if (!f)
		return NULL;
	s->f = f;
	f = &s->f[s->n];
	memset(f, 0, sizeof(*f));
	f->fd = f->dbg_fd = -1;
	f->path = strdup(path);
	if (!f->path)
		return NULL;
	s->n++;
	s->last = s->n;
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		return f;
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF)
		return f;
	f->dw = dwarf_begin_elf(f->elf, DWARF_C_READ, NULL);
	if (!f->dw)
		f->dw = debug_file(s, f);
	return f;
}

/*
 * File offset @x as a link-time address in *@y (@to_addr), or address @x
 * as a file offset (!@to_addr), by the PT_LOAD segment that holds it.
 */
static int load_map(struct ln_file *f, uint64_t x, int to_addr, uint64_t *y)
{
	if (!f->have_loads) {
		GElf_Phdr ph;
		size_t n;

		f->have_loads = 1;
		if (!f->elf || elf_getphdrnum(f->elf, &n) || !n ||
		    !(f->loads = calloc(n, sizeof(*f->loads))))
			return 0;
		for (size_t i = 0; i < n; i++) {
			if (!gelf_getphdr(f->elf, (int)i, &ph) ||
			    ph.p_type != PT_LOAD)
				continue;
			f->loads[f->nloads].vaddr = ph.p_vaddr;
			f->loads[f->nloads].off = ph.p_offset;
			f->loads[f->nloads].filesz = ph.p_filesz;
			f->nloads++;
		}
	}
	for (size_t i = 0; i < f->nloads; i++) {
		const struct ln_load *l = &f->loads[i];
		uint64_t from = to_addr ? l->off : l->vaddr;
		uint64_t to = to_addr ? l->vaddr : l->off;

		if (x < from || x - from >= l->filesz)
			continue;
		*y = to + (x - from);
		return 1;
	}
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct ln_range *x = a, *y = b;

	return (x->lo > y->lo) - (x->lo < y->lo);
}

/* @fn(@cu, @ctx) for each compile unit of @dw, in order, until one
 * returns non-zero; that value, or 0. */
static int each_unit(Dwarf *dw, int (*fn)(Dwarf_Die *cu, void *ctx),
		     void *ctx)
{
	Dwarf_Off at = 0, next;
	size_t hsize;
	int r = 0;

	while (!r && dwarf_nextcu(dw, at, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;

		if (dwarf_offdie(dw, at + hsize, &cu))
			r = fn(&cu, ctx);
		at = next;
	}
	return r;
}

struct ranges_walk {
	struct ln_file *f;
	size_t cap;
};

static int unit_ranges(Dwarf_Die *cu, void *ctx)
{
	struct ranges_walk *w = ctx;
	struct ln_file *f = w->f;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t o = 0;

	while ((o = dwarf_ranges(cu, o, &base, &lo, &hi)) > 0) {
		if (lo >= hi)
			continue;
		if (hwt_grow((void **)&f->ranges, &w->cap, f->nranges + 1,
			     sizeof(*f->ranges)) < 0)
			return -HWT_ERR_NOMEM;
		f->ranges[f->nranges].lo = lo;
		f->ranges[f->nranges].hi = hi;
		f->ranges[f->nranges].cu = dwarf_dieoffset(cu);
		f->nranges++;
	}
	return 0;
}

/* @f's units' address ranges, sorted (once). 0, or -HWT_ERR_NOMEM. */
static int make_ranges(struct ln_file *f)
{
	struct ranges_walk w = { f, 0 };

	f->have_ranges = 1;
	if (each_unit(f->dw, unit_ranges, &w) < 0) {
		/* (None rather than some, unsorted.) */
		f->nranges = 0;
		return -HWT_ERR_NOMEM;
	}
	if (f->nranges)
		qsort(f->ranges, f->nranges, sizeof(*f->ranges), range_cmp);
	return 0;
}

/* The unit range that holds @addr (ranges made: make_ranges()), or
 * NULL. */
static const struct ln_range *range_of(const struct ln_file *f, uint64_t addr)
{
	size_t lo = 0, hi = f->nranges, start;

	/* The last range starting at or before @addr, and the 64 before it
	 * (one of those may still reach it: ranges may nest). */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->ranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (start = lo; lo-- > 0 && start - lo <= 64;)
		if (addr < f->ranges[lo].hi)
			return &f->ranges[lo];
	return NULL;
}

/* The unit whose code is at @addr, by its ranges (what dwarf_addrdie()
 * finds by .debug_aranges): 1, 0 if none, or -HWT_ERR_NOMEM. */
static int unit_of(struct ln_file *f, uint64_t addr, Dwarf_Die *cu)
{
	const struct ln_range *r;

	if (!f->have_ranges && make_ranges(f) < 0)
		return -HWT_ERR_NOMEM;
	r = range_of(f, addr);
	return r && dwarf_offdie(f->dw, r->cu, cu) != NULL;
}

int hwt_an_lines_find(struct hwt_an_lines *s, const struct hwt_image *image,
		      uint64_t vaddr, const char **file, unsigned *line)
{
	const char *path;
	uint64_t off;

	if (hwt_image_origin(image, vaddr, &path, &off) < 0)
		return 0;
	return hwt_an_lines_at(s, path, off, file, line);
}

int hwt_an_lines_at(struct hwt_an_lines *s, const char *path, uint64_t off,
		    const char **file, unsigned *line)
{
	struct ln_file *f = get(s, path);
	const char *src;
	Dwarf_Line *dl;
	Dwarf_Die cu;
	uint64_t addr;
	int lineno;

	if (!f)
		return -HWT_ERR_NOMEM;
	if (!f->dw || !load_map(f, off, 1, &addr))
		return 0;
	if (!dwarf_addrdie(f->dw, addr, &cu)) {
		int r = unit_of(f, addr, &cu);

		if (r <= 0)
			return r;
	}
	dl = dwarf_getsrc_die(&cu, addr);
	if (!dl || dwarf_lineno(dl, &lineno) || lineno <= 0)
		return 0;
	src = dwarf_linesrc(dl, NULL, NULL);
	if (!src)
		return 0;
	src = full_name(s, &cu, src);
	if (!src)
		return -HWT_ERR_NOMEM;
	*file = src;
	*line = (unsigned)lineno;
	return 1;
}

struct rows_walk {
	struct hwt_an_lines *s;
	int (*fn)(void *ctx, const char *file, unsigned line);
	void *ctx;
};

/* The (file, line) pairs of a unit's rows told already, by a hash: a
 * line has a row for each place its code starts (or its column or view
 * changes), and most of libc's rows repeat a pair told a few rows
 * before. Each miss is told (again, where the slot was another's). */
#define ROWS_SEEN 512

struct rows_seen {
	const char *src;
	unsigned line;
};

static int unit_rows(Dwarf_Die *cu, void *ctx)
{
	struct rows_walk *w = ctx;
	struct rows_seen seen[ROWS_SEEN];
	/* The unit's names, a few, come again and again: the last one
	 * joined to its directory is kept. */
	const char *raw = NULL, *full = NULL;
	Dwarf_Lines *lines;
	size_t n;

	if (dwarf_getsrclines(cu, &lines, &n))
		return 0;
	memset(seen, 0, sizeof(seen));
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *dl = dwarf_onesrcline(lines, i);
		struct rows_seen *e;
		const char *src;
		bool end = false;
		int lineno, r;

		if (!dl || dwarf_lineendsequence(dl, &end) || end ||
		    dwarf_lineno(dl, &lineno) || lineno <= 0)
			continue;
		src = dwarf_linesrc(dl, NULL, NULL);
		if (!src)
			continue;
		if (src != raw) {
			full = full_name(w->s, cu, src);
			if (!full)
				return -HWT_ERR_NOMEM;
			raw = src;
		}
		e = &seen[(join_hash(full, NULL) ^ (unsigned)lineno * 0x9e3779b1u)
			  % ROWS_SEEN];
		if (e->src == full && e->line == (unsigned)lineno)
			continue;
		e->src = full;
		e->line = (unsigned)lineno;
		r = w->fn(w->ctx, full, (unsigned)lineno);
		if (r)
			return r;
	}
	return 0;
}

int hwt_an_lines_each(struct hwt_an_lines *s, const char *path,
		      int (*fn)(void *ctx, const char *file, unsigned line),
		      void *ctx)
{
	struct ln_file *f = get(s, path);
	struct rows_walk w = { s, fn, ctx };

	if (!f)
		return -HWT_ERR_NOMEM;
	return f->dw ? each_unit(f->dw, unit_rows, &w) : 0;
}

struct funcs_walk {
	struct hwt_an_lines *s;
	struct ln_file *f;
	Dwarf_Die *cu;
	int (*fn)(void *ctx, const char *file, unsigned line,
		  const char *name, uint64_t off);
	void *ctx;
	int ret;
};

/* dwarf_decl_file(), and where it fails on DWARF 5's file 0 (libdw
 * before 0.189; clang names a unit's own file so), the unit's file table's
 * entry. */
static const char *decl_file(Dwarf_Die *die, Dwarf_Die *cu)
{
	const char *src = dwarf_decl_file(die);
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	Dwarf_Word idx;
	size_t n;

	if (src)
		return src;
	if (dwarf_formudata(dwarf_attr_integrate(die, DW_AT_decl_file, &attr),
			    &idx) || dwarf_getsrcfiles(cu, &files, &n) ||
	    idx >= n)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static int one_func(Dwarf_Die *die, void *arg)
{
	struct funcs_walk *w = arg;
	Dwarf_Attribute attr;
	const char *name, *src;
	Dwarf_Addr entry;
	uint64_t off;
	int line;

	/* (C++: the mangled name, unique; genhtml demangles.) */
	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name,
						     &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name,
							     &attr));
	src = decl_file(die, w->cu);
	if (!name || !src || dwarf_decl_line(die, &line) || line <= 0 ||
	    dwarf_entrypc(die, &entry) || !load_map(w->f, entry, 0, &off))
		return DWARF_CB_OK;
	src = full_name(w->s, w->cu, src);
	if (!src) {
		w->ret = -HWT_ERR_NOMEM;
		return DWARF_CB_ABORT;
	}
	w->ret = w->fn(w->ctx, src, (unsigned)line, name, off);
	return w->ret ? DWARF_CB_ABORT : DWARF_CB_OK;
}

static int unit_funcs(Dwarf_Die *cu, void *ctx)
{
	struct funcs_walk *w = ctx;

	w->cu = cu;
	(void)dwarf_getfuncs(cu, one_func, w, 0);
	return w->ret;
}

int hwt_an_lines_funcs(struct hwt_an_lines *s, const char *path,
		       int (*fn)(void *ctx, const char *file, unsigned line,
				 const char *name, uint64_t off),
		       void *ctx)
{
	struct ln_file *f = get(s, path);
	struct funcs_walk w = { s, f, NULL, fn, ctx, 0 };

	if (!f)
		return -HWT_ERR_NOMEM;
	return f->dw && f->elf ? each_unit(f->dw, unit_funcs, &w) : 0;
}

int hwt_an_lines_layout(struct hwt_an_lines *s, const char *path,
			uint64_t *base, uint64_t *end)
{
	struct ln_file *f = get(s, path);
	uint64_t lo = UINT64_MAX, hi = 0;
	GElf_Phdr ph;
	size_t n;

	if (!f)
		return -HWT_ERR_NOMEM;
	if (!f->elf || elf_getphdrnum(f->elf, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(f->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_vaddr < lo)
			lo = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz > hi)
			hi = ph.p_vaddr + ph.p_memsz;
	}
	if (lo >= hi)
		return 0;
	*base = lo & ~(uint64_t)0xfff;
	*end = hi;
	return 1;
}

int hwt_an_lines_link(struct hwt_an_lines *s, const char *path, uint64_t off,
		      uint64_t *addr)
{
	struct ln_file *f = get(s, path);

	if (!f)
		return -HWT_ERR_NOMEM;
	return f->elf && load_map(f, off, 1, addr);
}

/* A line table row's code, for hwt_an_lines_code(): from its address to
 * the next row's of its sequence, and its line. */
struct ln_span {
	uint64_t lo, hi;
	Dwarf_Off cu;
	const char *src;
	unsigned line;
};

struct code_walk {
	struct hwt_an_lines *s;
	struct ln_span *v;
	size_t n, cap;
};

static int unit_code_rows(Dwarf_Die *cu, void *ctx)
{
	struct code_walk *w = ctx;
	/* (As unit_rows(): the last name joined kept.) */
	const char *raw = NULL, *full = NULL;
	Dwarf_Lines *lines;
	Dwarf_Addr addr, next;
	Dwarf_Off at = dwarf_dieoffset(cu);
	size_t n;

	if (dwarf_getsrclines(cu, &lines, &n))
		return 0;
	if (hwt_grow((void **)&w->v, &w->cap, w->n + n, sizeof(*w->v)) < 0)
		return -HWT_ERR_NOMEM;
	for (size_t i = 0; i + 1 < n; i++) {
		Dwarf_Line *dl = dwarf_onesrcline(lines, i);
		Dwarf_Line *dn = dwarf_onesrcline(lines, i + 1);
		struct ln_span *sp = &w->v[w->n];
		const char *src;
		bool end = false;
		int lineno;

		/* (A row with the next one's address has no code: the next
		 * is the address's, as dwarf_getsrc_die() has it.) */
		if (!dl || !dn || dwarf_lineendsequence(dl, &end) || end ||
		    dwarf_lineaddr(dl, &addr) || dwarf_lineaddr(dn, &next) ||
		    next <= addr || dwarf_lineno(dl, &lineno) || lineno <= 0 ||
		    !(src = dwarf_linesrc(dl, NULL, NULL)))
			continue;
		if (src != raw) {
			if (!(full = full_name(w->s, cu, src)))
				return -HWT_ERR_NOMEM;
			raw = src;
		}
		sp->lo = addr;
		sp->hi = next;
		sp->cu = at;
		sp->src = full;
		sp->line = (unsigned)lineno;
		w->n++;
	}
	return 0;
}

static int span_cmp(const void *a, const void *b)
{
	const struct ln_span *x = a, *y = b;

	return (x->lo > y->lo) - (x->lo < y->lo);
}

int hwt_an_lines_code(struct hwt_an_lines *s, const char *path,
		      int (*fn)(void *ctx, uint64_t off, const uint8_t *code,
				size_t len, unsigned mode, const char *file,
				unsigned line),
		      void *ctx)
{
	struct ln_file *f = get(s, path);
	struct code_walk w = { s, NULL, 0, 0 };
	const uint8_t *raw;
	unsigned mode;
	size_t size;
	GElf_Ehdr eh;
	int r;

	if (!f)
		return -HWT_ERR_NOMEM;
	if (!f->dw || !f->elf || !gelf_getehdr(f->elf, &eh) ||
	    !(raw = (const uint8_t *)elf_rawfile(f->elf, &size)))
		return 0;
	if (eh.e_machine == EM_X86_64 && eh.e_ident[EI_CLASS] == ELFCLASS64)
		mode = HWT_MODE_64;
	else if (eh.e_machine == EM_386 || eh.e_machine == EM_X86_64)
		mode = HWT_MODE_32;
	else
		return 0;
	if (!f->have_ranges && make_ranges(f) < 0)
		return -HWT_ERR_NOMEM;
	r = each_unit(f->dw, unit_code_rows, &w);
	if (!r && w.n)
		qsort(w.v, w.n, sizeof(*w.v), span_cmp);
	for (size_t i = 0; !r && i < w.n; i++) {
		const struct ln_span *sp = &w.v[i];
		const struct ln_range *in = range_of(f, sp->lo);
		uint64_t off, last, hi;

		/* Only code its unit says is its own (not the padding after
		 * a function, which a row may reach over): what
		 * hwt_an_lines_at() finds a line for. Both ends in one
		 * segment, in the file. */
		if (!in || in->cu != sp->cu)
			continue;
		hi = sp->hi < in->hi ? sp->hi : in->hi;
		if (load_map(f, sp->lo, 0, &off) &&
		    load_map(f, hi - 1, 0, &last) &&
		    last - off == hi - 1 - sp->lo && last < size)
			r = fn(ctx, off, raw + off, (size_t)(last - off + 1),
			       mode, sp->src, sp->line);
	}
	free(w.v);
	return r;
}
