/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Image sections: a sorted array of non-overlapping address ranges, each
 * pointing into a file mapping or a caller's buffer.
 *
 * Overlaps follow libipt's pt_image_add: the newest section wins and an
 * older one it overlaps keeps only the parts in front of and behind it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/grow.h"
#include "image/image_int.h"

/*
 * Image ids (hwt_image_id()): the one counter of the library, shared by
 * every image of the process so that no two have the same id, even an
 * image allocated where a deleted one was (a decoder keeps block caches
 * by id, and must not take the old image's for the new one).
 */
static _Atomic uint64_t img_next_id = 1;

struct hwt_image *hwt_image_new(void)
{
	struct hwt_image *image = calloc(1, sizeof(*image));

	if (!image)
		return NULL;
	image->id = atomic_fetch_add_explicit(&img_next_id, 1,
					      memory_order_relaxed);
	atomic_init(&image->last, 0);
	/* A zeroed cache (generation 0) must never look current. */
	image->generation = 1;
	return image;
}

void hwt_image_delete(struct hwt_image *image)
{
	size_t i;

	if (!image)
		return;
	for (i = 0; i < image->nfiles; i++) {
		if (image->files[i].size && !image->files[i].shared)
			munmap((void *)image->files[i].map,
			       image->files[i].size);
		free(image->files[i].path);
	}
	for (i = 0; i < image->nowned; i++)
		free(image->owned[i]);
	free(image->files);
	free(image->secs);
	free(image->syms);
	free(image->owned);
	free(image->debug_dir);
	/* (Last: the symbols' names may be the cache's.) */
	hwt_image_cache_delete(image->cache);
	free(image);
}

int hwt_image_set_cache(struct hwt_image *image,
			struct hwt_image_cache *cache)
{
	/* Once, before any file: so the image's files and names are all of
	 * one owner, which it holds to the end. */
	int err;

	if (!image || !cache || image->cache || image->nfiles)
		return -HWT_ERR_INVALID;
	err = img_cache_debug_dir(cache, image->debug_dir);
	if (err < 0)
		return err;
	img_cache_hold(cache);
	image->cache = cache;
	return 0;
}

int hwt_image_set_debug_dir(struct hwt_image *image, const char *dir)
{
	if (!image || image->cache || image->nfiles)
		return -HWT_ERR_INVALID;
	return hwt_strset(&image->debug_dir, dir);
}

int img_own(struct hwt_image *image, char *s)
{
	int err;

	err = hwt_grow((void **)&image->owned, &image->capowned,
			  image->nowned + 1, sizeof(*image->owned));
	if (err < 0)
		return err;
	image->owned[image->nowned++] = s;
	return 0;
}

int img_map_fd(int fd, size_t size, const uint8_t **map)
{
	void *p;

	*map = NULL;
	if (!size)
		return 0;
	p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return errno == ENOMEM ? -HWT_ERR_NOMEM : -HWT_ERR_IO;
	*map = p;
	return 0;
}

int img_file_open(struct hwt_image *image, const char *path,
		  const struct img_file **file, int *fdp)
{
	struct img_file *f;
	struct stat st;
	const uint8_t *map;
	size_t i;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -HWT_ERR_IO;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err = -HWT_ERR_IO;
		goto out_close;
	}
	for (i = 0; i < image->nfiles; i++) {
		f = &image->files[i];
		if (f->dev == st.st_dev && f->ino == st.st_ino)
			goto found;
	}
	if ((uint64_t)st.st_size > SIZE_MAX) {
		err = -HWT_ERR_NOMEM;
		goto out_close;
	}
	err = hwt_grow((void **)&image->files, &image->capfiles,
			  image->nfiles + 1, sizeof(*image->files));
	if (err < 0)
		goto out_close;
	f = &image->files[image->nfiles];
	f->path = strdup(path);
	if (!f->path) {
		err = -HWT_ERR_NOMEM;
		goto out_close;
	}
	if (image->cache)
		err = img_cache_map(image->cache, fd, &st, &map);
	else
		err = img_map_fd(fd, (size_t)st.st_size, &map);
	if (err < 0) {
		free(f->path);
		goto out_close;
	}
	image->nfiles++;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->map = map;
	f->size = (size_t)st.st_size;
	f->refs = 0;
	f->shared = image->cache != NULL;
found:
	f->refs++;
	*file = f;
	if (fdp) {
		*fdp = fd;
		return 0;
	}
	err = 0;
out_close:
	close(fd);
	return err;
}

