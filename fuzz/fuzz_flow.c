/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for the block decoder: random packets over a fixed
 * small code image. The first input byte picks decoder flags; the rest is
 * the trace, after a PSB+ that enables tracing at the image, so mutations
 * reach the flow logic at once. Work per input is bounded.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/flow.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * 1000: add rax, 1; cmp rax, 3; jb 1000; call 1030; jmp rax
 * 100f: mov cr3, rax; call rax; ret; vmlaunch; syscall; iretq; int3
 * 1030: nop; je 1038; ret; ...; 1038: jmp 1000; ptwrite eax; hlt; jmp rax
 */
static const uint8_t code[] = {
	0x48, 0x83, 0xc0, 0x01, 0x48, 0x83, 0xf8, 0x03, 0x72, 0xf6,
	0xe8, 0x21, 0x00, 0x00, 0x00, 0xff, 0xe0,
	0x0f, 0x22, 0xd8, 0xff, 0xd0, 0xc3, 0x0f, 0x01, 0xc2, 0x0f, 0x05,
	0x48, 0xcf, 0xcc, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
	/* 1030 */
	0x90, 0x74, 0x04, 0xc3, 0x90, 0x90, 0x90, 0x90,
	/* 1038 */
	0xeb, 0xc6, 0xf3, 0x0f, 0xae, 0xe0, 0xf4, 0xff, 0xe0,
	/* 1041: an instruction cut by the end of the section */
	0x48, 0x83
};

static const uint8_t psb_plus[] = {
	/* psb */
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
	/* mode.exec 64-bit */
	0x99, 0x01,
	/* fup 0x1000 (sext48) */
	0x7d, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00,
	/* psbend */
	0x02, 0x23
};

enum {
	MAX_STEPS = 1 << 16,	/* blocks + events per input */
	MAX_SYNCS = 64
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t tail[] = { 0x0f, 0x22 };
	struct hwt_blk_config cfg;
	struct hwt_blk_decoder *d;
	struct hwt_image *image;
	uint8_t *trace;
	unsigned steps = 0, syncs = 0;
	uint8_t sel;

	if (!size)
		return 0;
	sel = data[0];
	data++;
	size--;

	trace = malloc(sizeof(psb_plus) + size);
	if (!trace)
		return 0;
	memcpy(trace, psb_plus, sizeof(psb_plus));
	memcpy(trace + sizeof(psb_plus), data, size);

	image = hwt_image_new();
	if (!image) {
		free(trace);
		return 0;
	}
	(void) hwt_image_add_buffer(image, code, sizeof(code), 0x1000);
	/* A second section right behind: instructions across the seam. */
	(void) hwt_image_add_buffer(image, tail, sizeof(tail),
				    0x1000 + sizeof(code));

	hwt_blk_config_init(&cfg);
	cfg.qry.begin = trace;
	cfg.qry.end = trace + sizeof(psb_plus) + size;
	cfg.flags = sel & (HWT_BLK_END_ON_CALL | HWT_BLK_END_ON_JUMP |
			   HWT_BLK_ENABLE_TICK | HWT_BLK_NO_CACHE);
	if (sel & 0x10)
		cfg.qry.errata = HWT_PT_ERRATUM_SKD022 |
				 HWT_PT_ERRATUM_SKL014 |
				 HWT_PT_ERRATUM_BDM64 | HWT_PT_ERRATUM_BDM70;
	if (sel & 0x20) {
		cfg.qry.addr_filter[0].cfg = 1;
		cfg.qry.addr_filter[0].a = 0x1000;
		cfg.qry.addr_filter[0].b = 0x1030;
	}
	if (sel & 0x40)
		cfg.qry.flags |= HWT_QRY_EVENT_TRACE;

	d = hwt_blk_new(&cfg, image);
	if (!d)
		goto out;

	while (syncs++ < MAX_SYNCS && steps < MAX_STEPS) {
		int status = hwt_blk_sync_forward(d);

		if (status < 0)
			break;

		while (steps++ < MAX_STEPS) {
			struct hwt_block block;
			uint64_t ip = 0, ip2;

			while (status >= 0 && (status & HWT_STS_EVENT_PENDING) &&
			       steps++ < MAX_STEPS) {
				struct hwt_event ev;

				status = hwt_blk_event(d, &ev);
			}
			if (status < 0 || (status & HWT_STS_EOS))
				break;

			status = hwt_blk_next(d, &block);

			/* Walk the block as a printer would. */
			ip = block.ip;
			for (uint32_t i = 0; i < block.ninsn && i < 0x10000;
			     ++i) {
				struct hwt_insn insn;

				if (hwt_blk_insn_walk(image, block.mode, &ip,
						      &insn) < 0)
					break;
			}
			(void) hwt_blk_get_ip(d, &ip2);
			if (status < 0)
				break;
		}
	}

	hwt_blk_delete(d);
out:
	hwt_image_delete(image);
	free(trace);
	return 0;
}
