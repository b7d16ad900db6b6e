/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for vgpt's text sideband (hwt_rec_vsb_parse): the
 * input is a sideband file, cut into lines as the import cuts it. Each
 * line parses or is refused, and the answer must be well-formed:
 *
 *  - a refusal names a reason and a column inside the line;
 *  - a parsed line's keyword and path lie inside the line, the path is
 *    the rest of it, and a known kind has its name as keyword;
 *  - parsing is deterministic (a second parse gives the same answer).
 */
#include <hwt/record.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(const char *line)
{
	struct hwt_rec_vsb_line l, again;
	const char *why, *why2;
	size_t col, col2, len = strlen(line);
	int ret = hwt_rec_vsb_parse(line, &l, &why, &col);

	CHECK(hwt_rec_vsb_parse(line, &again, &why2, &col2) == ret);
	if (ret < 0) {
		CHECK(ret == -HWT_ERR_BAD_FORMAT);
		CHECK(why && *why && why == why2);
		CHECK(col <= len && col == col2);
		return;
	}
	CHECK(ret == 0 && !memcmp(&l, &again, sizeof(l)));
	CHECK(l.keyword == line && l.keyword_len <= len);
	if (l.kind != HWT_REC_VSB_UNKNOWN) {
		const char *name = hwt_rec_vsb_name(l.kind);

		CHECK(strlen(name) == l.keyword_len &&
		      !memcmp(name, line, l.keyword_len));
	}
	if (l.path) {
		CHECK(l.path > line && l.path < line + len);
		CHECK(l.path + strlen(l.path) == line + len);
	}
	if (l.kind == HWT_REC_VSB_COMM || l.kind == HWT_REC_VSB_MMAP ||
	    l.kind == HWT_REC_VSB_EXEC)
		CHECK(l.path && *l.path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *p, *end;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	end = buf + size;
	/* As the import: lines end at '\n'; a NUL ends the text. */
	for (p = buf; p < end && *p;) {
		char *nl = strchr(p, '\n');

		if (nl)
			*nl = '\0';
		one(p);
		if (!nl)
			break;
		p = nl + 1;
	}
	free(buf);
	return 0;
}
