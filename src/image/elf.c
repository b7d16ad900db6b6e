/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ELF files: loadable segments become sections, .symtab/.dynsym function
 * symbols become the image's symbols. libelf parses the headers; section
 * bytes and symbol names point into the image's own mapping of the file,
 * so nothing outlives the Elf handle by accident.
 */
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HWT_HAVE_DEMANGLE
#include <libiberty/demangle.h>
#endif

#include "image/image_int.h"

/* An ELF section's address range (biased), for unsized symbols. */
struct elf_scn_range {
	uint64_t begin;
	uint64_t end;
};

struct elf_load {
	struct hwt_image *image;
	const struct img_file *file;
	Elf *elf;
	uint64_t bias;
	/* Only symbols starting in [sym_lo, sym_hi) are kept. */
	uint64_t sym_lo, sym_hi;
	struct elf_scn_range *scns;	/* by section index; end 0: none */
	size_t nscns;
	struct img_sym *syms;
	size_t nsyms, capsyms;
	/* Read for the image cache (@all): no range, the names the cache's,
	 * and the highest address compared kept (img_csyms). */
	int all;
	uint64_t top;
};

/* Names made while reading: the cache's when reading for it. */
static int elf_own(struct elf_load *ld, char *s)
{
	return ld->all ? img_cache_own(ld->image->cache, s)
		       : img_own(ld->image, s);
}

static void elf_seen(struct elf_load *ld, uint64_t v)
{
	if (v > ld->top)
		ld->top = v;
}

/*
 * As ptxed's load_elf: every PT_LOAD segment with file contents, at
 * p_vaddr + bias, in program header order (a later segment shadows an
 * earlier one). Segments are cut at the end of the file, like libipt's
 * sections; .bss-like tails (p_memsz > p_filesz) are not mapped.
 */
static int elf_add_segments(struct elf_load *ld)
{
	const struct img_file *f = ld->file;
	GElf_Phdr phdr;
	size_t n, i;
	uint64_t size, vaddr;
	int err;

	if (elf_getphdrnum(ld->elf, &n))
		return -HWT_ERR_BAD_FORMAT;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(ld->elf, (int)i, &phdr))
			return -HWT_ERR_BAD_FORMAT;
		if (phdr.p_type != PT_LOAD || !phdr.p_filesz ||
		    phdr.p_offset >= f->size)
			continue;
		size = phdr.p_filesz;
		if (size > f->size - phdr.p_offset)
			size = f->size - phdr.p_offset;
		vaddr = phdr.p_vaddr + ld->bias;
		if (vaddr + size <= vaddr)
			continue;
		/* The new file's symbols replace old ones it covers. */
		img_sym_drop_range(ld->image, vaddr, vaddr + size);
		err = img_add_section(ld->image, f->map + phdr.p_offset, size,
				      vaddr);
		if (err == -HWT_ERR_NOMEM)
			return err;
	}
	return 0;
}

static int elf_read_scns(struct elf_load *ld)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	size_t n;

	if (elf_getshdrnum(ld->elf, &n))
		return -HWT_ERR_BAD_FORMAT;
	ld->scns = calloc(n ? n : 1, sizeof(*ld->scns));
	if (!ld->scns)
		return -HWT_ERR_NOMEM;
	ld->nscns = n;
	while ((scn = elf_nextscn(ld->elf, scn))) {
		size_t idx = elf_ndxscn(scn);

		if (idx >= n || !gelf_getshdr(scn, &shdr))
			continue;
		if (!(shdr.sh_flags & SHF_ALLOC) || !shdr.sh_size)
			continue;
		ld->scns[idx].begin = shdr.sh_addr + ld->bias;
		ld->scns[idx].end = shdr.sh_addr + shdr.sh_size + ld->bias;
		elf_seen(ld, ld->scns[idx].begin);
		elf_seen(ld, ld->scns[idx].end);
		if (ld->scns[idx].end < ld->scns[idx].begin)
			ld->scns[idx].end = 0;
	}
	return 0;
}

