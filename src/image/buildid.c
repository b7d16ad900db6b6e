/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The GNU build-id note of an ELF file, as perf records it for each file
 * it saw mapped: to check that the file found now is the one that ran,
 * and to find its separate debug file.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "image/image_int.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

/* The note in @data, if it is there: its length (1 to 20) with @id
 * filled, else 0. */
static int note_build_id(Elf_Data *data, uint8_t id[20])
{
	GElf_Nhdr nhdr;
	size_t off = 0, next, name_off, desc_off;

	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nhdr, &name_off,
				    &desc_off)) > 0) {
		if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
		    nhdr.n_descsz &&
		    !memcmp((const char *)data->d_buf + name_off, "GNU", 4)) {
			size_t n = nhdr.n_descsz < 20 ? nhdr.n_descsz : 20;

			memset(id, 0, 20);
			memcpy(id, (const uint8_t *)data->d_buf + desc_off, n);
			return (int)n;
		}
		off = next;
	}
	return 0;
}

/* Sections first (what perf reads); program headers for stripped ones. */
int img_elf_build_id(Elf *elf, uint8_t id[20])
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	GElf_Phdr phdr;
	size_t n, i;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (data && (n = (size_t)note_build_id(data, id)))
			return (int)n;
	}
	if (elf_getphdrnum(elf, &n))
		return 0;
	for (i = 0; i < n; i++) {
		Elf_Data *data;

		if (!gelf_getphdr(elf, (int)i, &phdr) || phdr.p_type != PT_NOTE)
			continue;
		data = elf_getdata_rawchunk(elf, (int64_t)phdr.p_offset,
					    phdr.p_filesz, ELF_T_NHDR);
		if (data && (n = (size_t)note_build_id(data, id)))
			return (int)n;
	}
	return 0;
}

int hwt_image_build_id(const char *path, uint8_t id[20])
{
	struct stat st;
	Elf *elf;
	int fd, ret = 0;

	memset(id, 0, 20);
	/* A path from the recording may name a fifo or a device. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -HWT_ERR_IO;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -HWT_ERR_IO;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		close(fd);
		return -HWT_ERR_INTERNAL;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		ret = img_elf_build_id(elf, id);
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

/*
 * The whole id, as the note has it: a 20-byte id may end in zero bytes
 * (one in 256 does), and linkers write 8 (lld's fast), 16 (md5, uuid)
 * or any length given, so the zeros that pad @id to 20 bytes are not
 * told from the id's own by looking.
 */
char *img_debug_path(const char *dir, const uint8_t *id, int n)
{
	static const char digits[] = "0123456789abcdef";
	char hex[41], *path;

	for (int i = 0; i < n; i++) {
		hex[2 * i] = digits[id[i] >> 4];
		hex[2 * i + 1] = digits[id[i] & 15];
	}
	hex[2 * n] = '\0';
	if (asprintf(&path, "%s/.build-id/%.2s/%s.debug",
		     dir ? dir : "/usr/lib/debug", hex, hex + 2) < 0)
		return NULL;
	return path;
}

int hwt_image_debug_file(const char *path, const char *dir, char **debug)
{
	uint8_t id[20];
	int n = hwt_image_build_id(path, id);

	*debug = NULL;
	if (n <= 0)
		return n;
	*debug = img_debug_path(dir, id, n);
	return *debug ? 1 : -HWT_ERR_NOMEM;
}
