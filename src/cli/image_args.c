/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Image options shared by hwt ptxed, flow, calls and coverage:
 *   --raw FILE[:FROM[-TO]]:BASE   a range of a file at BASE
 *   --elf FILE[:ADDR]             the loadable segments of an ELF file
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hwt/image.h>

#include "cli/cli.h"

/* A trailing ":NUMBER" (split off @s) into @v; 1 if there was one. */
static int split_number(char *s, uint64_t *v)
{
	char *sep = strrchr(s, ':');

	if (!sep || !sep[1] || cli_parse_u64(sep + 1, v))
		return 0;
	*sep = '\0';
	return 1;
}

/* A trailing ":FROM[-TO]" (split off @s). Returns 0, or -1 if bad. */
static int split_range(char *s, uint64_t *offset, uint64_t *size)
{
	char *sep = strrchr(s, ':'), *dash;
	uint64_t from, to;

	*offset = 0;
	*size = 0;
	if (!sep)
		return 0;
	dash = strchr(sep + 1, '-');
	if (dash)
		*dash = '\0';
	if (cli_parse_u64(sep + 1, &from)) {
		/* Not a range: the ':' is part of the file name. */
		if (dash)
			*dash = '-';
		return 0;
	}
	if (dash) {
		if (cli_parse_u64(dash + 1, &to) || to <= from) {
			*dash = '-';
			return -1;
		}
		*size = to - from;
	}
	*offset = from;
	*sep = '\0';
	return 0;
}

/* A readable regular file, or one clear line on stderr. */
static int check_file(const char *prog, const char *path)
{
	struct stat st;

	if (stat(path, &st)) {
		fprintf(stderr, "%s: cannot open %s: %s.\n", prog, path,
			strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "%s: %s: not a regular file.\n", prog, path);
		return -1;
	}
	if (access(path, R_OK)) {
		fprintf(stderr, "%s: cannot read %s: %s.\n", prog, path,
			strerror(errno));
		return -1;
	}
	return 0;
}

int cli_image_raw(struct hwt_image *image, const char *arg, const char *prog)
{
	uint64_t base, offset, size;
	struct stat st;
	char *path;
	int err;

	path = strdup(arg);
	if (!path) {
		fprintf(stderr, "%s: out of memory.\n", prog);
		return -1;
	}
	if (!split_number(path, &base)) {
		fprintf(stderr, "%s: --raw %s: missing base address "
			"(FILE[:FROM[-TO]]:BASE).\n", prog, arg);
		goto err;
	}
	if (split_range(path, &offset, &size) < 0) {
		fprintf(stderr, "%s: --raw %s: bad range.\n", prog, arg);
		goto err;
	}
	if (check_file(prog, path))
		goto err;
	if (stat(path, &st) == 0 &&
	    (offset >= (uint64_t)st.st_size ||
	     (size && offset + size > (uint64_t)st.st_size))) {
		fprintf(stderr, "%s: --raw %s: range beyond the end of the file "
			"(size 0x%" PRIx64 ").\n", prog, arg,
			(uint64_t)st.st_size);
		goto err;
	}
	err = hwt_image_add_file(image, path, offset, size, base);
	if (err < 0) {
		fprintf(stderr, "%s: failed to add %s at 0x%" PRIx64 ": %s.\n",
			prog, path, base, hwt_errstr(err));
		goto err;
	}
	free(path);
	return 0;
err:
	free(path);
	return -1;
}

/* The lowest p_vaddr of a PT_LOAD segment of the ELF file at @path. */
static int elf_min_vaddr(const char *path, uint64_t *min)
{
	GElf_Phdr phdr;
	size_t n, i;
	Elf *elf;
	int fd, ret = -1;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && !elf_getphdrnum(elf, &n)) {
		*min = UINT64_MAX;
		for (i = 0; i < n; i++)
			if (gelf_getphdr(elf, (int)i, &phdr) &&
			    phdr.p_type == PT_LOAD && phdr.p_vaddr < *min)
				*min = phdr.p_vaddr;
		ret = *min == UINT64_MAX ? -1 : 0;
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

int cli_image_elf(struct hwt_image *image, const char *arg, const char *prog,
		  int load_address)
{
	uint64_t addr = 0, min, bias;
	int has_addr, err;
	char *path;

	path = strdup(arg);
	if (!path) {
		fprintf(stderr, "%s: out of memory.\n", prog);
		return -1;
	}
	has_addr = split_number(path, &addr);
	if (check_file(prog, path))
		goto err;
	bias = addr;
	if (has_addr && load_address) {
		/* ptxed: the lowest segment goes at @addr. */
		if (elf_min_vaddr(path, &min) < 0) {
			fprintf(stderr, "%s: %s: not an ELF file with loadable "
				"segments.\n", prog, path);
			goto err;
		}
		bias = addr - min;
	}
	err = hwt_image_add_elf(image, path, bias);
	if (err == -HWT_ERR_BAD_FORMAT) {
		fprintf(stderr, "%s: %s: not an ELF file.\n", prog, path);
		goto err;
	}
	if (err < 0) {
		fprintf(stderr, "%s: failed to load ELF %s: %s.\n", prog, path,
			hwt_errstr(err));
		goto err;
	}
	free(path);
	return 0;
err:
	free(path);
	return -1;
}