/*
 * The higher, the better a name for an address several symbols share: a
 * sized function, global, without reserved-looking leading underscores.
 */
static uint32_t sym_rank(const GElf_Sym *sym, const char *name)
{
	uint32_t rank = 0, us = 0;

	if (sym->st_size)
		rank |= 1u << 8;
	switch (GELF_ST_TYPE(sym->st_info)) {
	case STT_FUNC:
		rank |= 3u << 6;
		break;
	case STT_GNU_IFUNC:
		rank |= 2u << 6;
		break;
	default:
		rank |= 1u << 6;
		break;
	}
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		rank |= 3u << 4;
		break;
	case STB_WEAK:
		rank |= 2u << 4;
		break;
	default:
		rank |= 1u << 4;
		break;
	}
	while (us < 3 && name[us] == '_')
		us++;
	return rank | (3 - us);
}

/* The NUL-terminated string at @off of string table section @idx. */
static const char *elf_str(const struct elf_load *ld, size_t idx,
			   uint64_t off)
{
	const struct img_file *f = ld->file;
	Elf_Scn *scn = elf_getscn(ld->elf, idx);
	GElf_Shdr shdr;
	const char *s;

	if (!scn || !gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_STRTAB)
		return NULL;
	if (shdr.sh_offset > f->size || shdr.sh_size > f->size - shdr.sh_offset ||
	    off >= shdr.sh_size)
		return NULL;
	s = (const char *)f->map + shdr.sh_offset + off;
	if (!memchr(s, '\0', shdr.sh_size - off))
		return NULL;
	return s;
}

static int elf_push_sym(struct elf_load *ld, const GElf_Sym *sym,
			const char *name)
{
	struct img_sym *s;
	uint64_t begin = sym->st_value + ld->bias, end;
	unsigned int type = GELF_ST_TYPE(sym->st_info);
	int err;

	if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
		return 0;
	if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE)
		return 0;
	if (!ld->all && (begin < ld->sym_lo || begin >= ld->sym_hi))
		return 0;
	elf_seen(ld, begin);
	if (sym->st_size) {
		end = begin + sym->st_size;
		elf_seen(ld, end);
		if (end < begin)
			return 0;
	} else {
		/* Unsized: up to the end of its section. */
		if (type != STT_FUNC || sym->st_shndx >= ld->nscns)
			return 0;
		end = ld->scns[sym->st_shndx].end;
		if (begin < ld->scns[sym->st_shndx].begin || begin >= end)
			return 0;
	}
	err = hwt_grow((void **)&ld->syms, &ld->capsyms, ld->nsyms + 1,
			  sizeof(*ld->syms));
	if (err < 0)
		return err;
	s = &ld->syms[ld->nsyms++];
	s->begin = begin;
	s->end = end;
	s->maxend = end;
	s->name = name;
	s->rank = sym_rank(sym, name);
	return 0;
}

static int elf_read_symtab(struct elf_load *ld, Elf_Scn *scn,
			   const GElf_Shdr *shdr)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t symsz = gelf_fsize(ld->elf, ELF_T_SYM, 1, EV_CURRENT);
	size_t i, n;
	GElf_Sym sym;
	int err;

	if (!data || !symsz)
		return 0;
	n = data->d_size / symsz;
	for (i = 0; i < n; i++) {
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym) || !sym.st_name)
			continue;
		name = elf_str(ld, shdr->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		err = elf_push_sym(ld, &sym, name);
		if (err < 0)
			return err;
	}
	return 0;
}

/*
 * PLT stubs have no symbols of their own, yet every call into a shared
 * library goes through one: name them NAME@plt, as perf and gdb do. An
 * x86-64 stub's first branch is `jmp *GOT(%rip)' (after an endbr64 or a
 * bnd prefix with IBT/MPX); the GOT slot's relocation names the function.
 */
struct plt_slot {
	uint64_t got;		/* relocation offset (unbiased) */
	const char *name;
};

