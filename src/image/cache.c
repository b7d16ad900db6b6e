/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The image cache: files mapped once, and their symbols read once, for
 * all the images of a recording. A shell script's perf.data has dozens of
 * processes mapping the same libraries, and each image mapped each file
 * and read, sorted and demangled its symbols again: 13% of hwt calls'
 * instructions on a loop of 62 processes.
 *
 * One lock for everything: a file's symbols are read with it held, and
 * reading them may map the file's debug file through the same cache, so
 * the lock is recursive. What it hands out (mappings, filled symbol
 * lists, names) never changes or moves after, and is read without it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "image/image_int.h"

struct imgc_file {
	dev_t dev;
	ino_t ino;
	const uint8_t *map;
	size_t size;
	struct img_csyms syms;
};

struct hwt_image_cache {
	pthread_mutex_t lock;
	atomic_uint holds;
	struct imgc_file **files;	/* each allocated: handed out */
	size_t nfiles, capfiles;
	char **owned;			/* names made (demangled, @plt) */
	size_t nowned, capowned;
	/* The images' debug directory (NULL: the default), once one is set
	 * up (@dir_set). */
	char *debug_dir;
	int dir_set;
};

struct hwt_image_cache *hwt_image_cache_new(void)
{
	struct hwt_image_cache *c = calloc(1, sizeof(*c));
	pthread_mutexattr_t attr;

	if (!c)
		return NULL;
	if (pthread_mutexattr_init(&attr)) {
		free(c);
		return NULL;
	}
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	if (pthread_mutex_init(&c->lock, &attr)) {
		pthread_mutexattr_destroy(&attr);
		free(c);
		return NULL;
	}
	pthread_mutexattr_destroy(&attr);
	atomic_init(&c->holds, 1);
	return c;
}

void img_cache_hold(struct hwt_image_cache *cache)
{
	atomic_fetch_add_explicit(&cache->holds, 1, memory_order_relaxed);
}

void hwt_image_cache_delete(struct hwt_image_cache *cache)
{
	if (!cache || atomic_fetch_sub_explicit(&cache->holds, 1,
						memory_order_acq_rel) != 1)
		return;
	for (size_t i = 0; i < cache->nfiles; i++) {
		struct imgc_file *f = cache->files[i];

		if (f->size)
			munmap((void *)f->map, f->size);
		free(f->syms.syms);
		free(f);
	}
	for (size_t i = 0; i < cache->nowned; i++)
		free(cache->owned[i]);
	free(cache->files);
	free(cache->owned);
	free(cache->debug_dir);
	pthread_mutex_destroy(&cache->lock);
	free(cache);
}

int img_cache_debug_dir(struct hwt_image_cache *cache, const char *dir)
{
	int err = 0;

	pthread_mutex_lock(&cache->lock);
	if (!cache->dir_set) {
		if (dir && !(cache->debug_dir = strdup(dir)))
			err = -HWT_ERR_NOMEM;
		else
			cache->dir_set = 1;
	} else if (dir ? !cache->debug_dir || strcmp(dir, cache->debug_dir)
		       : cache->debug_dir != NULL) {
		err = -HWT_ERR_INVALID;
	}
	pthread_mutex_unlock(&cache->lock);
	return err;
}

static struct imgc_file *cache_find(const struct hwt_image_cache *cache,
				    dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < cache->nfiles; i++)
		if (cache->files[i]->dev == dev && cache->files[i]->ino == ino)
			return cache->files[i];
	return NULL;
}

static int cache_add(struct hwt_image_cache *cache, int fd,
		     const struct stat *st, const uint8_t **map)
{
	struct imgc_file *f;
	int err;

	err = hwt_grow((void **)&cache->files, &cache->capfiles,
		       cache->nfiles + 1, sizeof(*cache->files));
	if (err < 0)
		return err;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -HWT_ERR_NOMEM;
	/* (img_file_open() checked that the size fits a size_t.) */
	err = img_map_fd(fd, (size_t)st->st_size, &f->map);
	if (err < 0) {
		free(f);
		return err;
	}
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->size = (size_t)st->st_size;
	cache->files[cache->nfiles++] = f;
	*map = f->map;
	return 0;
}

int img_cache_map(struct hwt_image_cache *cache, int fd,
		  const struct stat *st, const uint8_t **map)
{
	struct imgc_file *f;
	int err = 0;

	pthread_mutex_lock(&cache->lock);
	f = cache_find(cache, st->st_dev, st->st_ino);
	if (f)
		*map = f->map;
	else
		err = cache_add(cache, fd, st, map);
	pthread_mutex_unlock(&cache->lock);
	return err;
}

struct img_csyms *img_cache_syms_lock(struct hwt_image_cache *cache,
				      dev_t dev, ino_t ino)
{
	struct imgc_file *f;

	pthread_mutex_lock(&cache->lock);
	f = cache_find(cache, dev, ino);
	if (!f) {
		pthread_mutex_unlock(&cache->lock);
		return NULL;
	}
	return &f->syms;
}

void img_cache_unlock(struct hwt_image_cache *cache)
{
	pthread_mutex_unlock(&cache->lock);
}

int img_cache_own(struct hwt_image_cache *cache, char *s)
{
	int err;

	pthread_mutex_lock(&cache->lock);
	err = hwt_grow((void **)&cache->owned, &cache->capowned,
		       cache->nowned + 1, sizeof(*cache->owned));
	if (err >= 0)
		cache->owned[cache->nowned++] = s;
	pthread_mutex_unlock(&cache->lock);
	return err;
}
