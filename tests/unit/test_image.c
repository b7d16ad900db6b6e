/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The image layer: sections from buffers and files, libipt's shadowing of
 * overlapping sections (checked against a byte-level model), and ELF
 * loading and symbols, using this test's own executable.
 */
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <hwt/image.h>

#include "image/image_int.h"

/* ---- functions whose symbols the ELF tests look up ---- */

int hwt_image_test_probe(int x);
int hwt_image_test_probe(int x)
{
	return x * 3 + 1;
}

/* A C++-mangled name: hwt_mangled_probe(int). */
int hwt_mangled_probe(int x) __asm__("_Z17hwt_mangled_probei");
int hwt_mangled_probe(int x)
{
	return x - 7;
}

#if defined(__x86_64__) || defined(__i386__)
#define HAVE_UNSIZED 1
/* A function symbol without a size, as hand-written assembly has. */
__asm__(".text\n"
	".globl hwt_unsized_label\n"
	".type hwt_unsized_label, @function\n"
	"hwt_unsized_label:\n"
	"\tret\n\tnop\n\tnop\n\tnop\n");
void hwt_unsized_label(void);
#endif

static uint64_t rnd(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void expect_read(const struct hwt_image *image, uint64_t vaddr,
			const uint8_t *ptr, size_t avail)
{
	const uint8_t *p = NULL;
	size_t n = 0;

	assert_int_equal(hwt_image_read(image, vaddr, &p, &n), 0);
	assert_ptr_equal(p, ptr);
	assert_int_equal(n, avail);
}

static void expect_nomap(const struct hwt_image *image, uint64_t vaddr)
{
	const uint8_t *p;
	size_t n;

	assert_int_equal(hwt_image_read(image, vaddr, &p, &n),
			 -HWT_ERR_NOMAP);
}

/* ---- sections ---- */

static void test_empty(void **state)
{
	struct hwt_image *image = hwt_image_new();
	const char *name;
	uint64_t off;

	(void)state;
	assert_non_null(image);
	expect_nomap(image, 0);
	expect_nomap(image, UINT64_MAX);
	assert_int_equal(hwt_image_symbol(image, 0x1000, &name, &off),
			 -HWT_ERR_NOMAP);
	hwt_image_delete(image);
	hwt_image_delete(NULL);
}

static void test_buffer(void **state)
{
	struct hwt_image *image = hwt_image_new();
	uint8_t buf[16];
	uint64_t gen;

	(void)state;
	gen = hwt_image_generation(image);
	assert_int_equal(hwt_image_add_buffer(image, buf, sizeof(buf), 0x1000),
			 0);
	assert_int_not_equal(hwt_image_generation(image), gen);
	expect_read(image, 0x1000, buf, 16);
	expect_read(image, 0x1007, buf + 7, 9);
	expect_read(image, 0x100f, buf + 15, 1);
	expect_nomap(image, 0x1010);
	expect_nomap(image, 0xfff);
	expect_nomap(image, 0);

	/* Empty and address-wrapping sections are refused. */
	assert_int_equal(hwt_image_add_buffer(image, buf, 0, 0x2000),
			 -HWT_ERR_INVALID);
	assert_int_equal(hwt_image_add_buffer(image, buf, 16, UINT64_MAX - 4),
			 -HWT_ERR_INVALID);
	assert_int_equal(hwt_image_add_buffer(NULL, buf, 16, 0),
			 -HWT_ERR_INVALID);

	/* Sections end below 2^64 (their end must be representable). */
	assert_int_equal(hwt_image_add_buffer(image, buf, 16,
					      UINT64_MAX - 15),
			 -HWT_ERR_INVALID);
	assert_int_equal(hwt_image_add_buffer(image, buf, 16,
					      UINT64_MAX - 16), 0);
	expect_read(image, UINT64_MAX - 1, buf + 15, 1);
	expect_nomap(image, UINT64_MAX);
	expect_read(image, 0x1000, buf, 16);
	hwt_image_delete(image);
}

static void test_shadow(void **state)
{
	struct hwt_image *image = hwt_image_new();
	uint8_t a[0x100], b[0x20], c[0x300], d[0x10];

	(void)state;
	assert_int_equal(hwt_image_add_buffer(image, a, sizeof(a), 0x1000), 0);
	/* Inside: a is split around b. */
	assert_int_equal(hwt_image_add_buffer(image, b, sizeof(b), 0x1040), 0);
	expect_read(image, 0x1000, a, 0x40);
	expect_read(image, 0x103f, a + 0x3f, 1);
	expect_read(image, 0x1040, b, 0x20);
	expect_read(image, 0x105f, b + 0x1f, 1);
	expect_read(image, 0x1060, a + 0x60, 0xa0);
	expect_read(image, 0x10ff, a + 0xff, 1);
	expect_nomap(image, 0x1100);

	/* Over the front of a's first piece and the start of nothing. */
	assert_int_equal(hwt_image_add_buffer(image, d, sizeof(d), 0xff8), 0);
	expect_read(image, 0xff8, d, 0x10);
	expect_read(image, 0x1008, a + 8, 0x38);

	/* Over the tail of b and the head of a's back piece. */
	assert_int_equal(hwt_image_add_buffer(image, d, sizeof(d), 0x1058), 0);
	expect_read(image, 0x1040, b, 0x18);
	expect_read(image, 0x1058, d, 0x10);
	expect_read(image, 0x1068, a + 0x68, 0x98);

	/* Exactly over an existing piece. */
	assert_int_equal(hwt_image_add_buffer(image, b, 0x18, 0x1040), 0);
	expect_read(image, 0x1040, b, 0x18);

	/* Covering everything. */
	assert_int_equal(hwt_image_add_buffer(image, c, sizeof(c), 0xf00), 0);
	expect_read(image, 0xf00, c, 0x300);
	expect_read(image, 0x1058, c + 0x158, 0x1a8);
	expect_nomap(image, 0xeff);
	expect_nomap(image, 0x1200);

	/* The old pieces come back nowhere. */
	assert_int_equal(hwt_image_add_buffer(image, a, sizeof(a), 0x1200), 0);
	expect_read(image, 0x11ff, c + 0x2ff, 1);
	expect_read(image, 0x1200, a, 0x100);
	hwt_image_delete(image);
}

/*
 * Random overlapping adds against a model holding, per address, which add
 * mapped it and at which pointer. A section runs as long as the same add
 * continues (an add's pieces are never adjacent: something is between).
 */
#define MODEL_SPAN 512
#define MODEL_BASE 0x7fff0000ull

static void test_shadow_model(void **state)
{
	static uint8_t pool[MODEL_SPAN];
	const uint8_t *mptr[MODEL_SPAN];
	int madd[MODEL_SPAN];
	uint64_t seed = 42;
	int round;

	(void)state;
	for (round = 0; round < 200; round++) {
		struct hwt_image *image = hwt_image_new();
		int add, i, nadds = 1 + (int)(rnd(&seed) % 12);

		for (i = 0; i < MODEL_SPAN; i++)
			madd[i] = -1;
		for (add = 0; add < nadds; add++) {
			uint64_t begin = rnd(&seed) % MODEL_SPAN;
			uint64_t size = 1 + rnd(&seed) % (MODEL_SPAN - begin);
			const uint8_t *buf = pool + rnd(&seed) % 64;
			uint64_t k;

			if (size > MODEL_SPAN - 64)
				size = MODEL_SPAN - 64;
			if (begin + size > MODEL_SPAN)
				size = MODEL_SPAN - begin;
			assert_int_equal(hwt_image_add_buffer(image, buf, size,
							      MODEL_BASE + begin),
					 0);
			for (k = 0; k < size; k++) {
				madd[begin + k] = add;
				mptr[begin + k] = buf + k;
			}
		}
		/* In random order, so the last-hit cache is exercised too. */
		for (i = 0; i < 4 * MODEL_SPAN; i++) {
			int at = i < MODEL_SPAN ? i : (int)(rnd(&seed) % MODEL_SPAN);
			size_t run;

			if (madd[at] < 0) {
				expect_nomap(image, MODEL_BASE + (uint64_t)at);
				continue;
			}
			for (run = 1; at + run < MODEL_SPAN &&
			     madd[at + run] == madd[at]; run++)
				;
			expect_read(image, MODEL_BASE + (uint64_t)at, mptr[at],
				    run);
		}
		expect_nomap(image, MODEL_BASE - 1);
		expect_nomap(image, MODEL_BASE + MODEL_SPAN);
		hwt_image_delete(image);
	}
}

/* ---- files ---- */

struct tmpfile {
	char path[64];
	uint8_t data[100];
};

static void tmpfile_make(struct tmpfile *t, size_t size)
{
	size_t i;
	int fd;

	strcpy(t->path, "/tmp/hwt_test_image_XXXXXX");
	fd = mkstemp(t->path);
	assert_true(fd >= 0);
	for (i = 0; i < sizeof(t->data); i++)
		t->data[i] = (uint8_t)(i * 7 + 1);
	assert_int_equal(write(fd, t->data, size), (ssize_t)size);
	close(fd);
}

static void test_file(void **state)
{
	struct hwt_image *image = hwt_image_new();
	const uint8_t *p, *q;
	struct tmpfile t;
	size_t n;

	(void)state;
	tmpfile_make(&t, 100);

	/* Size 0: to the end of the file. */
	assert_int_equal(hwt_image_add_file(image, t.path, 3, 0, 0x5000), 0);
	assert_int_equal(hwt_image_read(image, 0x5000, &p, &n), 0);
	assert_int_equal(n, 97);
	assert_memory_equal(p, t.data + 3, 97);
	expect_nomap(image, 0x5000 + 97);

	/* A range; the same file is mapped once. */
	assert_int_equal(hwt_image_add_file(image, t.path, 10, 4, 0x9000), 0);
	assert_int_equal(hwt_image_read(image, 0x9000, &q, &n), 0);
	assert_int_equal(n, 4);
	assert_memory_equal(q, t.data + 10, 4);
	assert_ptr_equal(q, p + 7);
	expect_nomap(image, 0x9004);

	/* A range past the end is cut at the end, as in libipt. */
	assert_int_equal(hwt_image_add_file(image, t.path, 90, 50, 0xa000), 0);
	expect_read(image, 0xa000, p + 87, 10);

	/* An offset at or past the end maps nothing. */
	assert_int_equal(hwt_image_add_file(image, t.path, 100, 0, 0xb000),
			 -HWT_ERR_INVALID);
	expect_nomap(image, 0xb000);

	/* Neither a missing file nor a directory. */
	assert_int_equal(hwt_image_add_file(image, "/nonexistent/hwt.bin", 0,
					    0, 0xc000), -HWT_ERR_IO);
	assert_int_equal(hwt_image_add_file(image, "/tmp", 0, 0, 0xc000),
			 -HWT_ERR_IO);
	expect_nomap(image, 0xc000);

	/* Spans: where the bytes come from, by address, and the section
	 * whose bytes end at a file offset, wherever it is mapped. */
	{
		struct hwt_image_span sp, by;
		struct stat st;

		assert_int_equal(stat(t.path, &st), 0);
		assert_int_equal(hwt_image_span(image, 0x9002, &sp), 0);
		assert_true(sp.begin == 0x9000 && sp.end == 0x9004);
		assert_true(sp.dev == (uint64_t)st.st_dev &&
			    sp.ino == (uint64_t)st.st_ino && sp.off == 10);
		assert_ptr_equal(sp.data, q);
		assert_int_equal(hwt_image_span_of_file(image, sp.dev, sp.ino,
							14, &by),
				 0);
		assert_memory_equal(&by, &sp, sizeof(by));
		assert_int_equal(hwt_image_span_of_file(image, sp.dev, sp.ino,
							100, &by),
				 0);
		assert_true(by.begin == 0x5000 || by.begin == 0xa000);
		assert_int_equal(by.end - by.begin + by.off, 100);
		assert_int_equal(hwt_image_span_of_file(image, sp.dev, sp.ino,
							13, &by),
				 -HWT_ERR_NOMAP);
		assert_int_equal(hwt_image_span_of_file(image, sp.dev,
							sp.ino + 1, 14, &by),
				 -HWT_ERR_NOMAP);
		assert_int_equal(hwt_image_span_of_file(image, sp.dev + 1,
							sp.ino, 14, &by),
				 -HWT_ERR_NOMAP);
		assert_int_equal(hwt_image_span_of_file(NULL, sp.dev, sp.ino,
							14, &by),
				 -HWT_ERR_INVALID);
	}

	unlink(t.path);
	/* The mapping outlives the file's name. */
	expect_read(image, 0x5000, p, 97);
	assert_int_equal(p[50], t.data[53]);
	hwt_image_delete(image);
}

static void test_elf_errors(void **state)
{
	struct hwt_image *image = hwt_image_new();
	struct tmpfile t;

	(void)state;
	assert_int_equal(hwt_image_add_elf(image, "/nonexistent/hwt.elf", 0),
			 -HWT_ERR_IO);

	tmpfile_make(&t, 100);
	assert_int_equal(hwt_image_add_elf(image, t.path, 0),
			 -HWT_ERR_BAD_FORMAT);
	unlink(t.path);

	tmpfile_make(&t, 0);
	assert_int_equal(hwt_image_add_elf(image, t.path, 0),
			 -HWT_ERR_BAD_FORMAT);
	unlink(t.path);

	/* An ELF magic with garbage behind it. */
	tmpfile_make(&t, 0);
	{
		FILE *f = fopen(t.path, "wb");
		static const char junk[] = "\177ELF\377\377\377junkjunkjunk";

		assert_non_null(f);
		assert_int_equal(fwrite(junk, sizeof(junk), 1, f), 1);
		fclose(f);
	}
	assert_int_equal(hwt_image_add_elf(image, t.path, 0),
			 -HWT_ERR_BAD_FORMAT);
	unlink(t.path);
	expect_nomap(image, 0);
	hwt_image_delete(image);
}

/* ---- ELF: this test's own executable ---- */

static int find_main_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	/* The main program comes first, with an empty name. */
	*(uint64_t *)arg = info->dlpi_addr;
	return 1;
}