/* The R_X86_64_JUMP_SLOT / GLOB_DAT slots of one relocation section. */
static int plt_read_relocs(struct elf_load *ld, Elf_Scn *scn,
			   const GElf_Shdr *shdr, struct plt_slot **slots,
			   size_t *nslots, size_t *cap)
{
	Elf_Data *data = elf_getdata(scn, NULL), *symdata;
	size_t relsz = gelf_fsize(ld->elf, ELF_T_RELA, 1, EV_CURRENT);
	Elf_Scn *symscn = elf_getscn(ld->elf, shdr->sh_link);
	GElf_Shdr symshdr;

	if (!data || !relsz || !symscn || !gelf_getshdr(symscn, &symshdr) ||
	    !(symdata = elf_getdata(symscn, NULL)))
		return 0;
	for (size_t i = 0; i < data->d_size / relsz; i++) {
		GElf_Rela rela;
		GElf_Sym sym;
		const char *name;
		unsigned type;

		if (!gelf_getrela(data, (int)i, &rela))
			continue;
		type = (unsigned)GELF_R_TYPE(rela.r_info);
		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
			continue;
		if (!gelf_getsym(symdata, (int)GELF_R_SYM(rela.r_info), &sym) ||
		    !(name = elf_str(ld, symshdr.sh_link, sym.st_name)) ||
		    !*name)
			continue;
		if (hwt_grow((void **)slots, cap, *nslots + 1,
				sizeof(**slots)) < 0)
			return -HWT_ERR_NOMEM;
		(*slots)[*nslots].got = rela.r_offset;
		(*slots)[*nslots].name = name;
		(*nslots)++;
	}
	return 0;
}

static const char *plt_slot_name(const struct plt_slot *slots, size_t n,
				 uint64_t got)
{
	for (size_t i = 0; i < n; i++)
		if (slots[i].got == got)
			return slots[i].name;
	return NULL;
}

/* Name the stubs of one PLT section (.plt, .plt.sec, .plt.got). */
static int plt_name_stubs(struct elf_load *ld, size_t ndx,
			  const GElf_Shdr *shdr, const struct plt_slot *slots,
			  size_t nslots)
{
	const struct img_file *f = ld->file;
	uint64_t esz = shdr->sh_entsize >= 8 ? shdr->sh_entsize : 16;
	const uint8_t *sec;

	if (shdr->sh_type != SHT_PROGBITS || shdr->sh_offset > f->size ||
	    shdr->sh_size > f->size - shdr->sh_offset)
		return 0;
	sec = f->map + shdr->sh_offset;
	for (uint64_t off = 0; off + esz <= shdr->sh_size; off += esz) {
		const uint8_t *e = sec + off;
		GElf_Sym sym;
		const char *name;
		uint64_t k = 0, got;
		int32_t disp;
		char *n;
		int err;

		if (e[0] == 0xf3 && e[1] == 0x0f && e[2] == 0x1e && e[3] == 0xfa)
			k = 4;				/* endbr64 */
		if (e[k] == 0xf2)
			k++;				/* bnd */
		if (k + 6 > esz || e[k] != 0xff || e[k + 1] != 0x25)
			continue;
		memcpy(&disp, e + k + 2, sizeof(disp));
		got = shdr->sh_addr + off + k + 6 + (uint64_t)(int64_t)disp;
		name = plt_slot_name(slots, nslots, got);
		if (!name || asprintf(&n, "%s@plt", name) < 0)
			continue;
		if (elf_own(ld, n) < 0) {
			free(n);
			return -HWT_ERR_NOMEM;
		}
		memset(&sym, 0, sizeof(sym));
		sym.st_value = shdr->sh_addr + off;
		sym.st_size = esz;
		sym.st_info = GELF_ST_INFO(STB_LOCAL, STT_FUNC);
		sym.st_shndx = (uint16_t)ndx;
		err = elf_push_sym(ld, &sym, n);
		if (err < 0)
			return err;
	}
	return 0;
}