/* The first section ending after @vaddr (sections are sorted both ways). */
static size_t sec_first_end_after(const struct hwt_image *image,
				  uint64_t vaddr)
{
	size_t lo = 0, hi = image->nsecs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (image->secs[mid].end <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int img_add_section(struct hwt_image *image, const uint8_t *data,
		    uint64_t size, uint64_t vaddr)
{
	struct img_section front, back, *s;
	size_t lo, hi, n, nnew;
	uint64_t end;
	int err, has_front = 0, has_back = 0;

	/* The end must be representable: nothing reaches 2^64. */
	if (!size || vaddr + size <= vaddr || size > SIZE_MAX)
		return -HWT_ERR_INVALID;
	end = vaddr + size;

	/* Reserve first so that a failure leaves the image unchanged. */
	err = hwt_grow((void **)&image->secs, &image->capsecs,
			  image->nsecs + 3, sizeof(*image->secs));
	if (err < 0)
		return err;

	lo = sec_first_end_after(image, vaddr);
	for (hi = lo; hi < image->nsecs && image->secs[hi].begin < end; hi++)
		;
	if (lo < hi && image->secs[lo].begin < vaddr) {
		front = image->secs[lo];
		front.end = vaddr;
		has_front = 1;
	}
	if (lo < hi && image->secs[hi - 1].end > end) {
		back = image->secs[hi - 1];
		back.data += end - back.begin;
		back.begin = end;
		has_back = 1;
	}

	nnew = (size_t)has_front + 1 + (size_t)has_back;
	n = image->nsecs;
	memmove(&image->secs[lo + nnew], &image->secs[hi],
		(n - hi) * sizeof(*image->secs));
	s = &image->secs[lo];
	if (has_front)
		*s++ = front;
	s->begin = vaddr;
	s->end = end;
	s->data = data;
	s++;
	if (has_back)
		*s = back;
	image->nsecs = n - (hi - lo) + nnew;

	atomic_store_explicit(&image->last, lo + (size_t)has_front,
			      memory_order_relaxed);
	image->generation++;
	return 0;
}

int hwt_image_add_file(struct hwt_image *image, const char *path,
		       uint64_t offset, uint64_t size, uint64_t vaddr)
{
	const struct img_file *f;
	int err;

	if (!image || !path)
		return -HWT_ERR_INVALID;
	err = img_file_open(image, path, &f, NULL);
	if (err < 0)
		return err;
	if (offset >= f->size)
		return -HWT_ERR_INVALID;
	/* Like libipt: a range running past the end of the file is cut. */
	if (!size || size > f->size - offset)
		size = f->size - offset;
	return img_add_section(image, f->map + offset, size, vaddr);
}

int hwt_image_add_buffer(struct hwt_image *image, const uint8_t *buf,
			 size_t size, uint64_t vaddr)
{
	if (!image || !buf)
		return -HWT_ERR_INVALID;
	return img_add_section(image, buf, size, vaddr);
}

/* The section containing @vaddr, or SIZE_MAX. */
static size_t sec_find(const struct hwt_image *image, uint64_t vaddr)
{
	size_t i = sec_first_end_after(image, vaddr);

	if (i < image->nsecs && image->secs[i].begin <= vaddr)
		return i;
	return SIZE_MAX;
}

int hwt_image_read(const struct hwt_image *image, uint64_t vaddr,
		   const uint8_t **ptr, size_t *avail)
{
	struct hwt_image *mut = (struct hwt_image *)image;
	const struct img_section *s;
	size_t i;

	if (!image || !ptr || !avail)
		return -HWT_ERR_INVALID;

	/* Consecutive reads almost always hit the same section. */
	i = atomic_load_explicit(&mut->last, memory_order_relaxed);
	if (i < image->nsecs) {
		s = &image->secs[i];
		if (vaddr - s->begin < s->end - s->begin)
			goto hit;
	}
	i = sec_find(image, vaddr);
	if (i == SIZE_MAX)
		return -HWT_ERR_NOMAP;
	atomic_store_explicit(&mut->last, i, memory_order_relaxed);
	s = &image->secs[i];
hit:
	*ptr = s->data + (vaddr - s->begin);
	*avail = (size_t)(s->end - vaddr);
	return 0;
}

/* The mapped file holding host byte @p, or NULL (a caller's buffer).
 * Rare (symbolising a few addresses; a section once, when a cache
 * carries its entries over): a scan of the files. */
static const struct img_file *file_of(const struct hwt_image *image,
				      const uint8_t *p)
{
	for (size_t i = 0; i < image->nfiles; i++) {
		const struct img_file *f = &image->files[i];

		if (f->size && p >= f->map && p < f->map + f->size)
			return f;
	}
	return NULL;
}

int hwt_image_origin(const struct hwt_image *image, uint64_t vaddr,
		     const char **path, uint64_t *offset)
{
	const struct img_file *f;
	const uint8_t *p;
	size_t i;

	if (!image || !path || !offset)
		return -HWT_ERR_INVALID;
	i = sec_find(image, vaddr);
	if (i == SIZE_MAX)
		return -HWT_ERR_NOMAP;
	p = image->secs[i].data + (vaddr - image->secs[i].begin);
	f = file_of(image, p);
	if (!f)
		return -HWT_ERR_NOT_SUPPORTED;
	*path = f->path;
	*offset = (uint64_t)(p - f->map);
	return 0;
}

/* Section @s as a span: @f the file holding its bytes, or NULL. */
static void span_of(struct hwt_image_span *span, const struct img_section *s,
		    const struct img_file *f)
{
	span->begin = s->begin;
	span->end = s->end;
	span->data = s->data;
	span->dev = span->ino = span->off = 0;
	if (f) {
		span->dev = (uint64_t)f->dev;
		span->ino = (uint64_t)f->ino;
		span->off = (uint64_t)(s->data - f->map);
	}
}

int hwt_image_span(const struct hwt_image *image, uint64_t vaddr,
		   struct hwt_image_span *span)
{
	size_t i;

	if (!image || !span)
		return -HWT_ERR_INVALID;
	i = sec_find(image, vaddr);
	if (i == SIZE_MAX)
		return -HWT_ERR_NOMAP;
	span_of(span, &image->secs[i], file_of(image, image->secs[i].data));
	return 0;
}

int hwt_image_span_of_file(const struct hwt_image *image, uint64_t dev,
			   uint64_t ino, uint64_t off_end,
			   struct hwt_image_span *span)
{
	if (!image || !span)
		return -HWT_ERR_INVALID;
	/* (Once a section when a cache carries its entries over.) */
	for (size_t i = 0; i < image->nsecs; i++) {
		const struct img_section *s = &image->secs[i];
		const struct img_file *f = file_of(image, s->data);

		if (f && (uint64_t)f->dev == dev && (uint64_t)f->ino == ino &&
		    (uint64_t)(s->data - f->map) + (s->end - s->begin) ==
			    off_end) {
			span_of(span, s, f);
			return 0;
		}
	}
	return -HWT_ERR_NOMAP;
}

void hwt_image_set_symbols(struct hwt_image *image, int load)
{
	if (image)
		image->no_symbols = !load;
}

uint64_t hwt_image_id(const struct hwt_image *image)
{
	return image ? image->id : 0;
}

uint64_t hwt_image_generation(const struct hwt_image *image)
{
	return image ? image->generation : 0;
}

int hwt_image_remove(struct hwt_image *image, uint64_t vaddr, uint64_t size)
{
	struct img_section front, back, *s;
	size_t lo, hi, n, nnew, nsyms;
	uint64_t end;
	int has_front = 0, has_back = 0;

	if (!image || !size || vaddr + size <= vaddr)
		return -HWT_ERR_INVALID;
	end = vaddr + size;

	/* Cutting a hole into one section makes two of it. */
	if (hwt_grow((void **)&image->secs, &image->capsecs,
			image->nsecs + 1, sizeof(*image->secs)) < 0)
		return -HWT_ERR_NOMEM;

	lo = sec_first_end_after(image, vaddr);
	for (hi = lo; hi < image->nsecs && image->secs[hi].begin < end; hi++)
		;
	nsyms = image->nsyms;
	img_sym_drop_range(image, vaddr, end);
	if (lo == hi) {
		if (nsyms != image->nsyms)
			image->generation++;
		return 0;
	}
	if (image->secs[lo].begin < vaddr) {
		front = image->secs[lo];
		front.end = vaddr;
		has_front = 1;
	}
	if (image->secs[hi - 1].end > end) {
		back = image->secs[hi - 1];
		back.data += end - back.begin;
		back.begin = end;
		has_back = 1;
	}
	nnew = (size_t)has_front + (size_t)has_back;
	n = image->nsecs;
	memmove(&image->secs[lo + nnew], &image->secs[hi],
		(n - hi) * sizeof(*image->secs));
	s = &image->secs[lo];
	if (has_front)
		*s++ = front;
	if (has_back)
		*s = back;
	image->nsecs = n - (hi - lo) + nnew;
	atomic_store_explicit(&image->last, 0, memory_order_relaxed);
	image->generation++;
	return 0;
}

/*
 * The file mappings and owned names stay: hwt_image_read's pointers and
 * hwt_image_symbol's names are promised for the image's lifetime, and a
 * file mapped again after an exec is found among them.
 */
void hwt_image_clear(struct hwt_image *image)
{
	if (!image)
		return;
	image->nsecs = 0;
	image->nsyms = 0;
	atomic_store_explicit(&image->last, 0, memory_order_relaxed);
	image->generation++;
}
