/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt_an_cover_: blocks counted, by the file and line their code comes
 * from. The code is this test's own (its ELF, mapped at its load bias,
 * with its DWARF): blocks of probe() counted in images whose generation
 * changes, in two covers merged, read back as an lcov tracefile.
 */
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <hwt/analysis.h>
#include <hwt/error.h>
#include <hwt/image.h>

/* Its first instruction's line is looked up, not assumed. */
__attribute__((noinline)) int probe(int x);
__attribute__((noinline)) int probe(int x)
{
	return x * 3 + 1;
}

static int bias_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	/* The first object is the program. */
	*(uint64_t *)data = info->dlpi_addr;
	return 1;
}

static struct hwt_image *self_image(void)
{
	struct hwt_image *image = hwt_image_new();
	uint64_t bias = 0;

	assert_non_null(image);
	dl_iterate_phdr(bias_cb, &bias);
	assert_int_equal(hwt_image_add_elf(image, "/proc/self/exe", bias), 0);
	return image;
}

/* The count of line @line of @file in the lcov text @text; -1 if none. */
static long long da_count(const char *text, const char *file, unsigned line)
{
	char sf[4096], da[64];
	const char *p;

	snprintf(sf, sizeof(sf), "SF:%s\n", file);
	snprintf(da, sizeof(da), "\nDA:%u,", line);
	p = strstr(text, sf);
	if (!p)
		return -1;
	{
		const char *end = strstr(p, "end_of_record");
		const char *d = strstr(p, da);

		if (!d || (end && d > end))
			return -1;
		return strtoll(d + strlen(da), NULL, 10);
	}
}

/* @c's lcov text (malloc'd) and its summary. */
static char *lcov_text(struct hwt_an_cover *c, struct hwt_an_cover_sum *sum)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(hwt_an_cover_lcov(c, f, "t", sum), 0);
	assert_int_equal(fclose(f), 0);
	return text;
}

static struct hwt_block probe_block(uint32_t ninsn)
{
	struct hwt_block b;

	memset(&b, 0, sizeof(b));
	b.ip = (uint64_t)(uintptr_t)&probe;
	b.ninsn = ninsn;
	b.mode = HWT_MODE_64;
	return b;
}

static void test_counts(void **state)
{
	struct hwt_image *image = self_image();
	struct hwt_an_lines *ln = hwt_an_lines_new();
	struct hwt_an_cover *c = hwt_an_cover_new(), *d = hwt_an_cover_new();
	struct hwt_block one = probe_block(1), none = probe_block(0);
	struct hwt_an_cover_sum sum;
	static uint8_t code[16];
	const char *file;
	unsigned line;
	char *text;

	(void)state;
	assert_non_null(ln);
	assert_non_null(c);
	assert_non_null(d);
	/* Where probe()'s first instruction comes from: the line to see. */
	assert_int_equal(hwt_an_lines_find(ln, image, one.ip, &file, &line), 1);
	assert_non_null(strstr(file, "test_analysis_cover.c"));
	assert_true(line >= 25 && line <= 31);

	for (int i = 0; i < 3; i++)
		assert_int_equal(hwt_an_cover_block(c, image, &one), 0);
	/* A block of no instructions counts nothing. */
	assert_int_equal(hwt_an_cover_block(c, image, &none), 0);
	/* Another generation of the image: the same code, counted on. */
	assert_int_equal(hwt_image_add_buffer(image, code, sizeof(code),
					      0x1000), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(hwt_an_cover_block(c, image, &one), 0);
	/* A second cover (another -j segment), merged. */
	for (int i = 0; i < 4; i++)
		assert_int_equal(hwt_an_cover_block(d, image, &one), 0);
	assert_int_equal(hwt_an_cover_merge(c, d), 0);

	text = lcov_text(c, &sum);
	assert_int_equal(da_count(text, file, line), 9);
	assert_non_null(strstr(text, "TN:t\n"));
	/* probe() entered 9 times; this test's main() not at all. */
	assert_non_null(strstr(text, "\nFNDA:9,probe\n"));
	assert_non_null(strstr(text, "\nFNDA:0,main\n"));
	assert_true(sum.funcs_hit == 1 && sum.funcs > 3);
	/* probe()'s other lines are there, not run (at -O0, say); this
	 * file's lines are all counted as found. */
	assert_true(sum.found > 10);
	assert_true(sum.hit >= 1);
	assert_int_equal(sum.insns, 1);
	assert_int_equal(sum.insns_no_line, 0);
	/* Written again: the same (the counts are not moved twice). */
	{
		struct hwt_an_cover_sum again;
		char *text2 = lcov_text(c, &again);

		assert_string_equal(text, text2);
		free(text2);
	}
	free(text);

	/* Only a summary; bad arguments. */
	assert_int_equal(hwt_an_cover_lcov(d, NULL, NULL, &sum), 0);
	assert_int_equal(hwt_an_cover_block(NULL, image, &one),
			 -HWT_ERR_INVALID);
	assert_int_equal(hwt_an_cover_block(c, NULL, &one), -HWT_ERR_INVALID);
	assert_int_equal(hwt_an_cover_merge(c, NULL), -HWT_ERR_INVALID);
	assert_int_equal(hwt_an_cover_lcov(NULL, NULL, NULL, &sum),
			 -HWT_ERR_INVALID);

	hwt_an_cover_delete(c);
	hwt_an_cover_delete(d);
	hwt_an_lines_delete(ln);
	hwt_image_delete(image);
}

/* Code the image maps from a caller's buffer (no file) and code not in a
 * file's DWARF: counted as instructions, no line. */
static void test_no_file(void **state)
{
	static const uint8_t nops[8] = { 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
					 0x90, 0xc3 };
	struct hwt_image *image = hwt_image_new();
	struct hwt_an_cover *c = hwt_an_cover_new();
	struct hwt_an_cover_sum sum;
	struct hwt_block b;

	(void)state;
	assert_non_null(image);
	assert_non_null(c);
	assert_int_equal(hwt_image_add_buffer(image, nops, sizeof(nops),
					      0x5000), 0);
	memset(&b, 0, sizeof(b));
	b.ip = 0x5000;
	b.ninsn = 4;
	b.mode = HWT_MODE_64;
	assert_int_equal(hwt_an_cover_block(c, image, &b), 0);
	assert_int_equal(hwt_an_cover_lcov(c, NULL, NULL, &sum), 0);
	/* (A buffer has no origin: nothing to find lines in.) */
	assert_int_equal(sum.insns, 0);
	assert_int_equal(sum.files, 0);
	hwt_an_cover_delete(c);
	hwt_image_delete(image);
}

/* @c's drcov file (malloc'd, *@len bytes) and its counts. */
static char *drcov_text(struct hwt_an_cover *c, size_t *len, size_t *nmod,
			size_t *nbb)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	assert_non_null(f);
	assert_int_equal(hwt_an_cover_drcov(c, f, nmod, nbb), 0);
	assert_int_equal(fclose(f), 0);
	return text;
}