static int elf_add_plt_symbols(struct elf_load *ld)
{
	struct plt_slot *slots = NULL;
	size_t nslots = 0, cap = 0, shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	int err = 0;

	if (elf_getshdrstrndx(ld->elf, &shstrndx))
		return 0;
	while (!err && (scn = elf_nextscn(ld->elf, scn)))
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_RELA)
			err = plt_read_relocs(ld, scn, &shdr, &slots, &nslots,
					      &cap);
	while (!err && nslots && (scn = elf_nextscn(ld->elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &shdr) ||
		    !(name = elf_strptr(ld->elf, shstrndx, shdr.sh_name)))
			continue;
		if (!strcmp(name, ".plt") || !strcmp(name, ".plt.sec") ||
		    !strcmp(name, ".plt.got"))
			err = plt_name_stubs(ld, elf_ndxscn(scn), &shdr, slots,
					     nslots);
	}
	free(slots);
	return err;
}

#ifdef HWT_HAVE_DEMANGLE
/* Once per symbol at load time, so lookups stay allocation-free. */
static void elf_demangle(struct elf_load *ld)
{
	size_t i;

	for (i = 0; i < ld->nsyms; i++) {
		const char *name = ld->syms[i].name;
		char *d;

		if (name[0] != '_' || name[1] != 'Z')
			continue;
		d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
		if (!d)
			continue;
		if (elf_own(ld, d) < 0) {
			free(d);
			continue;
		}
		ld->syms[i].name = d;
	}
}
#else
static void elf_demangle(struct elf_load *ld)
{
	(void)ld;
}
#endif

/* Read @ld's symbol tables of @type (SHT_SYMTAB or SHT_DYNSYM); 1 if it
 * has one. */
