/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Buffered output for the CLI: lines are built in place and written in
 * large blocks (to a FILE), or collected in memory (a segment decoded on a
 * worker thread, printed later in order).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

#define OUT_FILE_CAP (1u << 17)

int cli_out_init(struct cli_out *o, FILE *f)
{
	memset(o, 0, sizeof(*o));
	o->f = f;
	o->cap = f ? OUT_FILE_CAP : 4096;
	o->buf = malloc(o->cap);
	if (!o->buf) {
		o->cap = 0;
		o->failed = 1;
		return -1;
	}
	return 0;
}

void cli_out_fini(struct cli_out *o)
{
	cli_out_flush(o);
	free(o->buf);
	o->buf = NULL;
	o->cap = o->len = 0;
}

void cli_out_flush(struct cli_out *o)
{
	if (!o->f || !o->len)
		return;
	if (fwrite(o->buf, 1, o->len, o->f) != o->len)
		o->failed = 1;
	o->flushed += o->len;
	o->len = 0;
}

char *cli_out_reserve_more_(struct cli_out *o, size_t n)
{
	char *nbuf;
	size_t ncap;

	if (o->f) {
		cli_out_flush(o);
		if (o->cap >= n)
			return o->buf;
	}
	ncap = o->cap ? o->cap : 4096;
	while (ncap - o->len < n)
		ncap *= 2;
	nbuf = realloc(o->buf, ncap);
	if (!nbuf) {
		/* Output we cannot hold is output we would lose: stop. */
		fprintf(stderr, "hwt: out of memory for output\n");
		exit(1);
	}
	o->buf = nbuf;
	o->cap = ncap;
	return o->buf + o->len;
}

void cli_out_write(struct cli_out *o, const void *data, size_t n)
{
	char *p;

	/* (A file's big block goes straight to it, not through the buffer.) */
	if (o->f && n >= o->cap) {
		cli_out_flush(o);
		if (fwrite(data, 1, n, o->f) != n)
			o->failed = 1;
		o->flushed += n;
		return;
	}
	p = cli_out_reserve(o, n);

	memcpy(p, data, n);
	cli_out_commit(o, p + n);
}

void cli_out_printf(struct cli_out *o, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(tmp))
		n = sizeof(tmp) - 1;
	cli_out_write(o, tmp, (size_t)n);
}

void cli_put(struct cli_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->len >= sizeof(t->buf) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, sizeof(t->buf) - t->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	t->len += (size_t)n;
	if (t->len > sizeof(t->buf) - 1)
		t->len = sizeof(t->buf) - 1;
}

FILE *cli_tmpfile(const char *who)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	FILE *f;
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(path, sizeof(path), "%s/hwt-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0) {
		fprintf(stderr, "%s: cannot make a temporary file in %s: %s\n",
			who, dir, strerror(errno));
		return NULL;
	}
	unlink(path);
	f = fdopen(fd, "w+b");
	if (!f) {
		fprintf(stderr, "%s: %s\n", who, strerror(errno));
		close(fd);
	}
	return f;
}
