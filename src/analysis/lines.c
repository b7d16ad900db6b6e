/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Source lines from DWARF (elfutils libdw): the image says which file and
 * offset an address comes from; the file's PT_LOAD segments turn the
 * offset into its link-time address, which the line tables are keyed by.
 * A file without DWARF may have a separate debug file, found by build id
 * (/usr/lib/debug/.build-id/xx/yyyy.debug, as Debian's -dbgsym packages
 * install them). Each file is opened once.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdw.h>

#include <hwt/analysis.h>
#include <hwt/proc.h>

struct ln_file {
	char *path;
	int fd, dbg_fd;
	Elf *elf;		/* the mapped file: its segments */
	Dwarf *dw;		/* its DWARF, or the debug file's; NULL */
};

struct hwt_an_lines {
	struct ln_file *f;
	size_t n;
};

struct hwt_an_lines *hwt_an_lines_new(void)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	return calloc(1, sizeof(struct hwt_an_lines));
}

void hwt_an_lines_delete(struct hwt_an_lines *s)
{
	if (!s)
		return;
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
	}
	free(s->f);
	free(s);
}

static Dwarf *debug_file(struct ln_file *f)
{
	static const char hex[] = "0123456789abcdef";
	char path[128];
	uint8_t id[20];
	size_t n;
	Dwarf *dw;

	if (hwt_image_build_id(f->path, id) != 1)
		return NULL;
	n = (size_t)snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/");
	path[n++] = hex[id[0] >> 4];
	path[n++] = hex[id[0] & 15];
	path[n++] = '/';
	for (int i = 1; i < 20; i++) {
		path[n++] = hex[id[i] >> 4];
		path[n++] = hex[id[i] & 15];
	}
	snprintf(path + n, sizeof(path) - n, ".debug");
	f->dbg_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->dbg_fd < 0)
		return NULL;
	dw = dwarf_begin(f->dbg_fd, DWARF_C_READ);
	return dw;
}

static struct ln_file *get(struct hwt_an_lines *s, const char *path)
{
	struct ln_file *f;

	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->f[i].path, path))
			return &s->f[i];
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
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		return f;
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF)
		return f;
	f->dw = dwarf_begin_elf(f->elf, DWARF_C_READ, NULL);
	if (!f->dw)
		f->dw = debug_file(f);
	return f;
}

/* The link-time address of file offset @off: its PT_LOAD segment's. */
static int link_addr(Elf *elf, uint64_t off, uint64_t *addr)
{
	GElf_Phdr ph;
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    off < ph.p_offset || off - ph.p_offset >= ph.p_filesz)
			continue;
		*addr = ph.p_vaddr + (off - ph.p_offset);
		return 1;
	}
	return 0;
}

int hwt_an_lines_find(struct hwt_an_lines *s, const struct hwt_image *image,
		      uint64_t vaddr, const char **file, unsigned *line)
{
	const char *path, *src;
	struct ln_file *f;
	Dwarf_Line *dl;
	Dwarf_Die cu;
	uint64_t off, addr;
	int lineno;

	if (hwt_image_origin(image, vaddr, &path, &off) < 0)
		return 0;
	f = get(s, path);
	if (!f)
		return -HWT_ERR_NOMEM;
	if (!f->dw || !link_addr(f->elf, off, &addr) ||
	    !dwarf_addrdie(f->dw, addr, &cu))
		return 0;
	dl = dwarf_getsrc_die(&cu, addr);
	if (!dl || dwarf_lineno(dl, &lineno) || lineno <= 0)
		return 0;
	src = dwarf_linesrc(dl, NULL, NULL);
	if (!src)
		return 0;
	*file = src;
	*line = (unsigned)lineno;
	return 1;
}