static int elf_read_symtabs(struct elf_load *ld, uint32_t type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	int err, found = 0;

	while ((scn = elf_nextscn(ld->elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != type)
			continue;
		found = 1;
		err = elf_read_symtab(ld, scn, &shdr);
		if (err < 0)
			return err;
	}
	return found;
}

static int elf_open(struct elf_load *ld, const char *path, int *fd);
static void elf_close(struct elf_load *ld, int fd);

/*
 * A stripped file's full symbol table is in its separate debug file, as
 * Debian's -dbg and -dbgsym packages install it: by build id under
 * /usr/lib/debug, or the image's debug directory. Its names point into
 * that file, which the image keeps mapped like its other files. Nothing
 * if there is none.
 */
static int elf_read_debug_symtab(struct elf_load *ld)
{
	struct elf_load dbg = {
		.image = ld->image, .bias = ld->bias,
		.sym_lo = ld->sym_lo, .sym_hi = ld->sym_hi,
		.all = ld->all,
	};
	uint8_t id[20];
	char *path;
	int fd, err, n;

	n = img_elf_build_id(ld->elf, id);
	if (n <= 0)
		return 0;
	path = img_debug_path(ld->image->debug_dir, id, n);
	if (!path)
		return -HWT_ERR_NOMEM;
	err = elf_open(&dbg, path, &fd);
	free(path);
	if (err >= 0)
		err = elf_read_scns(&dbg);
	if (err >= 0)
		err = elf_read_symtabs(&dbg, SHT_SYMTAB);
	if (err > 0) {
		/* (The addresses the debug file's reading compared bound the
		 * cache's placements as the file's own do.) */
		elf_seen(ld, dbg.top);
		err = hwt_grow((void **)&ld->syms, &ld->capsyms,
				  ld->nsyms + dbg.nsyms, sizeof(*ld->syms));
		if (err >= 0 && dbg.nsyms) {
			memcpy(ld->syms + ld->nsyms, dbg.syms,
			       dbg.nsyms * sizeof(*dbg.syms));
			ld->nsyms += dbg.nsyms;
		}
	}
	elf_close(&dbg, fd);
	/* No debug file, or not a usable one: the file's own symbols. */
	return err == -HWT_ERR_NOMEM ? err : 0;
}

/* @ld's symbols into ld->syms: sorted, one an address, demangled. */
static int elf_read_symbols(struct elf_load *ld)
{
	GElf_Ehdr ehdr;
	int err;

	/* Relocatable files' symbol values are section offsets. */
	if (!gelf_getehdr(ld->elf, &ehdr) ||
	    (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN))
		return 0;
	err = elf_read_scns(ld);
	if (err < 0)
		return err;
	err = elf_read_symtabs(ld, SHT_DYNSYM);
	if (err >= 0)
		err = elf_read_symtabs(ld, SHT_SYMTAB);
	if (err == 0)
		err = elf_read_debug_symtab(ld);
	if (err >= 0 && ehdr.e_machine == EM_X86_64)
		err = elf_add_plt_symbols(ld);
	if (err < 0)
		return err;
	ld->nsyms = img_sym_sort_unique(ld->syms, ld->nsyms);
	elf_demangle(ld);
	return 0;
}

/* Fill the cache's symbols of @ld's file: read at bias 0, for all
 * addresses. 1, or an error. */
static int elf_read_cached(const struct elf_load *ld, struct img_csyms *cs)
{
	struct elf_load c = {
		.image = ld->image, .file = ld->file, .elf = ld->elf,
		.sym_hi = UINT64_MAX, .all = 1,
	};
	int err = elf_read_symbols(&c);

	free(c.scns);
	if (err < 0) {
		free(c.syms);
		return err;
	}
	cs->syms = c.syms;
	cs->n = c.nsyms;
	cs->top = c.top;
	return 1;
}

/*
 * The cache's symbols placed at @ld's bias and range, as reading the file
 * would give them, if the bias moves every address the reading compared
 * (all in [0, top]) without wrapping any past 2^64: then they keep their
 * order, and the same symbols pass the same checks in the same order. (An
 * end that wrapped at bias 0 is among them: below its begin, it stays
 * below, and the symbol or section is dropped as at bias 0.) Biases that
 * wrap are rare (a file placed below its link-time address) and read the
 * file again. 0 when placed, 1 if not (the file is to be read).
 */
static int elf_place_cached(struct elf_load *ld, const struct img_csyms *cs)
{
	uint64_t b = ld->bias;
	struct img_sym *out;
	size_t lo = 0, hi = cs->n, n = 0;
	int err;

	if (cs->top + b < b)
		return 1;
	/* In order when placed: those in range are a run. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cs->syms[mid].begin + b < ld->sym_lo)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (hi = lo; hi < cs->n && cs->syms[hi].begin + b < ld->sym_hi; hi++)
		;
	if (lo == hi)
		return 0;
	out = malloc((hi - lo) * sizeof(*out));
	if (!out)
		return -HWT_ERR_NOMEM;
	for (size_t i = lo; i < hi; i++) {
		out[n] = cs->syms[i];
		out[n].begin += b;
		out[n].end += b;
		n++;
	}
	err = img_sym_add(ld->image, out, n);
	free(out);
	return err;
}

static int elf_add_symbols(struct elf_load *ld)
{
	struct hwt_image_cache *cache = ld->image->cache;
	struct img_csyms *cs;
	int err;

	if (cache && ld->file->shared &&
	    (cs = img_cache_syms_lock(cache, ld->file->dev, ld->file->ino))) {
		if (!cs->state)
			cs->state = elf_read_cached(ld, cs);
		err = cs->state;
		img_cache_unlock(cache);
		if (err > 0) {
			err = elf_place_cached(ld, cs);
			if (err <= 0)
				return err;
		}
		/* (Failed for the cache, or not placeable: read here.) */
	}
	err = elf_read_symbols(ld);
	if (err < 0)
		return err;
	return img_sym_add(ld->image, ld->syms, ld->nsyms);
}