/* drcov: a file that is not ELF is a module from offset 0; the bytes
 * of the instructions that ran, adjacent ones one block. */
static void test_drcov(void **state)
{
	static const uint8_t code[16] = {
		0xcc, 0xcc, 0xcc, 0xcc,		/* before: not mapped */
		0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
		0x48, 0x89, 0xc8, 0xc3		/* mov rax, rcx; ret */
	};
	char path[] = "/tmp/hwt-cover-XXXXXX", *text;
	struct hwt_image *image = hwt_image_new();
	struct hwt_an_cover *c = hwt_an_cover_new();
	struct hwt_block b;
	size_t len = 0, nmod = 9, nbb = 9;
	const char *bbs;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, code, sizeof(code)), sizeof(code));
	close(fd);
	assert_non_null(image);
	assert_non_null(c);
	/* The file from offset 4 at 0x5000. */
	assert_int_equal(hwt_image_add_file(image, path, 4, 0, 0x5000), 0);
	memset(&b, 0, sizeof(b));
	b.mode = HWT_MODE_64;
	/* Offsets 4-7 and 10-11: two blocks of bytes. */
	b.ip = 0x5000;
	b.ninsn = 4;
	assert_int_equal(hwt_an_cover_block(c, image, &b), 0);
	b.ip = 0x5006;
	b.ninsn = 2;
	assert_int_equal(hwt_an_cover_block(c, image, &b), 0);

	text = drcov_text(c, &len, &nmod, &nbb);
	assert_int_equal(nmod, 1);
	assert_int_equal(nbb, 2);
	assert_non_null(strstr(text, "DRCOV VERSION: 2\n"));
	assert_non_null(strstr(text, "0x0000000000000000, 0x000000000000000b, "));
	assert_non_null(strstr(text, path));
	bbs = strstr(text, "BB Table: 2 bbs\n");
	assert_non_null(bbs);
	bbs += strlen("BB Table: 2 bbs\n");
	assert_int_equal(text + len - bbs, 16);
	/* { start 4, size 4, module 0 }, { 10, 2, 0 }, little-endian */
	assert_memory_equal(bbs, "\4\0\0\0\4\0\0\0\12\0\0\0\2\0\0\0", 16);
	free(text);

	/* The gap filled (offsets 8-9), and the mov and ret (12-15): one. */
	b.ip = 0x5004;
	b.ninsn = 2;
	assert_int_equal(hwt_an_cover_block(c, image, &b), 0);
	b.ip = 0x5008;
	b.ninsn = 2;
	assert_int_equal(hwt_an_cover_block(c, image, &b), 0);
	text = drcov_text(c, &len, &nmod, &nbb);
	assert_int_equal(nbb, 1);
	bbs = strstr(text, "BB Table: 1 bbs\n") + strlen("BB Table: 1 bbs\n");
	assert_memory_equal(bbs, "\4\0\0\0\14\0\0\0", 8);
	free(text);

	assert_int_equal(hwt_an_cover_drcov(c, NULL, NULL, NULL),
			 -HWT_ERR_INVALID);
	hwt_an_cover_delete(c);
	hwt_image_delete(image);
	unlink(path);
}