static uint64_t self_bias(void)
{
	uint64_t bias = 0;

	dl_iterate_phdr(find_main_bias, &bias);
	return bias;
}

static void expect_symbol(const struct hwt_image *image, uint64_t vaddr,
			  const char *want, uint64_t want_off)
{
	const char *name = NULL;
	uint64_t off = ~0ull;

	assert_int_equal(hwt_image_symbol(image, vaddr, &name, &off), 0);
	assert_string_equal(name, want);
	assert_int_equal(off, want_off);
}

static void test_elf_self(void **state)
{
	struct hwt_image *image = hwt_image_new();
	uint64_t probe = (uint64_t)(uintptr_t)&hwt_image_test_probe;
	const uint8_t *p;
	size_t n;

	(void)state;
	assert_int_equal(hwt_image_add_elf(image, "/proc/self/exe",
					   self_bias()), 0);

	/* The code the image maps is the code that runs. */
	assert_int_equal(hwt_image_read(image, probe, &p, &n), 0);
	assert_true(n >= 8);
	assert_memory_equal(p, (const void *)(uintptr_t)probe, 8);

	expect_symbol(image, probe, "hwt_image_test_probe", 0);
	expect_symbol(image, probe + 3, "hwt_image_test_probe", 3);
	expect_symbol(image, (uint64_t)(uintptr_t)&test_elf_self,
		      "test_elf_self", 0);
	/* A library function linked into the test. */
	expect_symbol(image, (uint64_t)(uintptr_t)&hwt_image_read,
		      "hwt_image_read", 0);

#if defined(__has_include)
#if __has_include(<libiberty/demangle.h>)
	expect_symbol(image, (uint64_t)(uintptr_t)&hwt_mangled_probe,
		      "hwt_mangled_probe(int)", 0);
#else
	expect_symbol(image, (uint64_t)(uintptr_t)&hwt_mangled_probe,
		      "_Z17hwt_mangled_probei", 0);
#endif
#endif

#ifdef HAVE_UNSIZED
	/* Unsized: the nearest symbol below, within its section. */
	expect_symbol(image, (uint64_t)(uintptr_t)&hwt_unsized_label + 2,
		      "hwt_unsized_label", 2);
#endif
	{
		const char *name;
		uint64_t off;

		assert_int_equal(hwt_image_symbol(image, 0x10, &name, &off),
				 -HWT_ERR_NOMAP);
	}

	/* Loading it again at the same place changes nothing visible. */
	assert_int_equal(hwt_image_add_elf(image, "/proc/self/exe",
					   self_bias()), 0);
	expect_symbol(image, probe + 1, "hwt_image_test_probe", 1);
	expect_read(image, probe, p, n);
	hwt_image_delete(image);
}

