/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench_pt: in-process packet decode throughput, without the CLI's file
 * handling and printing, to tell library speed from front-end speed.
 *
 *   bench_pt [-n ROUNDS] TRACE
 *
 * Times (best of ROUNDS) two loops over the whole trace held in memory:
 *   decode    hwt_pt_decode, one packet at a time (stateless)
 *   decoder   hwt_pkt_next on a hwt_pkt_decoder (sync, error recovery)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hwt/pt.h>

struct result {
	uint64_t packets;
	uint64_t errors;
	uint64_t checksum;	/* keeps the compiler from dropping work */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const uint8_t psb_pattern[HWT_PT_PSB_SIZE] = {
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
};

static const uint8_t *next_psb(const uint8_t *pos, const uint8_t *end)
{
	const uint8_t *p = memmem(pos, (size_t)(end - pos), psb_pattern,
				  sizeof(psb_pattern));

	return p ? p : end;
}

static void run_decode(const uint8_t *buf, size_t size, struct result *r)
{
	const uint8_t *pos = next_psb(buf, buf + size), *end = buf + size;
	struct hwt_pt_packet pkt;
	unsigned bip_size = 0;

	memset(r, 0, sizeof(*r));
	while (pos < end) {
		int n = hwt_pt_decode(pos, end, bip_size, &pkt);

		if (n <= 0) {
			r->errors++;
			pos = next_psb(pos + 1, end);
			bip_size = 0;
			continue;
		}
		if (pkt.type == HWT_PT_BBP)
			bip_size = pkt.u.bbp.sz ? 4 : 8;
		else if (pkt.type == HWT_PT_BEP || pkt.type == HWT_PT_PSB)
			bip_size = 0;
		r->packets++;
		r->checksum += pkt.type + pkt.size;
		pos += n;
	}
}

static int run_decoder(const uint8_t *buf, size_t size, struct result *r)
{
	struct hwt_pkt_decoder *d = hwt_pkt_decoder_new(buf, size);
	struct hwt_pt_packet pkt;
	int n;

	memset(r, 0, sizeof(*r));
	if (!d)
		return -1;
	while (hwt_pkt_sync_forward(d) == 0) {
		while ((n = hwt_pkt_next(d, &pkt)) > 0) {
			r->packets++;
			r->checksum += pkt.type + pkt.size;
		}
		if (n == 0)
			break;
		r->errors++;
	}
	hwt_pkt_decoder_delete(d);
	return 0;
}

static uint8_t *load(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long len;

	if (!f)
		goto fail;
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) <= 0 ||
	    fseek(f, 0, SEEK_SET))
		goto fail;
	buf = malloc((size_t)len);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len)
		goto fail;
	fclose(f);
	*size = (size_t)len;
	return buf;
fail:
	fprintf(stderr, "bench_pt: %s: %s\n", path,
		errno ? strerror(errno) : "empty or unreadable");
	free(buf);
	if (f)
		fclose(f);
	return NULL;
}

static void report(const char *name, size_t size, double best,
		   const struct result *r)
{
	printf("%-8s %9.1f MB/s %8.1f Mpackets/s  (%llu packets, "
	       "%llu errors, best %.3f s, check %llx)\n", name,
	       (double)size / best / 1e6, (double)r->packets / best / 1e6,
	       (unsigned long long)r->packets,
	       (unsigned long long)r->errors, best,
	       (unsigned long long)(r->checksum & 0xffff));
}

int main(int argc, char **argv)
{
	double best_decode = 1e30, best_decoder = 1e30, t;
	struct result r1, r2;
	unsigned rounds = 3;
	uint8_t *buf;
	size_t size;
	int c;

	while ((c = getopt(argc, argv, "n:h")) != -1) {
		switch (c) {
		case 'n':
			rounds = (unsigned)strtoul(optarg, NULL, 0);
			if (!rounds)
				rounds = 1;
			break;
		default:
			fprintf(stderr, "usage: bench_pt [-n ROUNDS] TRACE\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: bench_pt [-n ROUNDS] TRACE\n");
		return 2;
	}
	buf = load(argv[optind], &size);
	if (!buf)
		return 1;

	for (unsigned i = 0; i < rounds; i++) {
		t = now();
		run_decode(buf, size, &r1);
		t = now() - t;
		if (t < best_decode)
			best_decode = t;

		t = now();
		if (run_decoder(buf, size, &r2)) {
			fprintf(stderr, "bench_pt: out of memory\n");
			free(buf);
			return 1;
		}
		t = now() - t;
		if (t < best_decoder)
			best_decoder = t;
	}
	report("decode", size, best_decode, &r1);
	report("decoder", size, best_decoder, &r2);
	free(buf);
	return 0;
}