/* hwt_an_lines_code(): this test's own code, a line table row at a
 * time. */
struct rows_seen {
	struct hwt_an_lines *ln;
	const char *path;
	size_t n, bytes;
	uint64_t last;
};

static int row_seen(void *ctx, uint64_t off, const uint8_t *code,
		    size_t len, unsigned mode, const char *file,
		    unsigned line)
{
	struct rows_seen *r = ctx;
	const char *at_file;
	unsigned at_line;

	/* In address order (the file's code is one segment), each the
	 * line hwt_an_lines_at() gives for its first and last byte, its
	 * bytes the file's. */
	assert_true(!r->n || off >= r->last);
	assert_int_equal(mode, HWT_MODE_64);
	assert_true(len > 0);
	assert_int_equal(hwt_an_lines_at(r->ln, r->path, off, &at_file,
					 &at_line), 1);
	assert_string_equal(at_file, file);
	assert_int_equal(at_line, line);
	assert_int_equal(hwt_an_lines_at(r->ln, r->path, off + len - 1,
					 &at_file, &at_line), 1);
	assert_string_equal(at_file, file);
	assert_int_equal(at_line, line);
	(void)code;
	r->last = off + len;
	r->n++;
	r->bytes += len;
	return 0;
}

static void test_code_rows(void **state)
{
	struct rows_seen r = { 0 };
	char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	(void)state;
	assert_true(n > 0);
	path[n] = 0;
	r.ln = hwt_an_lines_new();
	r.path = path;
	assert_non_null(r.ln);
	assert_int_equal(hwt_an_lines_code(r.ln, path, row_seen, &r), 0);
	/* (This file's functions alone have hundreds of rows.) */
	assert_true(r.n > 200);
	assert_true(r.bytes > 4096);
	hwt_an_lines_delete(r.ln);
}

/* hwt_an_lines_each(): every (file, line) of a row with code, which
 * hwt_an_lines_code() gives, told at least once (the names by the same
 * pointers: both are the lines object's). */
struct pair {
	const char *file;
	unsigned line;
};

struct pairs {
	struct pair *v;
	size_t n, cap;
	size_t rows, missing;
};

static int pair_told(void *ctx, const char *file, unsigned line)
{
	struct pairs *p = ctx;

	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 1024;
		p->v = realloc(p->v, p->cap * sizeof(*p->v));
		assert_non_null(p->v);
	}
	p->v[p->n].file = file;
	p->v[p->n].line = line;
	p->n++;
	return 0;
}

static int pair_cmp(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	int r = strcmp(x->file, y->file);

	return r ? r : (x->line > y->line) - (x->line < y->line);
}

static int pair_row(void *ctx, uint64_t off, const uint8_t *code, size_t len,
		    unsigned mode, const char *file, unsigned line)
{
	struct pairs *p = ctx;
	struct pair key = { file, line };

	(void)off, (void)code, (void)len, (void)mode;
	p->rows++;
	if (!bsearch(&key, p->v, p->n, sizeof(*p->v), pair_cmp))
		p->missing++;
	return 0;
}

static void test_each_line(void **state)
{
	struct pairs p = { 0 };
	struct hwt_an_lines *ln = hwt_an_lines_new();
	char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	size_t files = 0;

	(void)state;
	assert_true(n > 0);
	path[n] = 0;
	assert_non_null(ln);
	assert_int_equal(hwt_an_lines_each(ln, path, pair_told, &p), 0);
	assert_true(p.n > 0);
	qsort(p.v, p.n, sizeof(*p.v), pair_cmp);
	for (size_t i = 0; i < p.n; i++)
		files += !i || strcmp(p.v[i - 1].file, p.v[i].file);
	/* (Units with rows of several files, headers' inline functions,
	 * are among them: a name kept past its rows shows as missing.) */
	assert_true(files > 10);
	assert_int_equal(hwt_an_lines_code(ln, path, pair_row, &p), 0);
	assert_true(p.rows > 200);
	assert_int_equal(p.missing, 0);
	free(p.v);
	hwt_an_lines_delete(ln);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_no_file),
		cmocka_unit_test(test_drcov),
		cmocka_unit_test(test_code_rows),
		cmocka_unit_test(test_each_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