static void test_elf_bias(void **state)
{
	struct hwt_image *image = hwt_image_new();
	uint64_t probe = (uint64_t)(uintptr_t)&hwt_image_test_probe;
	uint64_t bias = self_bias(), moved = 0x100000000000ull;
	const uint8_t *p, *q;
	size_t n, m;

	(void)state;
	assert_int_equal(hwt_image_add_elf(image, "/proc/self/exe", bias), 0);
	assert_int_equal(hwt_image_add_elf(image, "/proc/self/exe",
					   bias + moved), 0);
	/* Both copies share one mapping of the file. */
	assert_int_equal(hwt_image_read(image, probe, &p, &n), 0);
	assert_int_equal(hwt_image_read(image, probe + moved, &q, &m), 0);
	assert_ptr_equal(p, q);
	assert_int_equal(n, m);
	expect_symbol(image, probe + moved + 2, "hwt_image_test_probe", 2);
	expect_symbol(image, probe + 2, "hwt_image_test_probe", 2);

	/* A raw section over the code shadows the ELF's bytes. */
	{
		static const uint8_t nops[4] = { 0x90, 0x90, 0x90, 0x90 };

		assert_int_equal(hwt_image_add_buffer(image, nops, 4, probe),
				 0);
		expect_read(image, probe, nops, 4);
		expect_read(image, probe + 4, p + 4, n - 4);
	}
	hwt_image_delete(image);
}


/* ---- remove and clear ---- */

/*
 * As test_shadow_model, with removes among the adds: a byte-level model
 * of which add maps each byte, and whether the generation moved exactly
 * when a remove took something away.
 */
static void test_remove_model(void **state)
{
	static uint8_t pool[MODEL_SPAN];
	const uint8_t *mptr[MODEL_SPAN];
	int madd[MODEL_SPAN];
	uint64_t seed = 7;
	int round;

	(void)state;
	for (round = 0; round < 200; round++) {
		struct hwt_image *image = hwt_image_new();
		int op, i, nops = 1 + (int)(rnd(&seed) % 16);

		for (i = 0; i < MODEL_SPAN; i++)
			madd[i] = -1;
		for (op = 0; op < nops; op++) {
			uint64_t begin = rnd(&seed) % MODEL_SPAN;
			uint64_t size = 1 + rnd(&seed) % (MODEL_SPAN - begin);
			const uint8_t *buf = pool + rnd(&seed) % 64;
			uint64_t k, gen = hwt_image_generation(image);
			int mapped = 0;

			if (size > MODEL_SPAN - 64)
				size = MODEL_SPAN - 64;
			if (rnd(&seed) % 3) {
				assert_int_equal(hwt_image_add_buffer(image, buf,
						 size, MODEL_BASE + begin), 0);
				for (k = 0; k < size; k++) {
					madd[begin + k] = op;
					mptr[begin + k] = buf + k;
				}
				assert_true(hwt_image_generation(image) != gen);
				continue;
			}
			assert_int_equal(hwt_image_remove(image,
						MODEL_BASE + begin, size), 0);
			for (k = 0; k < size; k++) {
				mapped |= madd[begin + k] >= 0;
				madd[begin + k] = -1;
			}
			if (mapped)
				assert_true(hwt_image_generation(image) != gen);
			else
				assert_true(hwt_image_generation(image) == gen);
		}
		for (i = 0; i < 4 * MODEL_SPAN; i++) {
			int at = i < MODEL_SPAN ? i : (int)(rnd(&seed) % MODEL_SPAN);
			size_t run;

			if (madd[at] < 0) {
				expect_nomap(image, MODEL_BASE + (uint64_t)at);
				continue;
			}
			for (run = 1; at + run < MODEL_SPAN &&
			     madd[at + run] == madd[at]; run++)
				;
			expect_read(image, MODEL_BASE + (uint64_t)at, mptr[at],
				    run);
		}
		hwt_image_delete(image);
	}
}

static void test_remove_cases(void **state)
{
	static const uint8_t buf[64];
	struct hwt_image *image = hwt_image_new();
	uint64_t gen;

	(void)state;
	assert_int_equal(hwt_image_add_buffer(image, buf, 64, 0x1000), 0);
	/* A hole in the middle leaves both ends. */
	assert_int_equal(hwt_image_remove(image, 0x1010, 0x10), 0);
	expect_read(image, 0x1000, buf, 0x10);
	expect_nomap(image, 0x1010);
	expect_nomap(image, 0x101f);
	expect_read(image, 0x1020, buf + 0x20, 0x20);
	/* Across both pieces and beyond. */
	assert_int_equal(hwt_image_remove(image, 0x1008, 0x1000), 0);
	expect_read(image, 0x1000, buf, 8);
	expect_nomap(image, 0x1008);
	expect_nomap(image, 0x1030);

	/* Bad ranges change nothing. */
	gen = hwt_image_generation(image);
	assert_int_equal(hwt_image_remove(image, 0x1000, 0), -HWT_ERR_INVALID);
	assert_int_equal(hwt_image_remove(image, ~0ull - 4, 8),
			 -HWT_ERR_INVALID);
	assert_int_equal(hwt_image_remove(NULL, 0x1000, 1), -HWT_ERR_INVALID);
	assert_true(hwt_image_generation(image) == gen);
	expect_read(image, 0x1000, buf, 8);

	/* Up to the top of the address space. */
	assert_int_equal(hwt_image_add_buffer(image, buf, 64, ~0ull - 64), 0);
	assert_int_equal(hwt_image_remove(image, ~0ull - 32, 32), 0);
	expect_read(image, ~0ull - 64, buf, 32);
	expect_nomap(image, ~0ull - 32);

	hwt_image_clear(image);
	assert_true(hwt_image_generation(image) != gen);
	expect_nomap(image, 0x1000);
	expect_nomap(image, ~0ull - 64);
	hwt_image_clear(NULL);
	hwt_image_delete(image);
}

static void expect_no_symbol(const struct hwt_image *image, uint64_t vaddr)
{
	const char *name = NULL;
	uint64_t off = 0;

	if (hwt_image_symbol(image, vaddr, &name, &off) != -HWT_ERR_NOMAP)
		fail_msg("symbol at 0x%llx: %s+0x%llx", (unsigned long long)vaddr,
			 name, (unsigned long long)off);
}

/*
 * Not @name at @vaddr. Other symbols may cover it: an unsized label
 * (hwt_unsized_label) reaches to the end of its section.
 */
static void expect_not_symbol(const struct hwt_image *image, uint64_t vaddr,
			      const char *name)
{
	const char *got = NULL;
	uint64_t off = 0;

	if (hwt_image_symbol(image, vaddr, &got, &off) == 0 &&
	    !strcmp(got, name))
		fail_msg("symbol at 0x%llx: still %s", (unsigned long long)vaddr,
			 got);
}

/* hwt_image_symbol() at @a: symbol @name (the pointer) starting at
 * @begin, or none if @name is NULL. */
static void expect_answer(const struct hwt_image *image, uint64_t a,
			  const char *name, uint64_t begin)
{
	const char *got = NULL;
	uint64_t off = 0;
	int err = hwt_image_symbol(image, a, &got, &off);

	if (!name) {
		assert_int_equal(err, -HWT_ERR_NOMAP);
		return;
	}
	assert_int_equal(err, 0);
	assert_ptr_equal(got, name);
	assert_int_equal(a - off, begin);
}

/*
 * hwt_image_symbol_extent(): from an address up to the end it gives,
 * hwt_image_symbol() answers the same, byte by byte over 256 KiB of this
 * program's code (functions, their gaps, the unsized label).
 */
