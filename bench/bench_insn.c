/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench_insn: instruction classification throughput (hwt_insn_decode) on
 * the executable sections of a real ELF file.
 *
 *   bench_insn [-n ROUNDS] [-m 16|32|64] [ELF]
 *
 * Linear sweep over every SHF_EXECINSTR section (one byte on at an
 * undecodable spot), best of ROUNDS, for:
 *   zydis     ZydisDecoderDecodeInstruction alone (MINIMAL), the floor
 *   hwt       hwt_insn_decode: the same plus the classification
 * ELF defaults to the biggest of a few well-known libraries, else to this
 * program itself.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <Zydis/Zydis.h>

#include <hwt/flow.h>

struct region {
	const uint8_t *code;
	size_t size;
	uint64_t addr;
};

struct result {
	uint64_t insns;
	uint64_t bytes_skipped;
	uint64_t checksum;	/* keeps the compiler from dropping work */
	uint64_t classes[HWT_IC_INDIRECT + 1];
	uint64_t direct;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static void run_hwt(const struct region *rg, size_t nrg, unsigned mode,
		    struct result *r)
{
	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < nrg; i++) {
		const uint8_t *p = rg[i].code;
		size_t off = 0, n = rg[i].size;

		while (off < n) {
			struct hwt_insn_info info;

			if (hwt_insn_decode(&info, p + off, n - off,
					    rg[i].addr + off, mode) < 0) {
				r->bytes_skipped++;
				off++;
				continue;
			}
			r->insns++;
			r->classes[info.iclass]++;
			r->direct += info.flags & HWT_INSN_DIRECT;
			r->checksum += info.target ^ info.flags;
			off += info.size;
		}
	}
}

static void run_zydis(const struct region *rg, size_t nrg, unsigned mode,
		      struct result *r)
{
	ZydisDecoder d;

	if (mode == HWT_MODE_16)
		ZydisDecoderInit(&d, ZYDIS_MACHINE_MODE_LEGACY_16,
				 ZYDIS_STACK_WIDTH_16);
	else if (mode == HWT_MODE_32)
		ZydisDecoderInit(&d, ZYDIS_MACHINE_MODE_LEGACY_32,
				 ZYDIS_STACK_WIDTH_32);
	else
		ZydisDecoderInit(&d, ZYDIS_MACHINE_MODE_LONG_64,
				 ZYDIS_STACK_WIDTH_64);
	ZydisDecoderEnableMode(&d, ZYDIS_DECODER_MODE_MINIMAL, ZYAN_TRUE);

	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < nrg; i++) {
		const uint8_t *p = rg[i].code;
		size_t off = 0, n = rg[i].size;

		while (off < n) {
			ZydisDecodedInstruction zi;

			if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(
				    &d, NULL, p + off, n - off, &zi))) {
				r->bytes_skipped++;
				off++;
				continue;
			}
			r->insns++;
			r->checksum += zi.opcode;
			off += zi.length;
		}
	}
}

static const char *default_elf(void)
{
	static const char *const candidates[] = {
		"/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1",
		"/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1",
		"/usr/bin/gdb",
	};

	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]);
	     i++)
		if (access(candidates[i], R_OK) == 0)
			return candidates[i];
	return "/proc/self/exe";
}

/* The executable sections of @path, pointing into its mapping. */
static size_t load_code(const char *path, struct region *rg, size_t max,
			size_t *total)
{
	size_t n = 0;
	struct stat st;
	Elf_Scn *scn = NULL;
	const uint8_t *map;
	Elf *elf;
	int fd;

	*total = 0;
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(path);
		exit(1);
	}
	map = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		fprintf(stderr, "%s: %s\n", path, elf_errmsg(-1));
		exit(1);
	}
	while ((scn = elf_nextscn(elf, scn)) && n < max) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) ||
		    sh.sh_offset + sh.sh_size > (uint64_t) st.st_size)
			continue;
		rg[n].code = map + sh.sh_offset;
		rg[n].size = sh.sh_size;
		rg[n].addr = sh.sh_addr;
		*total += sh.sh_size;
		n++;
	}
	elf_end(elf);
	close(fd);
	return n;
}

int main(int argc, char **argv)
{
	static const char *const cls[] = {
		"unknown", "other", "call", "return", "jump", "cond_jump",
		"far_call", "far_return", "far_jump", "ptwrite", "indirect",
	};
	struct region rg[64];
	struct result r, rz;
	double best = 0, bestz = 0;
	unsigned mode = HWT_MODE_64;
	int rounds = 3, opt;
	const char *path;
	size_t nrg, total;

	while ((opt = getopt(argc, argv, "n:m:")) != -1) {
		switch (opt) {
		case 'n':
			rounds = atoi(optarg);
			break;
		case 'm':
			mode = atoi(optarg) == 16 ? HWT_MODE_16 :
			       atoi(optarg) == 32 ? HWT_MODE_32 : HWT_MODE_64;
			break;
		default:
			fprintf(stderr,
				"usage: bench_insn [-n ROUNDS] [-m 16|32|64] [ELF]\n");
			return 2;
		}
	}
	if (rounds < 1)
		rounds = 1;
	path = optind < argc ? argv[optind] : default_elf();
	nrg = load_code(path, rg, sizeof(rg) / sizeof(rg[0]), &total);
	if (!nrg) {
		fprintf(stderr, "%s: no executable sections\n", path);
		return 1;
	}

	for (int i = 0; i < rounds; i++) {
		double t0 = now(), t;

		run_zydis(rg, nrg, mode, &rz);
		t = now() - t0;
		if (!i || t < bestz)
			bestz = t;
		t0 = now();
		run_hwt(rg, nrg, mode, &r);
		t = now() - t0;
		if (!i || t < best)
			best = t;
	}

	printf("%s: %zu executable sections, %zu bytes, mode %u, best of %d\n",
	       path, nrg, total, mode, rounds);
	printf("  zydis  %10llu insns %8.3f s %7.1f Minsn/s %6.1f ns/insn\n",
	       (unsigned long long) rz.insns, bestz, rz.insns / bestz / 1e6,
	       bestz * 1e9 / (double) rz.insns);
	printf("  hwt    %10llu insns %8.3f s %7.1f Minsn/s %6.1f ns/insn "
	       "(%llu bytes skipped)\n",
	       (unsigned long long) r.insns, best, r.insns / best / 1e6,
	       best * 1e9 / (double) r.insns,
	       (unsigned long long) r.bytes_skipped);
	printf("  classes:");
	for (int c = 0; c <= HWT_IC_PTWRITE; c++)
		printf(" %s %llu", cls[c], (unsigned long long) r.classes[c]);
	printf("; direct %llu (checksum %llx)\n", (unsigned long long) r.direct,
	       (unsigned long long) (r.checksum ^ rz.checksum));
	return 0;
}
