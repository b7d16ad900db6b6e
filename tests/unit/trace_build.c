/* SPDX-License-Identifier: BSD-2-Clause */
/* The unit tests' trace builder (trace_build.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "trace_build.h"

struct hwt_pt_packet tb_packet(uint8_t type)
{
	struct hwt_pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = type;
	return p;
}

void tb_put(struct tb *t, const struct hwt_pt_packet *p)
{
	int n = hwt_pt_encode(t->buf + t->len, t->buf + t->size, p);

	if (n <= 0)
		fprintf(stderr, "cannot encode packet type %u at %zu\n",
			p->type, t->len);
	assert_true(n > 0);
	t->len += (size_t) n;
}

/* A packet with the fields named, the others zero (of the union, the
 * encoder reads only the member the type names). */
#define PUT(t, ty, ...) \
	tb_put((t), &(const struct hwt_pt_packet){ .type = (ty), __VA_ARGS__ })

void tb_simple(struct tb *t, uint8_t type)
{
	struct hwt_pt_packet p = tb_packet(type);

	tb_put(t, &p);
}

void tb_ipc(struct tb *t, uint8_t type, uint8_t ipc, uint64_t ip)
{
	switch (ipc) {
	case HWT_PT_IPC_SUPPRESSED: ip = 0; break;
	case HWT_PT_IPC_UPDATE16: ip &= 0xffff; break;
	case HWT_PT_IPC_UPDATE32: ip &= 0xffffffff; break;
	case HWT_PT_IPC_SEXT48:
	case HWT_PT_IPC_UPDATE48: ip &= 0xffffffffffffull; break;
	default: break;
	}
	PUT(t, type, .u.ip = { .ipc = ipc, .ip = ip });
}

void tb_ip(struct tb *t, uint8_t type, uint64_t ip)
{
	tb_ipc(t, type, ip ? HWT_PT_IPC_SEXT48 : HWT_PT_IPC_SUPPRESSED, ip);
}

void tb_tnt_raw(struct tb *t, uint8_t type, unsigned nbits, uint64_t payload)
{
	PUT(t, type, .u.tnt = { .bits = (uint8_t) nbits, .payload = payload });
}

void tb_tnt(struct tb *t, const char *bits)
{
	size_t n = strlen(bits);
	uint64_t payload = 0;

	for (size_t i = 0; i < n; i++)
		payload = (payload << 1) | (bits[i] == 't');
	tb_tnt_raw(t, n <= 6 ? HWT_PT_TNT8 : HWT_PT_TNT64, (unsigned) n,
		   payload);
}

static void psbplus(struct tb *t, const uint64_t *tsc, int has_fup,
		    uint64_t fup)
{
	tb_simple(t, HWT_PT_PSB);
	tb_mode_exec(t, HWT_PT_EXEC_CSL);
	if (tsc)
		tb_tsc(t, *tsc);
	if (has_fup)
		tb_ipc(t, HWT_PT_FUP, HWT_PT_IPC_SEXT48, fup);
	tb_simple(t, HWT_PT_PSBEND);
}

void tb_psbplus(struct tb *t, uint64_t fup)
{
	psbplus(t, NULL, fup != 0, fup);
}

void tb_psbplus_tsc(struct tb *t, uint64_t tsc, uint64_t fup)
{
	psbplus(t, &tsc, 1, fup);
}

void tb_mode_exec(struct tb *t, uint8_t bits)
{
	PUT(t, HWT_PT_MODE_EXEC, .u.exec = bits);
}

void tb_mode_tsx(struct tb *t, uint8_t bits)
{
	PUT(t, HWT_PT_MODE_TSX, .u.tsx = bits);
}

void tb_tsc(struct tb *t, uint64_t tsc)
{
	PUT(t, HWT_PT_TSC, .u.tsc = tsc);
}

void tb_mtc(struct tb *t, uint8_t ctc)
{
	PUT(t, HWT_PT_MTC, .u.mtc = ctc);
}

void tb_cyc(struct tb *t, uint64_t cyc)
{
	PUT(t, HWT_PT_CYC, .u.cyc = cyc);
}

void tb_cbr(struct tb *t, uint8_t ratio)
{
	PUT(t, HWT_PT_CBR, .u.cbr = ratio);
}

void tb_pip(struct tb *t, uint64_t cr3, uint8_t nr)
{
	PUT(t, HWT_PT_PIP, .u.pip = { .cr3 = cr3, .nr = nr });
}

void tb_vmcs(struct tb *t, uint64_t base)
{
	PUT(t, HWT_PT_VMCS, .u.vmcs = base);
}

void tb_ptw(struct tb *t, uint8_t plc, uint64_t payload, uint8_t ip)
{
	PUT(t, HWT_PT_PTW,
	    .u.ptw = { .plc = plc, .ip = ip, .payload = payload });
}

void tb_exstop(struct tb *t, uint8_t ip)
{
	PUT(t, HWT_PT_EXSTOP, .u.exstop_ip = ip);
}

void tb_mwait(struct tb *t, uint32_t hints, uint32_t ext)
{
	PUT(t, HWT_PT_MWAIT, .u.mwait = { .hints = hints, .ext = ext });
}

void tb_cfe(struct tb *t, uint8_t type, uint8_t vector, uint8_t ip)
{
	PUT(t, HWT_PT_CFE,
	    .u.cfe = { .type = type, .vector = vector, .ip = ip });
}

void tb_evd(struct tb *t, uint8_t type, uint64_t payload)
{
	PUT(t, HWT_PT_EVD, .u.evd = { .type = type, .payload = payload });
}