static void test_symbol_extent(void **state)
{
	struct hwt_image *image = hwt_image_new();
	uint64_t mid = (uint64_t)(uintptr_t)&hwt_image_test_probe;
	uint64_t lo = mid > (128u << 10) ? mid - (128u << 10) : 0;
	uint64_t start = 0, end = 0, off, changes = 0;
	const char *name = NULL;
	int have = 0, err;

	(void)state;
	assert_int_equal(hwt_image_add_elf(image, "/proc/self/exe",
					   self_bias()), 0);
	for (uint64_t a = lo; a < mid + (128u << 10); a++) {
		if (a >= end) {
			err = hwt_image_symbol_extent(image, a, &name, &off,
						      &end);
			assert_true(end > a);
			have = err == 0;
			if (have)
				start = a - off;
			else
				assert_int_equal(err, -HWT_ERR_NOMAP);
			changes++;
			continue;
		}
		expect_answer(image, a, have ? name : NULL, start);
	}
	/* It moves on at symbols, not at every byte. */
	assert_true(changes > 10 && changes < (32u << 10));
	/* And hwt_image_symbol_range() down to its start: the same,
	 * downwards. */
	changes = 0;
	start = end = 0;
	for (uint64_t a = mid + (128u << 10); a-- > lo;) {
		uint64_t s0, e0;

		if (a < start || !changes) {
			err = hwt_image_symbol_range(image, a, &name, &off,
						     &s0, &e0);
			assert_true(s0 <= a && a < e0);
			have = err == 0;
			if (have)
				end = a - off;	/* (the symbol's start) */
			else
				assert_int_equal(err, -HWT_ERR_NOMAP);
			start = s0;
			changes++;
			continue;
		}
		expect_answer(image, a, have ? name : NULL, end);
	}
	assert_true(changes > 10 && changes < (32u << 10));
	hwt_image_delete(image);
}


/* The order the image keeps symbols in, written again here (the model
 * must not share the code it checks): by address, then higher rank, then
 * name. */
static int ref_sym_cmp(const void *a, const void *b)
{
	const struct img_sym *x = a, *y = b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* @s sorted (stably), the first at each address kept, maxends set. */
static size_t ref_sort_unique(struct img_sym *s, size_t n)
{
	uint64_t maxend = 0;
	size_t m = 0;

	/* (Insertion sort: stable, and the model's arrays are small.) */
	for (size_t i = 1; i < n; i++) {
		struct img_sym x = s[i];
		size_t j = i;

		for (; j && ref_sym_cmp(&s[j - 1], &x) > 0; j--)
			s[j] = s[j - 1];
		s[j] = x;
	}
	for (size_t i = 0; i < n; i++) {
		if (m && s[m - 1].begin == s[i].begin)
			continue;
		s[m] = s[i];
		if (s[m].end > maxend)
			maxend = s[m].end;
		s[m++].maxend = maxend;
	}
	return m;
}

/*
 * The image's symbols as files come and go: each batch merged into the
 * sorted array (img_sym_add()), ranges dropped (img_sym_drop_range()),
 * held against sorting everything ever added, less what was dropped,
 * again (a stable sort of the test's own): field for field, maxend
 * included, with many symbols at one address (ranks and names decide).
 */
static void test_symbol_merge_model(void **state)
{
	static const char *const names[] = { "a", "b", "c", "main", "_start" };
	enum { ROUNDS = 300, BATCH = 40, ALL = ROUNDS * BATCH };
	static struct img_sym all[ALL], want[ALL];
	struct img_sym batch[BATCH];
	struct hwt_image *image = hwt_image_new();
	uint64_t seed = 42;
	size_t nall = 0, added = 0, drops = 0;

	(void)state;
	assert_non_null(image);
	for (unsigned r = 0; r < ROUNDS; r++) {
		size_t n = rnd(&seed) % BATCH, nw;

		if (rnd(&seed) % 4 == 0) {
			uint64_t lo = rnd(&seed) % 600, hi = lo + rnd(&seed) % 80;
			size_t m = 0;

			img_sym_drop_range(image, lo, hi);
			drops++;
			for (size_t k = 0; k < nall; k++)
				if (all[k].begin < lo || all[k].begin >= hi)
					all[m++] = all[k];
			nall = m;
		}
		for (size_t k = 0; k < n; k++) {
			batch[k].begin = rnd(&seed) % 600;
			batch[k].end = batch[k].begin + rnd(&seed) % 50;
			batch[k].rank = (uint32_t)(rnd(&seed) % 3);
			batch[k].name = names[rnd(&seed) % 5];
			batch[k].maxend = 0;
		}
		memcpy(&all[nall], batch, n * sizeof(*batch));
		nall += n;
		added += n;
		n = img_sym_sort_unique(batch, n);
		assert_int_equal(img_sym_add(image, batch, n), 0);

		memcpy(want, all, nall * sizeof(*all));
		nw = ref_sort_unique(want, nall);
		assert_int_equal(image->nsyms, nw);
		for (size_t k = 0; k < nw; k++) {
			assert_int_equal(image->syms[k].begin, want[k].begin);
			assert_int_equal(image->syms[k].end, want[k].end);
			assert_int_equal(image->syms[k].maxend, want[k].maxend);
			assert_int_equal(image->syms[k].rank, want[k].rank);
			assert_string_equal(image->syms[k].name, want[k].name);
		}
	}
	assert_true(added > 4000 && drops > 40 && image->nsyms > 100);
	hwt_image_delete(image);
}

static void test_remove_symbols(void **state)
{
	struct hwt_image *image = hwt_image_new();
	uint64_t probe = (uint64_t)(uintptr_t)&hwt_image_test_probe;
	uint64_t other = (uint64_t)(uintptr_t)&hwt_image_read;
	const uint8_t *p;
	const char *name;
	uint64_t gen, off;
	size_t n;

	(void)state;
	assert_int_equal(hwt_image_add_elf(image, "/proc/self/exe",
					   self_bias()), 0);
	assert_int_equal(hwt_image_read(image, probe, &p, &n), 0);
	assert_int_equal(hwt_image_symbol(image, other, &name, &off), 0);

	/* The probe's bytes and its symbol go; other functions stay. */
	gen = hwt_image_generation(image);
	assert_int_equal(hwt_image_remove(image, probe, 1), 0);
	assert_true(hwt_image_generation(image) != gen);
	expect_nomap(image, probe);
	expect_not_symbol(image, probe, "hwt_image_test_probe");
	expect_read(image, probe + 1, p + 1, n - 1);
	expect_symbol(image, other, "hwt_image_read", 0);

	/* Clear: nothing is left, but earlier pointers and names live on. */
	gen = hwt_image_generation(image);
	hwt_image_clear(image);
	assert_true(hwt_image_generation(image) != gen);
	expect_nomap(image, other);
	expect_no_symbol(image, other);
	expect_no_symbol(image, probe + 1);
	assert_string_equal(name, "hwt_image_read");
	assert_memory_equal(p + 1, (const uint8_t *)(uintptr_t)probe + 1, 4);

	/* And the image works again after it. */
	assert_int_equal(hwt_image_add_elf(image, "/proc/self/exe",
					   self_bias()), 0);
	expect_symbol(image, probe, "hwt_image_test_probe", 0);
	hwt_image_delete(image);
}

/* ---- mmap: a file range, as the loader maps it ---- */

struct self_text {
	uint64_t start, len, pgoff;	/* the executable PT_LOAD, paged */
	uint64_t p_vaddr, p_offset;
};

static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct self_text *t = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t end;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		t->p_vaddr = ph->p_vaddr;
		t->p_offset = ph->p_offset;
		t->start = info->dlpi_addr + (ph->p_vaddr & ~4095ull);
		t->pgoff = ph->p_offset & ~4095ull;
		end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		t->len = ((end + 4095) & ~4095ull) - t->start;
		break;
	}
	return 1;	/* the main program only */
}

