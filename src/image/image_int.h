/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Internals of the image layer, shared by image.c (sections, files) and
 * elf.c (ELF segments, symbols).
 */
#ifndef HWT_IMAGE_INT_H
#define HWT_IMAGE_INT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <libelf.h>

#include <hwt/image.h>

#include "common/grow.h"

/*
 * A file mapped read-only, whole, once per image. Mappings are kept until
 * the image is deleted even when every section using them was shadowed:
 * hwt_image_read promises its pointers live as long as the image.
 */
struct img_file {
	dev_t dev;
	ino_t ino;
	const uint8_t *map;
	size_t size;
	unsigned int refs;	/* hwt_image_add_* calls that used it */
	int shared;		/* @map is the image cache's, not the image's */
	char *path;		/* as first opened, for hwt_image_origin */
};

/*
 * [begin, end) at @data. Sections never overlap: adding one clips the
 * older ones it covers, so a lookup is one binary search.
 */
struct img_section {
	uint64_t begin;
	uint64_t end;
	const uint8_t *data;
};

/*
 * A function symbol covering [begin, end). @maxend is the largest end of
 * this and every earlier symbol in the sorted array: a backwards scan for
 * a symbol containing an address can stop once maxend <= address.
 */
struct img_sym {
	uint64_t begin;
	uint64_t end;
	uint64_t maxend;
	const char *name;
	uint32_t rank;		/* higher wins among symbols at one address */
};

struct hwt_image {
	struct img_section *secs;
	size_t nsecs, capsecs;
	/* The section of the last hit; mutable from const readers. */
	_Atomic size_t last;
	uint64_t id;		/* hwt_image_id() */
	int no_symbols;		/* hwt_image_set_symbols(image, 0) */
	uint64_t generation;

	struct img_file *files;
	size_t nfiles, capfiles;

	struct img_sym *syms;
	size_t nsyms, capsyms;

	/* Strings the image allocated (demangled names). */
	char **owned;
	size_t nowned, capowned;

	struct hwt_image_cache *cache;	/* held; NULL: none */
	char *debug_dir;	/* hwt_image_set_debug_dir(); NULL: default */
};

/* Map all @size bytes of the file @fd read-only into *@map (NULL if
 * @size is 0): for an image, or for the image cache. */
int img_map_fd(int fd, size_t size, const uint8_t **map);

/* Map @path (or find it already mapped); *@fdp gets an open fd if given. */
int img_file_open(struct hwt_image *image, const char *path,
		  const struct img_file **file, int *fdp);

/* Map [@data, @data + @size) at @vaddr, shadowing what it overlaps. */
int img_add_section(struct hwt_image *image, const uint8_t *data,
		    uint64_t size, uint64_t vaddr);

/* Drop the symbols starting in [@begin, @end). */
void img_sym_drop_range(struct hwt_image *image, uint64_t begin,
			uint64_t end);

/*
 * Sort @s by address, keep the best-ranked symbol at each address and set
 * maxend. Returns the new count.
 */
size_t img_sym_sort_unique(struct img_sym *s, size_t n);

/* Add @n symbols, sorted and one an address (img_sym_sort_unique()):
 * the image keeps the best-ranked at each address; takes no ownership of
 * names. */
int img_sym_add(struct hwt_image *image, const struct img_sym *syms,
		size_t n);

/* Keep @s until the image is deleted. */
int img_own(struct hwt_image *image, char *s);

/*
 * A file's symbols as the image cache keeps them (cache.c): read at bias
 * 0 and for all addresses, sorted, one an address, names owned by the
 * cache. @top: the highest address the reading compared (symbols' begins
 * and ends, sections'). At a bias that moves [0, @top] without wrapping
 * any of it past 2^64, reading the file gives these symbols, moved.
 */
struct img_csyms {
	int state;		/* 0: not read yet; 1: read; < 0: failed */
	uint64_t top;
	struct img_sym *syms;
	size_t n;
};

/* Take a hold on @cache (an image using it). */
void img_cache_hold(struct hwt_image_cache *cache);

/* The debug directory of the images that share @cache (NULL: the
 * default): the first image's is kept, the others' must be the same.
 * 0, -HWT_ERR_INVALID if not, or -HWT_ERR_NOMEM. */
int img_cache_debug_dir(struct hwt_image_cache *cache, const char *dir);

/* The mapping of the file @fd (whose fstat is @st), made once: *@map. */
int img_cache_map(struct hwt_image_cache *cache, int fd,
		  const struct stat *st, const uint8_t **map);

/*
 * The symbols of the cached file (@dev, @ino), with the cache locked
 * (a reader fills them if their state is 0) until img_cache_unlock(). NULL
 * (and not locked) if the cache does not have the file.
 */
struct img_csyms *img_cache_syms_lock(struct hwt_image_cache *cache,
				      dev_t dev, ino_t ino);
void img_cache_unlock(struct hwt_image_cache *cache);

/* Keep @s until the cache goes. */
int img_cache_own(struct hwt_image_cache *cache, char *s);

/* The GNU build id of an open ELF file (buildid.c): its length (1 to
 * 20, zero padded to 20 in @id), or 0 if none. */
int img_elf_build_id(Elf *elf, uint8_t id[20]);
/* Where the debug file of build @id (@n bytes) is below @dir (NULL:
 * /usr/lib/debug), malloc'd; NULL if out of memory. */
char *img_debug_path(const char *dir, const uint8_t *id, int n);

#endif /* HWT_IMAGE_INT_H */
