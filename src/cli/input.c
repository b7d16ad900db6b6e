/* SPDX-License-Identifier: BSD-2-Clause */
#include "cli/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_parse_u64(const char *str, uint64_t *value)
{
	char *end;

	if (!str || !*str || *str == '-')
		return -1;
	errno = 0;
	*value = strtoull(str, &end, 0);
	return (errno || *end) ? -1 : 0;
}

void cli_bad_option(const char *cmd, int c, const char *arg)
{
	if (c == ':')
		fprintf(stderr, "hwt %s: option '%s' needs a value; see 'hwt "
			"help %s'\n", cmd, arg, cmd);
	else
		fprintf(stderr, "hwt %s: unknown option '%s'; see 'hwt help "
			"%s'\n", cmd, arg, cmd);
}

int cli_one_file(const char *cmd, int argc, int first)
{
	if (first + 1 == argc)
		return 0;
	fprintf(stderr, "hwt %s: %s; see 'hwt help %s'\n", cmd,
		first == argc ? "no perf.data file given" :
		"more than one file given", cmd);
	return -1;
}

int cli_parse_range(const char *arg, uint64_t *from, uint64_t *to)
{
	char buf[64];
	char *dash;

	if (strlen(arg) >= sizeof(buf))
		return -1;
	strcpy(buf, arg);
	dash = strchr(buf, '-');
	if (dash)
		*dash = '\0';
	if (cli_parse_u64(buf, from))
		return -1;
	if (!dash)
		return 1;
	return cli_parse_u64(dash + 1, to) ? -1 : 2;
}

/* @n bytes at @off of @fd into @buf; 0 or -1 (errno set; 0 for EOF). */
static int read_at(int fd, uint8_t *buf, size_t n, uint64_t off)
{
	while (n) {
		ssize_t got = pread(fd, buf, n, (off_t)off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (!got)
				errno = 0;
			return -1;
		}
		buf += got;
		n -= (size_t)got;
		off += (uint64_t)got;
	}
	return 0;
}

/* cli_input_open(), into *@buf (grown as needed, to *@cap) if @buf. */
static int input_open(struct cli_input *in, const char *spec,
		      const char *prog, uint8_t **buf, size_t *cap)
{
	uint64_t from = 0, to = 0;
	int parts = 0;
	char *path, *colon;
	struct stat st;
	int fd;

	memset(in, 0, sizeof(*in));
	path = strdup(spec);
	if (!path) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return -1;
	}
	/* A trailing ":range" is a range only if it parses as one, so that
	 * file names containing ':' still work. */
	colon = strrchr(path, ':');
	if (colon) {
		parts = cli_parse_range(colon + 1, &from, &to);
		if (parts > 0)
			*colon = '\0';
		else
			parts = 0;
	}

	fd = open(path, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "%s: cannot open %s: %s\n", prog, path,
			strerror(errno));
		goto err;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "%s: %s: not a regular file\n", prog, path);
		goto err_fd;
	}
	if (st.st_size == 0) {
		fprintf(stderr, "%s: %s: empty file\n", prog, path);
		goto err_fd;
	}
	if (parts == 0)
		to = (uint64_t)st.st_size;
	else if (parts == 1)
		to = (uint64_t)st.st_size;
	if (from >= (uint64_t)st.st_size) {
		fprintf(stderr, "%s: %s: offset 0x%" PRIx64
			" is beyond the end of the file (size 0x%" PRIx64 ")\n",
			prog, path, from, (uint64_t)st.st_size);
		goto err_fd;
	}
	if (to <= from || to > (uint64_t)st.st_size) {
		fprintf(stderr, "%s: %s: bad range 0x%" PRIx64 "-0x%" PRIx64
			" (file size 0x%" PRIx64 ")\n", prog, path, from, to,
			(uint64_t)st.st_size);
		goto err_fd;
	}

	if (buf) {
		size_t n = (size_t)(to - from);

		if (n > *cap) {
			uint8_t *p = realloc(*buf, n);

			if (!p) {
				fprintf(stderr, "%s: out of memory\n", prog);
				goto err_fd;
			}
			*buf = p;
			*cap = n;
		}
		if (read_at(fd, *buf, n, from) < 0) {
			fprintf(stderr, "%s: cannot read %s: %s\n", prog, path,
				errno ? strerror(errno) : "file shrank");
			goto err_fd;
		}
		close(fd);
		in->data = *buf;
		in->size = n;
		in->offset = from;
		free(path);
		return 0;
	}
	in->map_size = (size_t)st.st_size;
	in->map = mmap(NULL, in->map_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (in->map == MAP_FAILED) {
		fprintf(stderr, "%s: cannot map %s: %s\n", prog, path,
			strerror(errno));
		in->map = NULL;
		goto err_fd;
	}
	/* Sequential access is the common case for traces. */
	(void)madvise(in->map, in->map_size, MADV_SEQUENTIAL);
	close(fd);
	in->data = (const uint8_t *)in->map + from;
	in->size = (size_t)(to - from);
	in->offset = from;
	free(path);
	return 0;

err_fd:
	close(fd);
err:
	free(path);
	return -1;
}

int cli_input_open(struct cli_input *in, const char *spec, const char *prog)
{
	return input_open(in, spec, prog, NULL, NULL);
}

int cli_input_read(struct cli_input *in, const char *spec, const char *prog,
		   uint8_t **buf, size_t *cap)
{
	return input_open(in, spec, prog, buf, cap);
}

void cli_input_close(struct cli_input *in)
{
	if (in->map)
		munmap(in->map, in->map_size);
	memset(in, 0, sizeof(*in));
}