static void test_mmap_self(void **state)
{
	struct hwt_image *image = hwt_image_new();
	uint64_t probe = (uint64_t)(uintptr_t)&hwt_image_test_probe;
	uint64_t moved = 0x200000000000ull, page, pgoff;
	struct self_text t = { 0 };
	const uint8_t *p;
	struct tmpfile tf;
	size_t n;

	(void)state;
	dl_iterate_phdr(find_text, &t);
	assert_true(t.len > 0);
	assert_true(probe >= t.start && probe < t.start + t.len);

	/* The text mapping as the kernel made it: code and symbols. */
	assert_int_equal(hwt_image_add_mmap(image, "/proc/self/exe", t.pgoff,
					    t.len, t.start), 0);
	assert_int_equal(hwt_image_read(image, probe, &p, &n), 0);
	assert_memory_equal(p, (const void *)(uintptr_t)probe, 8);
	expect_symbol(image, probe + 2, "hwt_image_test_probe", 2);
	expect_symbol(image, (uint64_t)(uintptr_t)&hwt_image_read,
		      "hwt_image_read", 0);

	/* One page from the middle of the segment, somewhere else. */
	page = probe & ~4095ull;
	pgoff = t.pgoff + (page - t.start);
	assert_int_equal(hwt_image_add_mmap(image, "/proc/self/exe", pgoff,
					    4096, page + moved), 0);
	expect_read(image, probe + moved, p, (size_t)(page + 4096 - probe));
	expect_symbol(image, probe + moved, "hwt_image_test_probe", 0);
	/* Only symbols inside the mapping were loaded there. */
	expect_no_symbol(image, page + moved - 1);
	if (((uint64_t)(uintptr_t)&hwt_image_read & ~4095ull) != page)
		expect_not_symbol(image,
				  (uint64_t)(uintptr_t)&hwt_image_read + moved,
				  "hwt_image_read");

	/* Mapping something over it drops its symbols. */
	tmpfile_make(&tf, 100);
	assert_int_equal(hwt_image_add_mmap(image, tf.path, 0, 4096,
					    page + moved), 0);
	assert_int_equal(hwt_image_read(image, page + moved, &p, &n), 0);
	assert_int_equal(n, 100);
	assert_memory_equal(p, tf.data, 100);
	expect_nomap(image, page + moved + 100);
	expect_no_symbol(image, page + moved);
	expect_no_symbol(image, probe + moved);
	expect_symbol(image, probe, "hwt_image_test_probe", 0);

	/* Errors leave the image as it was. */
	assert_int_equal(hwt_image_add_mmap(image, tf.path, 100, 4096, 0x1000),
			 -HWT_ERR_INVALID);
	assert_int_equal(hwt_image_add_mmap(image, tf.path, 0, 0, 0x1000),
			 -HWT_ERR_INVALID);
	assert_int_equal(hwt_image_add_mmap(image, "/nonexistent/x", 0, 4096,
					    0x1000), -HWT_ERR_IO);
	expect_nomap(image, 0x1000);
	unlink(tf.path);
	hwt_image_delete(image);
}

/* Without symbols: the same code, no names. */
/* ---- the image cache ---- */

/* This test's executable and the libraries it runs with. */
struct test_files {
	char path[8][256];
	size_t n;
};

static int find_files(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct test_files *f = arg;

	(void)size;
	if (f->n < 8 && info->dlpi_name[0] == '/' &&
	    strlen(info->dlpi_name) < sizeof(f->path[0]) &&
	    !access(info->dlpi_name, R_OK))
		strcpy(f->path[f->n++], info->dlpi_name);
	return 0;
}

static void test_files_get(struct test_files *f)
{
	memset(f, 0, sizeof(*f));
	strcpy(f->path[f->n++], "/proc/self/exe");
	dl_iterate_phdr(find_files, f);
}

static void expect_same_syms(const struct hwt_image *a,
			     const struct hwt_image *b)
{
	assert_int_equal(a->nsyms, b->nsyms);
	for (size_t k = 0; k < a->nsyms; k++) {
		assert_int_equal(a->syms[k].begin, b->syms[k].begin);
		assert_int_equal(a->syms[k].end, b->syms[k].end);
		assert_int_equal(a->syms[k].maxend, b->syms[k].maxend);
		assert_int_equal(a->syms[k].rank, b->syms[k].rank);
		assert_string_equal(a->syms[k].name, b->syms[k].name);
	}
}

/* Where a file goes: where programs are, anywhere, and (the last two)
 * low enough in 2^64 that part of the file wraps past it. */
static uint64_t cache_place(uint64_t *seed)
{
	switch (rnd(seed) % 6) {
	case 0:
		return 0;
	case 1:
		return 0x555555554000ull + (rnd(seed) % 4096) * 4096;
	case 2:
		return 0x7f0000000000ull + (rnd(seed) % 65536) * 4096;
	case 3:
		return rnd(seed) & ~4095ull;
	case 4:
		return -(rnd(seed) % 0x100000) & ~4095ull;
	default:
		return -(rnd(seed) % 0x2000000);
	}
}

/*
 * Images sharing a cache hold the symbols that reading each file at
 * their own addresses gives: this test's executable (PLT names, a C++
 * name, an unsized label) and the libraries it runs with, added whole at
 * biases and mapped in pieces at random places, some of which wrap part
 * of a file past 2^64 (where the cache's order does not hold and the
 * file is read again), field for field against images that read the
 * files themselves, a few files at a time in each.
 */
static void test_cache_same(void **state)
{
	struct hwt_image_cache *cache = hwt_image_cache_new();
	struct test_files tf;
	uint64_t seed = 7;
	size_t ops = 0, syms = 0;

	(void)state;
	assert_non_null(cache);
	test_files_get(&tf);
	assert_true(tf.n >= 2);
	for (unsigned r = 0; r < 120; r++) {
		struct hwt_image *a = hwt_image_new(), *b = hwt_image_new();

		assert_int_equal(hwt_image_set_cache(a, cache), 0);
		for (unsigned k = 0; k < 4; k++) {
			const char *path = tf.path[rnd(&seed) % tf.n];
			uint64_t at = cache_place(&seed);
			struct stat st;
			int ea, eb;

			assert_int_equal(stat(path, &st), 0);
			if (rnd(&seed) % 2) {
				ea = hwt_image_add_elf(a, path, at);
				eb = hwt_image_add_elf(b, path, at);
			} else {
				uint64_t pages = (uint64_t)st.st_size / 4096 + 1;
				uint64_t pgoff = rnd(&seed) % 3 ? 0 :
						 rnd(&seed) % pages * 4096;
				uint64_t len = (1 + rnd(&seed) % pages) * 4096;

				if (at + len < at)
					at -= len;
				ea = hwt_image_add_mmap(a, path, pgoff, len, at);
				eb = hwt_image_add_mmap(b, path, pgoff, len, at);
			}
			assert_int_equal(ea, eb);
			expect_same_syms(a, b);
			ops++;
			syms += a->nsyms;
		}
		hwt_image_delete(a);
		hwt_image_delete(b);
	}
	assert_true(ops == 480 && syms > 100000);
	hwt_image_cache_delete(cache);
}

/*
 * A small ELF file of the test's making: one PT_LOAD of .text at 0x1000
 * (page aligned in the file), and function symbols @syms (sized or not)
 * in .text (some of them outside it) or, if any is @bss, in a .bss at the
 * top of the address space whose end wraps past 2^64; in a table of type
 * @symtab (SHT_SYMTAB, or SHT_DYNSYM for a stripped file), and with GNU
 * build id @build_id (@id_len bytes, a multiple of 4 up to 20) in a note
 * if not NULL.
 */
struct mk_sym {
	const char *name;
	uint64_t value, size;
	int bss;
};

