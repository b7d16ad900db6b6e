/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt image layer: the memory a trace executed.
 *
 * An image is a set of sections, each a range of a file (or of a buffer)
 * mapped at a virtual address. Files are mmap'd once and shared between
 * sections; reads hand out pointers into the mapping, never copies.
 * Sections added later shadow earlier ones where they overlap (as a new
 * mmap replaces an old one).
 *
 * Symbols come from the ELF files' .symtab/.dynsym (elfutils libelf),
 * demangled for C++ when a demangler is available.
 *
 * Prefix: hwt_image_.
 */
#ifndef HWT_IMAGE_H
#define HWT_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include <hwt/error.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hwt_image;

struct hwt_image *hwt_image_new(void);
void hwt_image_delete(struct hwt_image *image);

/*
 * Map [@offset, @offset + @size) of the file @path at @vaddr (@size 0:
 * to the end of the file). As ptxed's --raw file[:from[-to]]:base.
 */
int hwt_image_add_file(struct hwt_image *image, const char *path,
		       uint64_t offset, uint64_t size, uint64_t vaddr);

/* Map a caller-owned buffer (borrowed: must outlive the image). */
int hwt_image_add_buffer(struct hwt_image *image, const uint8_t *buf,
			 size_t size, uint64_t vaddr);

/*
 * Map the PT_LOAD segments of the ELF file @path, each at its p_vaddr +
 * @bias, and load its function symbols (.symtab and .dynsym). Like
 * ptxed's --elf, every PT_LOAD segment with file contents is mapped, not
 * only executable ones; symbols of files mapped earlier that start inside
 * the new segments are dropped. -HWT_ERR_IO if @path cannot be read,
 * -HWT_ERR_BAD_FORMAT if it is not an ELF file.
 */
int hwt_image_add_elf(struct hwt_image *image, const char *path,
		      uint64_t bias);

/*
 * Whether hwt_image_add_elf() and hwt_image_add_mmap() load symbols from
 * now on (@load 1, the default) or map the code alone (0). Reading a
 * library's symbols (demangled, its debug file looked up) costs about as
 * much as starting the process: a caller that never asks for them (ptxed,
 * counts, coverage) saves that for every file of every process image.
 */
void hwt_image_set_symbols(struct hwt_image *image, int load);

/*
 * Where hwt_image_add_elf() and hwt_image_add_mmap() look for the debug
 * file of a file without a .symtab (Debian's -dbg and -dbgsym packages
 * install them so): @dir/.build-id/ab/cdef....debug, by the file's build
 * id. NULL (the default): /usr/lib/debug; a recording analysed on another
 * machine has them below its root (perf's --symfs). The directory is
 * copied. Before any file is added, and before hwt_image_set_cache(): a
 * cache reads each file's symbols once, for all the images that share
 * it, so they must agree (see there). -HWT_ERR_INVALID otherwise, or
 * -HWT_ERR_NOMEM.
 */
int hwt_image_set_debug_dir(struct hwt_image *image, const char *dir);

/*
 * A cache of files and their symbols shared by images (the processes of
 * one recording): each file is mapped once and its symbols are read,
 * sorted and demangled once, at their link-time addresses, and placed at
 * each image's own address. Like libipt's image section cache. It lives
 * as long as the last image using it: hwt_image_cache_delete() drops the
 * caller's hold. Images on several threads may share one.
 */
struct hwt_image_cache;

struct hwt_image_cache *hwt_image_cache_new(void);
void hwt_image_cache_delete(struct hwt_image_cache *cache);

/*
 * The files @image maps come from @cache, which it holds until it is
 * deleted (without a cache, the image maps them itself). Once, before
 * any file is added; and the images that share a cache share its debug
 * directory (hwt_image_set_debug_dir()), the first one's: -HWT_ERR_INVALID
 * otherwise.
 */
int hwt_image_set_cache(struct hwt_image *image,
			struct hwt_image_cache *cache);

/*
 * As the kernel's mmap of [@pgoff, @pgoff + @len) of @path at @vaddr (an
 * MMAP2 record): those bytes are mapped (cut at the end of the file), and
 * if @path is an ELF file, its function symbols that fall inside
 * [@vaddr, @vaddr + @len), placed by the PT_LOAD segment that holds
 * @pgoff. What was mapped in [@vaddr, @vaddr + @len) goes first, as with
 * hwt_image_remove (also past the end of the file). A file
 * that is not ELF is mapped without symbols. -HWT_ERR_IO if @path cannot
 * be read, -HWT_ERR_INVALID if @pgoff is not inside the file.
 */
int hwt_image_add_mmap(struct hwt_image *image, const char *path,
		       uint64_t pgoff, uint64_t len, uint64_t vaddr);