/* Open @path as an ELF file for @ld (file, fd, libelf handle). */
static int elf_open(struct elf_load *ld, const char *path, int *fd)
{
	int err;

	*fd = -1;
	err = img_file_open(ld->image, path, &ld->file, fd);
	if (err < 0)
		return err;
	if (ld->file->size < EI_NIDENT ||
	    memcmp(ld->file->map, ELFMAG, SELFMAG))
		return -HWT_ERR_BAD_FORMAT;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -HWT_ERR_INTERNAL;
	ld->elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!ld->elf || elf_kind(ld->elf) != ELF_K_ELF)
		return -HWT_ERR_BAD_FORMAT;
	return 0;
}

static void elf_close(struct elf_load *ld, int fd)
{
	if (ld->elf)
		elf_end(ld->elf);
	free(ld->scns);
	free(ld->syms);
	if (fd >= 0)
		close(fd);
}

int hwt_image_add_elf(struct hwt_image *image, const char *path,
		      uint64_t bias)
{
	struct elf_load ld = {
		.image = image, .bias = bias, .sym_hi = UINT64_MAX,
	};
	int fd, err;

	if (!image || !path)
		return -HWT_ERR_INVALID;
	err = elf_open(&ld, path, &fd);
	if (err >= 0)
		err = elf_add_segments(&ld);
	if (err >= 0 && !image->no_symbols)
		err = elf_add_symbols(&ld);
	elf_close(&ld, fd);
	return err;
}

/*
 * The bias that puts the file's link-time addresses where the mapping of
 * @pgoff at @vaddr puts them: from the PT_LOAD segment holding @pgoff
 * (the loader maps whole pages, so the segment may start inside the first
 * page). 0 with *@found 0 if no segment holds it.
 */
static uint64_t elf_mmap_bias(const struct elf_load *ld, uint64_t pgoff,
			      uint64_t vaddr, int *found)
{
	GElf_Phdr phdr;
	size_t n, i;
	uint64_t first;

	*found = 0;
	if (elf_getphdrnum(ld->elf, &n))
		return 0;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(ld->elf, (int)i, &phdr) ||
		    phdr.p_type != PT_LOAD || !phdr.p_filesz)
			continue;
		first = phdr.p_offset & ~(uint64_t)4095;
		if (pgoff < first || (pgoff > phdr.p_offset &&
				      pgoff - phdr.p_offset >= phdr.p_filesz))
			continue;
		*found = 1;
		return vaddr - pgoff + phdr.p_offset - phdr.p_vaddr;
	}
	return 0;
}

int hwt_image_add_mmap(struct hwt_image *image, const char *path,
		       uint64_t pgoff, uint64_t len, uint64_t vaddr)
{
	struct elf_load ld = { .image = image };
	uint64_t size;
	int fd, err, found;

	if (!image || !path || !len || vaddr + len <= vaddr)
		return -HWT_ERR_INVALID;
	err = elf_open(&ld, path, &fd);
	if (err == -HWT_ERR_BAD_FORMAT && ld.file) {
		/* Not ELF: the bytes, without symbols. */
		if (ld.elf)
			elf_end(ld.elf);
		ld.elf = NULL;
		err = 0;
	}
	if (err < 0)
		goto out;
	if (pgoff >= ld.file->size) {
		err = -HWT_ERR_INVALID;
		goto out;
	}
	size = ld.file->size - pgoff;
	if (size > len)
		size = len;
	/*
	 * All of [vaddr, vaddr + len) is replaced, also past the end of the
	 * file, with the symbols of what was there.
	 */
	err = hwt_image_remove(image, vaddr, len);
	if (err < 0)
		goto out;
	err = img_add_section(image, ld.file->map + pgoff, size, vaddr);
	if (err < 0 || !ld.elf || image->no_symbols)
		goto out;
	ld.bias = elf_mmap_bias(&ld, pgoff, vaddr, &found);
	ld.sym_lo = vaddr;
	ld.sym_hi = vaddr + len;
	if (found)
		err = elf_add_symbols(&ld);
out:
	elf_close(&ld, fd);
	return err;
}