static void mk_elf(const char *path, const struct mk_sym *syms, size_t n,
		   uint32_t symtab, const uint8_t *build_id, unsigned id_len)
{
	static uint8_t code[0x1000];
	static const char shstr[] =
		"\0.text\0.symtab\0.strtab\0.shstrtab\0.bss\0.note";
	struct {
		Elf64_Nhdr h;
		char name[4];
		uint8_t id[20];
	} note = { { 4, 20, NT_GNU_BUILD_ID }, "GNU", { 0 } };
	Elf64_Sym st[8];
	char str[256];
	size_t nstr = 1;
	Elf_Scn *text, *sym, *strs, *shs, *bss;
	Elf64_Shdr *sh;
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	Elf_Data *d;
	Elf *e;
	int fd;

	assert_true(n < 8);
	memset(st, 0, sizeof(st));
	str[0] = 0;
	for (size_t i = 0; i < n; i++) {
		st[i + 1].st_name = (uint32_t)nstr;
		st[i + 1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		st[i + 1].st_shndx = syms[i].bss ? 5 : 1;
		st[i + 1].st_value = syms[i].value;
		st[i + 1].st_size = syms[i].size;
		strcpy(str + nstr, syms[i].name);
		nstr += strlen(syms[i].name) + 1;
	}
	memset(code, 0xc3, sizeof(code));
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	e = elf_begin(fd, ELF_C_WRITE, NULL);
	assert_non_null(e);
	eh = elf64_newehdr(e);
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	ph = elf64_newphdr(e, 1);
	assert_non_null(ph);

	text = elf_newscn(e);
	d = elf_newdata(text);
	d->d_buf = code;
	d->d_size = sizeof(code);
	d->d_align = 4096;
	sh = elf64_getshdr(text);
	sh->sh_name = 1;
	sh->sh_type = SHT_PROGBITS;
	sh->sh_flags = SHF_ALLOC | SHF_EXECINSTR;
	sh->sh_addr = 0x1000;
	sh->sh_addralign = 4096;

	sym = elf_newscn(e);
	strs = elf_newscn(e);
	shs = elf_newscn(e);
	d = elf_newdata(sym);
	d->d_buf = st;
	d->d_size = (n + 1) * sizeof(*st);
	d->d_type = ELF_T_SYM;
	d->d_align = 8;
	sh = elf64_getshdr(sym);
	sh->sh_name = 7;
	sh->sh_type = symtab;
	sh->sh_link = (uint32_t)elf_ndxscn(strs);
	sh->sh_info = 1;
	sh->sh_entsize = sizeof(*st);
	d = elf_newdata(strs);
	d->d_buf = str;
	d->d_size = nstr;
	sh = elf64_getshdr(strs);
	sh->sh_name = 15;
	sh->sh_type = SHT_STRTAB;
	d = elf_newdata(shs);
	d->d_buf = (void *)shstr;
	d->d_size = sizeof(shstr);
	sh = elf64_getshdr(shs);
	sh->sh_name = 23;
	sh->sh_type = SHT_STRTAB;
	eh->e_shstrndx = (uint16_t)elf_ndxscn(shs);
	for (size_t i = 0; i < n; i++) {
		if (!syms[i].bss)
			continue;
		bss = elf_newscn(e);
		assert_int_equal(elf_ndxscn(bss), 5);
		d = elf_newdata(bss);
		d->d_size = 0x20000;
		d->d_type = ELF_T_BYTE;
		sh = elf64_getshdr(bss);
		sh->sh_name = 33;
		sh->sh_type = SHT_NOBITS;
		sh->sh_flags = SHF_ALLOC | SHF_WRITE;
		sh->sh_addr = 0xffffffffffff0000ull;
		break;
	}
	if (build_id) {
		Elf_Scn *nt = elf_newscn(e);

		assert_true(id_len <= sizeof(note.id) && !(id_len % 4));
		memcpy(note.id, build_id, id_len);
		note.h.n_descsz = id_len;
		d = elf_newdata(nt);
		d->d_buf = &note;
		d->d_size = sizeof(note) - sizeof(note.id) + id_len;
		d->d_type = ELF_T_NHDR;
		d->d_align = 4;
		sh = elf64_getshdr(nt);
		sh->sh_name = 38;
		sh->sh_type = SHT_NOTE;
		sh->sh_addralign = 4;
	}

	assert_true(elf_update(e, ELF_C_NULL) > 0);
	sh = elf64_getshdr(text);
	ph->p_type = PT_LOAD;
	ph->p_offset = sh->sh_offset;
	ph->p_vaddr = ph->p_paddr = 0x1000;
	ph->p_filesz = ph->p_memsz = 0x1000;
	ph->p_flags = PF_R | PF_X;
	ph->p_align = 4096;
	assert_int_equal(ph->p_offset, 0x1000);
	elf_flagphdr(e, ELF_C_SET, ELF_F_DIRTY);
	assert_true(elf_update(e, ELF_C_WRITE) > 0);
	elf_end(e);
	close(fd);
}

/*
 * @path (of mk_elf()) into images @a and @b alike, with the same result:
 * whole at bias @at if @len is 0, else @len bytes from .text's page
 * mapped at 0x1000 + @at (at 0x1000 if that would wrap past 2^64).
 */
static void add_same(struct hwt_image *a, struct hwt_image *b,
		     const char *path, uint64_t at, uint64_t len)
{
	if (!len) {
		assert_int_equal(hwt_image_add_elf(a, path, at),
				 hwt_image_add_elf(b, path, at));
		return;
	}
	at += 0x1000;
	if (at + len < at)
		at = 0x1000;
	assert_int_equal(hwt_image_add_mmap(a, path, 0x1000, len, at),
			 hwt_image_add_mmap(b, path, 0x1000, len, at));
}

/*
 * The cache at the edges, on files of the test's making: placed at
 * biases that wrap past 2^64 a symbol below .text or above it, the end
 * of .text under unsized symbols, a symbol that wraps at bias 0 and one
 * that wraps only elsewhere; and mapped so that a symbol starts right at
 * the mapping's start or its end. Each against an image that reads the
 * file itself.
 */
static void test_cache_edges(void **state)
{
	static const struct mk_sym around[] = {
		{ "low", 0x800, 0x10, 0 }, { "at_page", 0x1000, 0x20, 0 },
		{ "mid", 0x1400, 0x100, 0 }, { "unsized", 0x1800, 0, 0 },
		{ "far", 0x100000, 0x10, 0 },
	};
	static const struct mk_sym unsized[] = {
		{ "u1", 0x1400, 0, 0 }, { "u2", 0x1800, 0, 0 },
	};
	static const struct mk_sym wraps[] = {
		{ "at_page", 0x1000, 0x20, 0 }, { "unsized", 0x1800, 0, 0 },
		{ "wraps", 0xfffffffffffff000ull, 0x2000, 0 },
	};
	static const struct mk_sym last[] = {
		{ "at_page", 0x1000, 0x20, 0 }, { "last", UINT64_MAX, 1, 0 },
	};
	/* In the .bss past its wrapped end: there only where it does not
	 * wrap. */
	static const struct mk_sym bss[] = {
		{ "at_page", 0x1000, 0x20, 0 }, { "in_bss", 0x8000, 0, 1 },
	};
	static const struct {
		const struct mk_sym *syms;
		size_t n;
	} files[] = {
		{ around, 5 }, { unsized, 2 }, { wraps, 3 }, { last, 2 },
		{ bss, 2 },
	};
	enum { NFILES = sizeof(files) / sizeof(files[0]), NB = 10 };
	static const uint64_t biases[NB] = {
		0, 0x7f0000000000ull, -0x808ull, -0x100008ull, -0x1c00ull,
		-0x10000ull, -0x1000ull, -0x800ull, 0x1234000ull, -0x1200ull,
	};
	char path[] = "/tmp/hwt_test_image_elf_XXXXXX";
	size_t kept = 0, dropped = 0;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	for (size_t f = 0; f < NFILES; f++) {
		struct hwt_image_cache *c = hwt_image_cache_new();

		/* (A cache of its own: the file changes in place.) */
		mk_elf(path, files[f].syms, files[f].n, SHT_SYMTAB, NULL, 0);
		for (size_t k = 0; k < 3 * NB; k++) {
			struct hwt_image *a = hwt_image_new();
			struct hwt_image *b = hwt_image_new();
			uint64_t at = biases[k % NB];

			assert_int_equal(hwt_image_set_cache(a, c), 0);
			/* Whole, or 0x800 or 0x1000 bytes of .text's page. */
			add_same(a, b, path, at,
				 k < NB ? 0 : k < 2 * NB ? 0x800 : 0x1000);
			expect_same_syms(a, b);
			kept += a->nsyms;
			dropped += files[f].n - a->nsyms;
			hwt_image_delete(a);
			hwt_image_delete(b);
		}
		hwt_image_cache_delete(c);
	}
	assert_true(kept > 50 && dropped > 50);
	unlink(path);
}

/* An image whose debug directory is @wrong may not use @cache; with @right
 * it may. */
static void expect_join(struct hwt_image_cache *cache, const char *wrong,
			const char *right)
{
	struct hwt_image *a = hwt_image_new();

	assert_int_equal(hwt_image_set_debug_dir(a, wrong), 0);
	assert_int_equal(hwt_image_set_cache(a, cache), -HWT_ERR_INVALID);
	assert_int_equal(hwt_image_set_debug_dir(a, right), 0);
	assert_int_equal(hwt_image_set_cache(a, cache), 0);
	hwt_image_delete(a);
}

/*
 * hwt_image_symbol_range() where symbols nest and overlap: every byte's
 * range holds the same answer at every byte in it, and is not empty.
 */
static void test_symbol_range(void **state)
{
	static const struct mk_sym syms[] = {
		{ "outer", 0x1000, 0x800, 0 }, { "inner", 0x1100, 0x100, 0 },
		{ "nested", 0x1140, 0x20, 0 }, { "late", 0x1600, 0x400, 0 },
		{ "tail", 0x1a80, 0x10, 0 }, { "label", 0x1c00, 0, 0 },
	};
	static const struct { uint64_t at, start, end; const char *name; } want[] = {
		{ 0x1050, 0x1000, 0x1100, "outer" },
		{ 0x1120, 0x1100, 0x1140, "inner" },
		{ 0x1150, 0x1140, 0x1160, "nested" },
		{ 0x1170, 0x1160, 0x1200, "inner" },
		{ 0x1500, 0x1200, 0x1600, "outer" },
		{ 0x1700, 0x1600, 0x1a00, "late" },
		{ 0x1a40, 0x1a00, 0x1a80, NULL },
		{ 0x0800, 0, 0x1000, NULL },
	};
	char path[] = "/tmp/hwt_test_range_XXXXXX";
	struct hwt_image *image = hwt_image_new();
	const char *name, *got, *ref;
	uint64_t off, s0, e0, goff;
	int fd = mkstemp(path), err;

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	mk_elf(path, syms, sizeof(syms) / sizeof(syms[0]), SHT_SYMTAB, NULL,
	       0);
	assert_int_equal(hwt_image_add_elf(image, path, 0), 0);
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		err = hwt_image_symbol_range(image, want[k].at, &name, &off,
					     &s0, &e0);
		assert_int_equal(err, want[k].name ? 0 : -HWT_ERR_NOMAP);
		if (want[k].name)
			assert_string_equal(name, want[k].name);
		assert_int_equal(s0, want[k].start);
		assert_int_equal(e0, want[k].end);
	}
	for (uint64_t a = 0xf00; a < 0x2100; a += 4) {
		err = hwt_image_symbol_range(image, a, &name, &off, &s0, &e0);
		assert_true(s0 <= a && a < e0);
		ref = err ? NULL : name;
		for (uint64_t b = s0 > 0xe00 ? s0 : 0xe00;
		     b < e0 && b < 0x2200; b++) {
			got = NULL;
			if (hwt_image_symbol(image, b, &got, &goff) == 0)
				assert_int_equal(b - goff, a - off);
			assert_ptr_equal(got, ref);
		}
	}
	hwt_image_delete(image);
	unlink(path);
}