/*
 * Unmap [@vaddr, @vaddr + @size): sections inside are dropped, sections
 * overlapping it are cut (as munmap). Symbols starting in the range go
 * too. The generation changes if anything was removed.
 */
int hwt_image_remove(struct hwt_image *image, uint64_t vaddr, uint64_t size);

/*
 * Drop every section and symbol (exec replaces the address space). Files
 * stay mapped: pointers from hwt_image_read and names from
 * hwt_image_symbol remain valid for the image's lifetime.
 */
void hwt_image_clear(struct hwt_image *image);

/*
 * The GNU build id of the ELF file @path, zero padded to 20 bytes: its
 * length (1 to 20: 20 for SHA-1, 16 for md5 or uuid, 8 for lld's fast)
 * if it has one, 0 if not (or not ELF), -HWT_ERR_IO if it cannot be read.
 */
int hwt_image_build_id(const char *path, uint8_t id[20]);

/*
 * Where the separate debug file of the ELF file @path is, by its build
 * id: @dir/.build-id/ab/cdef....debug (@dir NULL: /usr/lib/debug), as
 * hwt_image_set_debug_dir() looks for it. 1 with *@debug (malloc'd; it
 * may not exist), 0 if @path has no build id (or is not ELF; *@debug
 * NULL), or -HWT_ERR_IO / -HWT_ERR_NOMEM.
 */
int hwt_image_debug_file(const char *path, const char *dir, char **debug);

/*
 * The bytes at @vaddr: *@ptr points at them, *@avail is how many are
 * contiguous there (to the end of the section). -HWT_ERR_NOMAP if nothing
 * is mapped at @vaddr. The pointer stays valid for the image's lifetime.
 */
int hwt_image_read(const struct hwt_image *image, uint64_t vaddr,
		   const uint8_t **ptr, size_t *avail);

/*
 * Where the byte at @vaddr comes from: the file (its path as given when
 * it was first mapped, owned by the image) and the offset in it.
 * -HWT_ERR_NOMAP if nothing is mapped there, -HWT_ERR_NOT_SUPPORTED for
 * a caller's buffer (hwt_image_add_buffer).
 */
int hwt_image_origin(const struct hwt_image *image, uint64_t vaddr,
		     const char **path, uint64_t *offset);

/* A counter that changes whenever sections are added or removed, so
 * that caches keyed by address (decoded blocks) know to flush. */
uint64_t hwt_image_generation(const struct hwt_image *image);

/* The section holding an address: its extent, its bytes, and where they
 * come from (a file by device and inode, @off the file offset of
 * @begin; @dev and @ino 0 for a caller's buffer). */
struct hwt_image_span {
	uint64_t begin, end;
	const uint8_t *data;
	uint64_t dev, ino, off;
};

/*
 * The section holding @vaddr, in *@span: a cache of another image's code
 * (or of this one's before it changed) keeps what comes from the same
 * file at the same address. -HWT_ERR_NOMAP if nothing is mapped there.
 */
int hwt_image_span(const struct hwt_image *image, uint64_t vaddr,
		   struct hwt_image_span *span);

/*
 * The section whose bytes end at offset @off_end of the file @dev, @ino,
 * in *@span, wherever it is mapped: a cache of another process's code
 * keeps what comes from the same file at another address (a library
 * that address-space randomisation put elsewhere), moved. -HWT_ERR_NOMAP
 * if there is none.
 */
int hwt_image_span_of_file(const struct hwt_image *image, uint64_t dev,
			   uint64_t ino, uint64_t off_end,
			   struct hwt_image_span *span);

/* Not 0, and unique among the images made in this process, deleted ones
 * included: what caches of an image's code are keyed by. */
uint64_t hwt_image_id(const struct hwt_image *image);

/*
 * The symbol containing @vaddr: *@name (owned by the image) and the
 * offset into it. -HWT_ERR_NOMAP if none.
 */
int hwt_image_symbol(const struct hwt_image *image, uint64_t vaddr,
		     const char **name, uint64_t *offset);
/*
 * As hwt_image_symbol(), and *@end: from @vaddr up to there the answer is
 * the same (this symbol; or none, *@name NULL, until the next begins:
 * UINT64_MAX if none does).
 */
int hwt_image_symbol_extent(const struct hwt_image *image, uint64_t vaddr,
			    const char **name, uint64_t *offset,
			    uint64_t *end);
/*
 * As hwt_image_symbol_extent(), and *@start: the answer is the same from
 * there up to *@end, @vaddr included (a loop's jump back stays in it).
 */
int hwt_image_symbol_range(const struct hwt_image *image, uint64_t vaddr,
			   const char **name, uint64_t *offset,
			   uint64_t *start, uint64_t *end);

#ifdef __cplusplus
}
#endif

#endif /* HWT_IMAGE_H */