/* A debug directory: @dir (a mkdtemp() template, made) with
 * @dir/.build-id/@xx, whose path goes to @sub. */
static void debug_tree(char *dir, const char *xx, char *sub, size_t size)
{
	assert_non_null(mkdtemp(dir));
	snprintf(sub, size, "%s/.build-id", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(sub, size, "%s/.build-id/%s", dir, xx);
	assert_int_equal(mkdir(sub, 0700), 0);
}

/* debug_tree()'s directories removed (empty by now). */
static void debug_tree_remove(const char *dir, char *sub)
{
	rmdir(sub);
	*strrchr(sub, '/') = '\0';
	rmdir(sub);
	rmdir(dir);
}

/*
 * A stripped file's symbols from its debug file, found by build id in the
 * image's debug directory: not in the default one, and the same through
 * the cache as without at biases that wrap past 2^64 only a symbol of the
 * debug file, above the stripped file's sections and symbols (so the
 * cache must take the debug file's addresses into its order's bound).
 * The directory is set before the files and the cache, and the images
 * that share a cache share it.
 */
static void test_debug_dir(void **state)
{
	static const struct mk_sym dyn[] = { { "exported", 0x1400, 0x20, 0 } };
	static const struct mk_sym full[] = {
		{ "at_page", 0x1000, 0x20, 0 }, { "exported", 0x1400, 0x20, 0 },
		{ "local_fn", 0x1800, 0x40, 0 }, { "unsized", 0x1c00, 0, 0 },
		{ "far", 0x100000, 0x10, 0 },
	};
	static const uint64_t biases[] = {
		0, 0x7f0000000000ull, 0x1234000ull, -0x1000ull, -0x1c00ull,
		-0x100008ull, -0x100000ull, -0x0ff000ull,
	};
	enum { NB = sizeof(biases) / sizeof(biases[0]) };
	uint8_t id[20];
	char dir[] = "/tmp/hwt_test_debug_XXXXXX", sub[64], main_path[64];
	char dbg_path[128], other[64];
	struct hwt_image_cache *cache = hwt_image_cache_new();
	struct hwt_image *a, *b;
	size_t far_kept = 0, far_dropped = 0;

	(void)state;
	for (int i = 0; i < 20; i++)
		id[i] = (uint8_t)(0xa0 + i);
	debug_tree(dir, "a0", sub, sizeof(sub));
	snprintf(main_path, sizeof(main_path), "%s/stripped", dir);
	snprintf(dbg_path, sizeof(dbg_path), "%s/a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3.debug",
		 sub);
	mk_elf(main_path, dyn, 1, SHT_DYNSYM, id, 20);
	mk_elf(dbg_path, full, 5, SHT_SYMTAB, id, 20);

	/* The default directory has no such build id: .dynsym only. */
	a = hwt_image_new();
	assert_int_equal(hwt_image_add_elf(a, main_path, 0), 0);
	expect_symbol(a, 0x1404, "exported", 4);
	expect_no_symbol(a, 0x1804);
	assert_int_equal(hwt_image_set_debug_dir(a, dir), -HWT_ERR_INVALID);
	hwt_image_delete(a);
	a = hwt_image_new();
	assert_int_equal(hwt_image_set_debug_dir(a, dir), 0);
	assert_int_equal(hwt_image_add_elf(a, main_path, 0x10000), 0);
	expect_symbol(a, 0x11804, "local_fn", 4);
	expect_symbol(a, 0x11c10, "unsized", 0x10);
	expect_symbol(a, 0x110008, "far", 8);
	hwt_image_delete(a);

	for (size_t k = 0; k < 3 * NB; k++) {
		uint64_t at = biases[k % NB];

		a = hwt_image_new();
		b = hwt_image_new();
		assert_int_equal(hwt_image_set_debug_dir(a, dir), 0);
		assert_int_equal(hwt_image_set_debug_dir(b, dir), 0);
		assert_int_equal(hwt_image_set_cache(a, cache), 0);
		assert_int_equal(hwt_image_set_debug_dir(a, NULL),
				 -HWT_ERR_INVALID);
		/* Whole, .text's page, or 1 MiB from it (where "far" is in
		 * range). */
		add_same(a, b, main_path, at,
			 k < NB ? 0 : k < 2 * NB ? 0x1000 : 0x100000);
		expect_same_syms(a, b);
		assert_true(a->nsyms >= 1);
		if (k < NB) {
			const char *name = NULL;
			uint64_t off;

			if (!hwt_image_symbol(a, 0x100000 + at, &name, &off) &&
			    !strcmp(name, "far"))
				far_kept++;
			else
				far_dropped++;
		}
		hwt_image_delete(a);
		hwt_image_delete(b);
	}
	/* (-0x100008 drops "far", its end wrapped; the others keep it.) */
	assert_int_equal(far_dropped, 1);
	assert_int_equal(far_kept, NB - 1);

	/* Images sharing the cache share its directory (the first
	 * image's), the default included. */
	snprintf(other, sizeof(other), "%s/", dir);
	expect_join(cache, NULL, dir);
	expect_join(cache, other, dir);
	hwt_image_cache_delete(cache);
	cache = hwt_image_cache_new();
	a = hwt_image_new();
	assert_int_equal(hwt_image_set_cache(a, cache), 0);
	expect_join(cache, dir, NULL);
	hwt_image_delete(a);
	hwt_image_cache_delete(cache);

	unlink(dbg_path);
	unlink(main_path);
	debug_tree_remove(dir, sub);
}

/*
 * A debug file is named by the whole build id, as the note has it: a
 * 20-byte id that ends in zero bytes (one in 256 does) keeps them, and
 * one of 16 or 8 bytes (md5, uuid, lld's fast) is not padded to 20.
 * hwt_image_debug_file() gives the path, and the image finds the
 * symbols there.
 */
static void test_debug_id_length(void **state)
{
	static const struct mk_sym dyn[] = { { "exported", 0x1400, 0x20, 0 } };
	static const struct mk_sym full[] = {
		{ "exported", 0x1400, 0x20, 0 }, { "local_fn", 0x1800, 0x40, 0 },
	};
	static const unsigned lens[] = { 20, 20, 16, 8 };
	char dir[] = "/tmp/hwt_test_id_XXXXXX", sub[64], main_path[64];
	char want[128], *got;
	uint8_t id[20], padded[20];

	(void)state;
	debug_tree(dir, "c0", sub, sizeof(sub));
	snprintf(main_path, sizeof(main_path), "%s/stripped", dir);
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		unsigned len = lens[k];
		struct hwt_image *img;
		size_t n;

		for (unsigned i = 0; i < len; i++)
			id[i] = (uint8_t)(0xc0 + i + k);
		id[0] = 0xc0;
		/* The first: its last two bytes zero. */
		if (!k)
			id[len - 1] = id[len - 2] = 0;
		n = (size_t)snprintf(want, sizeof(want), "%s/", sub);
		for (unsigned i = 1; i < len; i++)
			n += (size_t)snprintf(want + n, sizeof(want) - n,
					      "%02x", id[i]);
		snprintf(want + n, sizeof(want) - n, ".debug");
		mk_elf(main_path, dyn, 1, SHT_DYNSYM, id, len);
		mk_elf(want, full, 2, SHT_SYMTAB, id, len);

		assert_int_equal(hwt_image_debug_file(main_path, dir, &got), 1);
		assert_string_equal(got, want);
		free(got);
		/* (hwt_image_build_id() pads it, and says how long.) */
		assert_int_equal(hwt_image_build_id(main_path, padded),
				 (int)len);
		assert_memory_equal(padded, id, len);
		for (unsigned i = len; i < 20; i++)
			assert_int_equal(padded[i], 0);

		img = hwt_image_new();
		assert_int_equal(hwt_image_set_debug_dir(img, dir), 0);
		assert_int_equal(hwt_image_add_elf(img, main_path, 0), 0);
		expect_symbol(img, 0x1804, "local_fn", 4);
		hwt_image_delete(img);
		unlink(want);
	}
	/* No build id: no path. */
	mk_elf(main_path, dyn, 1, SHT_DYNSYM, NULL, 0);
	got = main_path;
	assert_int_equal(hwt_image_debug_file(main_path, dir, &got), 0);
	assert_null(got);
	assert_int_equal(hwt_image_debug_file("/nonexistent/x", dir, &got),
			 -HWT_ERR_IO);
	assert_null(got);
	unlink(main_path);
	debug_tree_remove(dir, sub);
}

/*
 * Images sharing a cache share its mapping of a file and its names; each
 * holds the cache, so it outlives its creator's hold. The cache is set
 * once, before any file.
 */
static void test_cache_shared(void **state)
{
	struct hwt_image_cache *cache = hwt_image_cache_new();
	struct hwt_image *a = hwt_image_new(), *b = hwt_image_new();
	struct hwt_image *c = hwt_image_new();
	uint64_t probe = (uint64_t)(uintptr_t)&hwt_image_test_probe;
	uint64_t moved = 0x200000000000ull;
	struct self_text t = { 0 };
	const uint8_t *pa, *pb;
	const char *na, *nb;
	uint64_t oa, ob;
	size_t n;

	(void)state;
	dl_iterate_phdr(find_text, &t);
	assert_true(t.len > 0);
	assert_int_equal(hwt_image_set_cache(a, cache), 0);
	assert_int_equal(hwt_image_set_cache(a, cache), -HWT_ERR_INVALID);
	assert_int_equal(hwt_image_set_cache(b, NULL), -HWT_ERR_INVALID);
	assert_int_equal(hwt_image_set_cache(b, cache), 0);
	assert_int_equal(hwt_image_add_mmap(c, "/proc/self/exe", t.pgoff,
					    t.len, t.start), 0);
	assert_int_equal(hwt_image_set_cache(c, cache), -HWT_ERR_INVALID);

	assert_int_equal(hwt_image_add_mmap(a, "/proc/self/exe", t.pgoff,
					    t.len, t.start), 0);
	assert_int_equal(hwt_image_add_mmap(b, "/proc/self/exe", t.pgoff,
					    t.len, t.start + moved), 0);
	/* Its creator lets go: the images still hold it. */
	hwt_image_cache_delete(cache);

	assert_int_equal(hwt_image_read(a, probe, &pa, &n), 0);
	assert_int_equal(hwt_image_read(b, probe + moved, &pb, &n), 0);
	assert_ptr_equal(pa, pb);
	assert_memory_equal(pa, (const void *)(uintptr_t)probe, 8);
	assert_int_equal(hwt_image_read(c, probe, &pb, &n), 0);
	assert_ptr_not_equal(pa, pb);

	assert_int_equal(hwt_image_symbol(a, probe + 1, &na, &oa), 0);
	assert_int_equal(hwt_image_symbol(b, probe + moved + 1, &nb, &ob), 0);
	assert_ptr_equal(na, nb);
	assert_string_equal(na, "hwt_image_test_probe");
	assert_int_equal(oa, 1);
	assert_int_equal(ob, 1);
	/* (Demangled names are the cache's too.) */
	assert_int_equal(hwt_image_symbol(a, (uint64_t)(uintptr_t)
					  &hwt_mangled_probe, &na, &oa), 0);
	assert_int_equal(hwt_image_symbol(b, (uint64_t)(uintptr_t)
					  &hwt_mangled_probe + moved, &nb,
					  &ob), 0);
	assert_ptr_equal(na, nb);
	hwt_image_delete(a);
	expect_symbol(b, probe + moved, "hwt_image_test_probe", 0);
	hwt_image_delete(b);
	hwt_image_delete(c);
}

static void test_no_symbols(void **state)
{
	struct hwt_image *image = hwt_image_new();
	uint64_t probe = (uint64_t)(uintptr_t)&hwt_image_test_probe;
	struct self_text t = { 0 };
	const uint8_t *p;
	size_t n;

	(void)state;
	hwt_image_set_symbols(image, 0);
	assert_int_equal(hwt_image_add_elf(image, "/proc/self/exe",
					   self_bias()), 0);
	assert_int_equal(hwt_image_read(image, probe, &p, &n), 0);
	assert_memory_equal(p, (const void *)(uintptr_t)probe, 8);
	expect_no_symbol(image, probe);
	dl_iterate_phdr(find_text, &t);
	assert_int_equal(hwt_image_add_mmap(image, "/proc/self/exe", t.pgoff,
					    t.len, t.start + 0x200000000000ull),
			 0);
	assert_int_equal(hwt_image_read(image, probe + 0x200000000000ull,
					&p, &n), 0);
	assert_memory_equal(p, (const void *)(uintptr_t)probe, 8);
	expect_no_symbol(image, probe + 0x200000000000ull);
	/* Back on: files added from now on have their names. */
	hwt_image_set_symbols(image, 1);
	assert_int_equal(hwt_image_add_elf(image, "/proc/self/exe",
					   self_bias()), 0);
	expect_symbol(image, probe, "hwt_image_test_probe", 0);
	hwt_image_delete(image);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_buffer),
		cmocka_unit_test(test_shadow),
		cmocka_unit_test(test_shadow_model),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_elf_errors),
		cmocka_unit_test(test_elf_self),
		cmocka_unit_test(test_no_symbols),
		cmocka_unit_test(test_elf_bias),
		cmocka_unit_test(test_remove_model),
		cmocka_unit_test(test_remove_cases),
		cmocka_unit_test(test_symbol_extent),
		cmocka_unit_test(test_symbol_range),
		cmocka_unit_test(test_remove_symbols),
		cmocka_unit_test(test_symbol_merge_model),
		cmocka_unit_test(test_mmap_self),
		cmocka_unit_test(test_cache_same),
		cmocka_unit_test(test_cache_edges),
		cmocka_unit_test(test_cache_shared),
		cmocka_unit_test(test_debug_dir),
		cmocka_unit_test(test_debug_id_length),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
