/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Instruction classification (hwt_insn_decode).
 *
 * Hand-written encodings pin down every class and flag in each mode, the
 * direct targets and truncated input. With libipt available, the
 * classification is also compared with libipt's instruction decoder (the
 * reference ptxed uses) on the code of the libraries loaded into this test
 * and on random bytes, in all three modes: libipt must see the same size,
 * the same class and, for direct branches, go to the same target.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <Zydis/Zydis.h>

#include <hwt/error.h>
#include <hwt/flow.h>

#ifdef HWT_HAVE_LIBIPT
#include <intel-pt.h>
#include <link.h>
#endif

/* From src/flow/insn.c: its preinitialised Zydis decoder for @mode. */
const void *hwt_insn_zydis_decoder(unsigned mode);
/* From src/flow/insn.c: hwt_insn_decode without the table fast path. */
int hwt_insn_decode_zydis(struct hwt_insn_info *info, const uint8_t *code,
			  size_t avail, uint64_t ip, unsigned mode);

#define IP16 0x7c00ull
#define IP32 0x08049000ull
#define IP64 0x7ffff7a01000ull

#define M16 HWT_MODE_16
#define M32 HWT_MODE_32
#define M64 HWT_MODE_64

#define BYTES(...)							\
	.len = sizeof((const uint8_t[]){ __VA_ARGS__ }),		\
	.bytes = { __VA_ARGS__ }

struct tcase {
	const char *name;
	unsigned mode;
	uint64_t ip;
	uint8_t len;
	uint8_t bytes[16];
	int rc;
	uint8_t size;
	uint8_t iclass;
	uint8_t flags;
	uint64_t target;
};

#define OK(sz, cls, fl) .rc = 0, .size = (sz), .iclass = (cls), .flags = (fl)
#define DIR(sz, cls, tgt)						\
	.rc = 0, .size = (sz), .iclass = (cls), .flags = HWT_INSN_DIRECT, \
	.target = (tgt)
#define BAD .rc = -HWT_ERR_BAD_INSN

static const struct tcase cases[] = {
	/* ---- 64-bit: plain instructions */
	{ "nop", M64, IP64, BYTES(0x90), OK(1, HWT_IC_OTHER, 0) },
	{ "mov rax,rbx", M64, IP64, BYTES(0x48, 0x89, 0xd8),
	  OK(3, HWT_IC_OTHER, 0) },
	{ "ud2", M64, IP64, BYTES(0x0f, 0x0b), OK(2, HWT_IC_OTHER, 0) },
	{ "vzeroupper", M64, IP64, BYTES(0xc5, 0xf8, 0x77),
	  OK(3, HWT_IC_OTHER, 0) },
	{ "vmovaps zmm", M64, IP64, BYTES(0x62, 0xf1, 0x7c, 0x48, 0x28, 0xc1),
	  OK(6, HWT_IC_OTHER, 0) },
	{ "15-byte nop", M64, IP64,
	  BYTES(0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84,
		0x00, 0x00, 0x00, 0x00, 0x00),
	  OK(15, HWT_IC_OTHER, 0) },
	{ "16-byte nop", M64, IP64,
	  BYTES(0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x2e, 0x0f, 0x1f,
		0x84, 0x00, 0x00, 0x00, 0x00, 0x00),
	  BAD },
	{ "mov rax,imm64", M64, IP64,
	  BYTES(0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8), OK(10, HWT_IC_OTHER, 0) },

	/* ---- 64-bit: near calls */
	{ "call rel32", M64, IP64, BYTES(0xe8, 0x10, 0x00, 0x00, 0x00),
	  DIR(5, HWT_IC_CALL, IP64 + 0x15) },
	{ "call rel32 back", M64, IP64, BYTES(0xe8, 0xfb, 0xff, 0xff, 0xff),
	  DIR(5, HWT_IC_CALL, IP64) },
	{ "call rel32 -2G", M64, IP64, BYTES(0xe8, 0x00, 0x00, 0x00, 0x80),
	  DIR(5, HWT_IC_CALL, IP64 + 5 - 0x80000000ull) },
	/* Intel ignores 0x66 on near branches in 64-bit mode. */
	{ "66 call rel32", M64, IP64,
	  BYTES(0x66, 0xe8, 0x00, 0x01, 0x00, 0x00),
	  DIR(6, HWT_IC_CALL, IP64 + 6 + 0x100) },
	{ "rex.w call rel32", M64, IP64,
	  BYTES(0x48, 0xe8, 0xf0, 0xff, 0xff, 0xff),
	  DIR(6, HWT_IC_CALL, IP64 + 6 - 0x10) },
	{ "call rel32 wraps", M64, 0xfffffffffffffff0ull,
	  BYTES(0xe8, 0x20, 0x00, 0x00, 0x00),
	  DIR(5, HWT_IC_CALL, 0x15) },
	{ "call rax", M64, IP64, BYTES(0xff, 0xd0), OK(2, HWT_IC_CALL, 0) },
	{ "call [rip+0]", M64, IP64, BYTES(0xff, 0x15, 0, 0, 0, 0),
	  OK(6, HWT_IC_CALL, 0) },
	{ "notrack call [rax]", M64, IP64, BYTES(0x3e, 0xff, 0x10),
	  OK(3, HWT_IC_CALL, 0) },

	/* ---- 64-bit: near jumps */
	{ "jmp rel8 self", M64, IP64, BYTES(0xeb, 0xfe),
	  DIR(2, HWT_IC_JUMP, IP64) },
	{ "jmp rel8 +127", M64, IP64, BYTES(0xeb, 0x7f),
	  DIR(2, HWT_IC_JUMP, IP64 + 2 + 127) },
	{ "jmp rel8 -128", M64, IP64, BYTES(0xeb, 0x80),
	  DIR(2, HWT_IC_JUMP, IP64 + 2 - 128) },
	{ "jmp rel32", M64, IP64, BYTES(0xe9, 0x00, 0x10, 0x00, 0x00),
	  DIR(5, HWT_IC_JUMP, IP64 + 5 + 0x1000) },
	{ "66 jmp rel32", M64, IP64,
	  BYTES(0x66, 0xe9, 0xfa, 0xff, 0xff, 0xff),
	  DIR(6, HWT_IC_JUMP, IP64) },
	{ "bnd jmp rel32", M64, IP64, BYTES(0xf2, 0xe9, 0, 0, 0, 0),
	  DIR(6, HWT_IC_JUMP, IP64 + 6) },
	{ "rex jmp rel8", M64, IP64, BYTES(0x48, 0xeb, 0x10),
	  DIR(3, HWT_IC_JUMP, IP64 + 3 + 0x10) },
	{ "jmp rax", M64, IP64, BYTES(0xff, 0xe0), OK(2, HWT_IC_JUMP, 0) },
	{ "notrack jmp rax", M64, IP64, BYTES(0x3e, 0xff, 0xe0),
	  OK(3, HWT_IC_JUMP, 0) },
	{ "jmp [rax*8+disp32]", M64, IP64,
	  BYTES(0xff, 0x24, 0xc5, 0x00, 0x10, 0x00, 0x00),
	  OK(7, HWT_IC_JUMP, 0) },

	/* ---- 64-bit: conditional jumps */
	{ "jz rel8", M64, IP64, BYTES(0x74, 0x05),
	  DIR(2, HWT_IC_COND_JUMP, IP64 + 7) },
	{ "jo rel8 back", M64, IP64, BYTES(0x70, 0xf0),
	  DIR(2, HWT_IC_COND_JUMP, IP64 + 2 - 16) },
	{ "jg rel8", M64, IP64, BYTES(0x7f, 0x00),
	  DIR(2, HWT_IC_COND_JUMP, IP64 + 2) },
	{ "jz rel32", M64, IP64, BYTES(0x0f, 0x84, 0x00, 0x01, 0x00, 0x00),
	  DIR(6, HWT_IC_COND_JUMP, IP64 + 6 + 0x100) },
	{ "jo rel32 back", M64, IP64,
	  BYTES(0x0f, 0x80, 0x00, 0xff, 0xff, 0xff),
	  DIR(6, HWT_IC_COND_JUMP, IP64 + 6 - 0x100) },
	{ "66 jg rel32", M64, IP64,
	  BYTES(0x66, 0x0f, 0x8f, 0x10, 0x00, 0x00, 0x00),
	  DIR(7, HWT_IC_COND_JUMP, IP64 + 7 + 0x10) },
	{ "hint jz rel8", M64, IP64, BYTES(0x3e, 0x74, 0x00),
	  DIR(3, HWT_IC_COND_JUMP, IP64 + 3) },
	{ "loop", M64, IP64, BYTES(0xe2, 0xfe),
	  DIR(2, HWT_IC_COND_JUMP, IP64) },
	{ "loope", M64, IP64, BYTES(0xe1, 0x10),
	  DIR(2, HWT_IC_COND_JUMP, IP64 + 0x12) },
	{ "loopne", M64, IP64, BYTES(0xe0, 0x80),
	  DIR(2, HWT_IC_COND_JUMP, IP64 + 2 - 0x80) },
	{ "jrcxz", M64, IP64, BYTES(0xe3, 0x10),
	  DIR(2, HWT_IC_COND_JUMP, IP64 + 0x12) },
	{ "jecxz", M64, IP64, BYTES(0x67, 0xe3, 0x10),
	  DIR(3, HWT_IC_COND_JUMP, IP64 + 0x13) },

	/* ---- 64-bit: returns */
	{ "ret", M64, IP64, BYTES(0xc3), OK(1, HWT_IC_RETURN, 0) },
	{ "ret imm16", M64, IP64, BYTES(0xc2, 0x08, 0x00),
	  OK(3, HWT_IC_RETURN, 0) },
	{ "rep ret", M64, IP64, BYTES(0xf3, 0xc3), OK(2, HWT_IC_RETURN, 0) },
	{ "bnd ret", M64, IP64, BYTES(0xf2, 0xc3), OK(2, HWT_IC_RETURN, 0) },
	{ "66 ret", M64, IP64, BYTES(0x66, 0xc3), OK(2, HWT_IC_RETURN, 0) },
	{ "retf", M64, IP64, BYTES(0xcb), OK(1, HWT_IC_FAR_RETURN, 0) },
	{ "retf imm16", M64, IP64, BYTES(0xca, 0x10, 0x00),
	  OK(3, HWT_IC_FAR_RETURN, 0) },
	{ "retfq", M64, IP64, BYTES(0x48, 0xcb),
	  OK(2, HWT_IC_FAR_RETURN, 0) },
	{ "iret", M64, IP64, BYTES(0xcf),
	  OK(1, HWT_IC_FAR_RETURN, HWT_INSN_IRET) },
	{ "iretq", M64, IP64, BYTES(0x48, 0xcf),
	  OK(2, HWT_IC_FAR_RETURN, HWT_INSN_IRET) },
	{ "sysret", M64, IP64, BYTES(0x0f, 0x07),
	  OK(2, HWT_IC_FAR_RETURN, HWT_INSN_IRET) },
	{ "sysretq", M64, IP64, BYTES(0x48, 0x0f, 0x07),
	  OK(3, HWT_IC_FAR_RETURN, HWT_INSN_IRET) },
	{ "sysexit", M64, IP64, BYTES(0x0f, 0x35),
	  OK(2, HWT_IC_FAR_RETURN, HWT_INSN_IRET) },
	{ "uiret", M64, IP64, BYTES(0xf3, 0x0f, 0x01, 0xec),
	  OK(4, HWT_IC_FAR_RETURN, HWT_INSN_UIRET) },
	{ "vmlaunch", M64, IP64, BYTES(0x0f, 0x01, 0xc2),
	  OK(3, HWT_IC_FAR_RETURN, HWT_INSN_VMENTRY) },
	{ "vmresume", M64, IP64, BYTES(0x0f, 0x01, 0xc3),
	  OK(3, HWT_IC_FAR_RETURN, HWT_INSN_VMENTRY) },

	/* ---- 64-bit: far calls and jumps */
	{ "call far [rax]", M64, IP64, BYTES(0xff, 0x18),
	  OK(2, HWT_IC_FAR_CALL, 0) },
	{ "rex.w call far [rax]", M64, IP64, BYTES(0x48, 0xff, 0x18),
	  OK(3, HWT_IC_FAR_CALL, 0) },
	{ "jmp far [rax]", M64, IP64, BYTES(0xff, 0x28),
	  OK(2, HWT_IC_FAR_JUMP, 0) },
	{ "int3", M64, IP64, BYTES(0xcc),
	  OK(1, HWT_IC_FAR_CALL, HWT_INSN_SYSCALL) },
	{ "int 0x80", M64, IP64, BYTES(0xcd, 0x80),
	  OK(2, HWT_IC_FAR_CALL, HWT_INSN_SYSCALL) },
	{ "int1", M64, IP64, BYTES(0xf1),
	  OK(1, HWT_IC_FAR_CALL, HWT_INSN_SYSCALL) },
	{ "syscall", M64, IP64, BYTES(0x0f, 0x05),
	  OK(2, HWT_IC_FAR_CALL, HWT_INSN_SYSCALL) },
	{ "sysenter", M64, IP64, BYTES(0x0f, 0x34),
	  OK(2, HWT_IC_FAR_CALL, HWT_INSN_SYSCALL) },
	{ "vmcall", M64, IP64, BYTES(0x0f, 0x01, 0xc1),
	  OK(3, HWT_IC_FAR_CALL, 0) },

	/* ---- 64-bit: flags on non-branches */
	{ "mov cr3,rax", M64, IP64, BYTES(0x0f, 0x22, 0xd8),
	  OK(3, HWT_IC_OTHER, HWT_INSN_MOV_CR3) },
	{ "mov cr3,r8", M64, IP64, BYTES(0x41, 0x0f, 0x22, 0xd8),
	  OK(4, HWT_IC_OTHER, HWT_INSN_MOV_CR3) },
	{ "mov cr3,rax mod!=3", M64, IP64, BYTES(0x0f, 0x22, 0x18),
	  OK(3, HWT_IC_OTHER, HWT_INSN_MOV_CR3) },
	{ "mov cr0,rax", M64, IP64, BYTES(0x0f, 0x22, 0xc0),
	  OK(3, HWT_IC_OTHER, 0) },
	{ "mov cr4,rax", M64, IP64, BYTES(0x0f, 0x22, 0xe0),
	  OK(3, HWT_IC_OTHER, 0) },
	{ "mov cr8,rax", M64, IP64, BYTES(0x44, 0x0f, 0x22, 0xc0),
	  OK(4, HWT_IC_OTHER, 0) },
	{ "mov rax,cr3", M64, IP64, BYTES(0x0f, 0x20, 0xd8),
	  OK(3, HWT_IC_OTHER, 0) },
	{ "vmptrld", M64, IP64, BYTES(0x0f, 0xc7, 0x30),
	  OK(3, HWT_IC_OTHER, HWT_INSN_VMPTRLD) },
	{ "vmclear", M64, IP64, BYTES(0x66, 0x0f, 0xc7, 0x30),
	  OK(4, HWT_IC_OTHER, HWT_INSN_VMPTRLD) },
	{ "vmxon", M64, IP64, BYTES(0xf3, 0x0f, 0xc7, 0x30),
	  OK(4, HWT_IC_OTHER, HWT_INSN_VMPTRLD) },
	{ "rdrand", M64, IP64, BYTES(0x0f, 0xc7, 0xf0),
	  OK(3, HWT_IC_OTHER, 0) },
	{ "cmpxchg16b", M64, IP64, BYTES(0x48, 0x0f, 0xc7, 0x08),
	  OK(4, HWT_IC_OTHER, 0) },
	{ "vmfunc", M64, IP64, BYTES(0x0f, 0x01, 0xd4),
	  OK(3, HWT_IC_OTHER, 0) },
	{ "lgdt", M64, IP64, BYTES(0x0f, 0x01, 0x10),
	  OK(3, HWT_IC_OTHER, 0) },
	{ "ptwrite [rax]", M64, IP64, BYTES(0xf3, 0x0f, 0xae, 0x20),
	  OK(4, HWT_IC_PTWRITE, 0) },
	{ "ptwrite rax", M64, IP64, BYTES(0xf3, 0x48, 0x0f, 0xae, 0xe0),
	  OK(5, HWT_IC_PTWRITE, 0) },
	{ "66 ptwrite", M64, IP64, BYTES(0x66, 0xf3, 0x0f, 0xae, 0x20),
	  OK(5, HWT_IC_OTHER, 0) },
	{ "xsave", M64, IP64, BYTES(0x0f, 0xae, 0x20),
	  OK(3, HWT_IC_OTHER, 0) },
	{ "sti", M64, IP64, BYTES(0xfb), OK(1, HWT_IC_OTHER, HWT_INSN_STI_POPF) },
	{ "cli", M64, IP64, BYTES(0xfa), OK(1, HWT_IC_OTHER, HWT_INSN_STI_POPF) },
	{ "popf", M64, IP64, BYTES(0x9d), OK(1, HWT_IC_OTHER, HWT_INSN_STI_POPF) },

	/* ---- 64-bit: sized as libipt does */
	{ "ud0 (no modrm)", M64, IP64, BYTES(0x0f, 0xff, 0x84, 0, 0, 0, 0, 0),
	  OK(2, HWT_IC_OTHER, 0) },
	{ "ud1 (no modrm)", M64, IP64, BYTES(0x66, 0x0f, 0xb9, 0xc0),
	  OK(3, HWT_IC_OTHER, 0) },

	/* ---- 64-bit: invalid */
	{ "xop (amd)", M64, IP64, BYTES(0x8f, 0xe9, 0x78, 0xc3, 0xc1),
	  BAD },
	{ "ff /7", M64, IP64, BYTES(0xff, 0xf8), BAD },
	{ "call far [reg]", M64, IP64, BYTES(0xff, 0xd8), BAD },
	{ "call ptr16:32", M64, IP64, BYTES(0x9a, 1, 2, 3, 4, 5, 6), BAD },
	{ "jmp ptr16:32", M64, IP64, BYTES(0xea, 1, 2, 3, 4, 5, 6), BAD },
	{ "into", M64, IP64, BYTES(0xce), BAD },
	{ "empty", M64, IP64, .len = 0, BAD },

	/* ---- unknown mode decodes as 64-bit */
	{ "rex ret (unknown)", HWT_MODE_UNKNOWN, IP64, BYTES(0x40, 0xc3),
	  OK(2, HWT_IC_RETURN, 0) },
	{ "rex ret (mode 7)", 7, IP64, BYTES(0x40, 0xc3),
	  OK(2, HWT_IC_RETURN, 0) },

	/* ---- 32-bit */
	{ "inc eax", M32, IP32, BYTES(0x40), OK(1, HWT_IC_OTHER, 0) },
	{ "les", M32, IP32, BYTES(0xc4, 0x00), OK(2, HWT_IC_OTHER, 0) },
	{ "vex in 32-bit", M32, IP32, BYTES(0xc5, 0xf8, 0x77),
	  OK(3, HWT_IC_OTHER, 0) },
	{ "call rel32", M32, IP32, BYTES(0xe8, 0xfb, 0xff, 0xff, 0xff),
	  DIR(5, HWT_IC_CALL, IP32) },
	{ "66 call rel16", M32, IP32, BYTES(0x66, 0xe8, 0x00, 0x80),
	  DIR(4, HWT_IC_CALL, IP32 + 4 - 0x8000) },
	{ "jmp rel32", M32, IP32, BYTES(0xe9, 0x00, 0x00, 0x01, 0x00),
	  DIR(5, HWT_IC_JUMP, IP32 + 5 + 0x10000) },
	{ "66 jmp rel16", M32, IP32, BYTES(0x66, 0xe9, 0x10, 0x00),
	  DIR(4, HWT_IC_JUMP, IP32 + 4 + 0x10) },
	{ "jz rel32", M32, IP32, BYTES(0x0f, 0x84, 0xfa, 0xff, 0xff, 0xff),
	  DIR(6, HWT_IC_COND_JUMP, IP32) },
	{ "66 jz rel16", M32, IP32, BYTES(0x66, 0x0f, 0x84, 0xfb, 0xff),
	  DIR(5, HWT_IC_COND_JUMP, IP32) },
	{ "jecxz", M32, IP32, BYTES(0xe3, 0x02),
	  DIR(2, HWT_IC_COND_JUMP, IP32 + 4) },
	{ "jcxz", M32, IP32, BYTES(0x67, 0xe3, 0x02),
	  DIR(3, HWT_IC_COND_JUMP, IP32 + 5) },
	/* Like libipt, no truncation to 32 bits. */
	{ "call rel32 past 4G", M32, 0xfffffff0ull,
	  BYTES(0xe8, 0x20, 0x00, 0x00, 0x00),
	  DIR(5, HWT_IC_CALL, 0x100000015ull) },
	{ "jmp rel8 below 0", M32, 0x10ull, BYTES(0xeb, 0x80),
	  DIR(2, HWT_IC_JUMP, 0x12ull - 0x80) },
	{ "call [disp32]", M32, IP32, BYTES(0xff, 0x15, 0, 0x10, 0, 0),
	  OK(6, HWT_IC_CALL, 0) },
	{ "call ptr16:32", M32, IP32, BYTES(0x9a, 1, 2, 3, 4, 5, 6),
	  OK(7, HWT_IC_FAR_CALL, 0) },
	{ "66 call ptr16:16", M32, IP32, BYTES(0x66, 0x9a, 1, 2, 3, 4),
	  OK(6, HWT_IC_FAR_CALL, 0) },
	{ "jmp ptr16:32", M32, IP32, BYTES(0xea, 1, 2, 3, 4, 5, 6),
	  OK(7, HWT_IC_FAR_JUMP, 0) },
	{ "into", M32, IP32, BYTES(0xce),
	  OK(1, HWT_IC_FAR_CALL, HWT_INSN_SYSCALL) },
	{ "int 0x80", M32, IP32, BYTES(0xcd, 0x80),
	  OK(2, HWT_IC_FAR_CALL, HWT_INSN_SYSCALL) },
	{ "sysenter", M32, IP32, BYTES(0x0f, 0x34),
	  OK(2, HWT_IC_FAR_CALL, HWT_INSN_SYSCALL) },
	{ "sysexit", M32, IP32, BYTES(0x0f, 0x35),
	  OK(2, HWT_IC_FAR_RETURN, HWT_INSN_IRET) },
	{ "iretd", M32, IP32, BYTES(0xcf),
	  OK(1, HWT_IC_FAR_RETURN, HWT_INSN_IRET) },
	{ "ret", M32, IP32, BYTES(0xc3), OK(1, HWT_IC_RETURN, 0) },
	{ "ret imm16", M32, IP32, BYTES(0xc2, 0x04, 0x00),
	  OK(3, HWT_IC_RETURN, 0) },
	{ "mov cr3,eax", M32, IP32, BYTES(0x0f, 0x22, 0xd8),
	  OK(3, HWT_IC_OTHER, HWT_INSN_MOV_CR3) },
	{ "ptwrite", M32, IP32, BYTES(0xf3, 0x0f, 0xae, 0x20),
	  OK(4, HWT_IC_PTWRITE, 0) },
	{ "vmlaunch", M32, IP32, BYTES(0x0f, 0x01, 0xc2),
	  OK(3, HWT_IC_FAR_RETURN, HWT_INSN_VMENTRY) },

	/* ---- 16-bit */
	{ "call rel16", M16, IP16, BYTES(0xe8, 0x10, 0x00),
	  DIR(3, HWT_IC_CALL, IP16 + 0x13) },
	{ "call rel16 back", M16, IP16, BYTES(0xe8, 0xfd, 0xff),
	  DIR(3, HWT_IC_CALL, IP16) },
	{ "66 call rel32", M16, IP16,
	  BYTES(0x66, 0xe8, 0x00, 0x00, 0x01, 0x00),
	  DIR(6, HWT_IC_CALL, IP16 + 6 + 0x10000) },
	{ "jmp rel8", M16, IP16, BYTES(0xeb, 0xfe), DIR(2, HWT_IC_JUMP, IP16) },
	{ "jmp rel16", M16, IP16, BYTES(0xe9, 0x00, 0x01),
	  DIR(3, HWT_IC_JUMP, IP16 + 0x103) },
	/* Like libipt, no truncation to 16 bits. */
	{ "jmp rel16 past 64K", M16, 0xfff0ull, BYTES(0xe9, 0x20, 0x00),
	  DIR(3, HWT_IC_JUMP, 0x10013ull) },
	{ "jz rel16", M16, IP16, BYTES(0x0f, 0x84, 0x00, 0x02),
	  DIR(4, HWT_IC_COND_JUMP, IP16 + 0x204) },
	{ "jz rel8", M16, IP16, BYTES(0x74, 0xfe),
	  DIR(2, HWT_IC_COND_JUMP, IP16) },
	{ "jcxz", M16, IP16, BYTES(0xe3, 0x00),
	  DIR(2, HWT_IC_COND_JUMP, IP16 + 2) },
	{ "loop", M16, IP16, BYTES(0xe2, 0xfe),
	  DIR(2, HWT_IC_COND_JUMP, IP16) },
	{ "call ptr16:16", M16, IP16, BYTES(0x9a, 0x00, 0x7c, 0x00, 0x00),
	  OK(5, HWT_IC_FAR_CALL, 0) },
	{ "jmp ptr16:16", M16, IP16, BYTES(0xea, 0x00, 0x7c, 0x00, 0x00),
	  OK(5, HWT_IC_FAR_JUMP, 0) },
	{ "call [bx]", M16, IP16, BYTES(0xff, 0x17), OK(2, HWT_IC_CALL, 0) },
	{ "call [disp16]", M16, IP16, BYTES(0xff, 0x16, 0x00, 0x10),
	  OK(4, HWT_IC_CALL, 0) },
	{ "jmp far [bx]", M16, IP16, BYTES(0xff, 0x2f),
	  OK(2, HWT_IC_FAR_JUMP, 0) },
	{ "ret", M16, IP16, BYTES(0xc3), OK(1, HWT_IC_RETURN, 0) },
	{ "retf", M16, IP16, BYTES(0xcb), OK(1, HWT_IC_FAR_RETURN, 0) },
	{ "iret", M16, IP16, BYTES(0xcf),
	  OK(1, HWT_IC_FAR_RETURN, HWT_INSN_IRET) },
	{ "int 0x10", M16, IP16, BYTES(0xcd, 0x10),
	  OK(2, HWT_IC_FAR_CALL, HWT_INSN_SYSCALL) },
	{ "mov ax,imm16", M16, IP16, BYTES(0xb8, 0x34, 0x12),
	  OK(3, HWT_IC_OTHER, 0) },
	{ "mov eax,imm32", M16, IP16, BYTES(0x66, 0xb8, 1, 2, 3, 4),
	  OK(6, HWT_IC_OTHER, 0) },
	{ "popf", M16, IP16, BYTES(0x9d),
	  OK(1, HWT_IC_OTHER, HWT_INSN_STI_POPF) },
};

static void check_case(const struct tcase *tc, const uint8_t *code,
		       size_t avail)
{
	struct hwt_insn_info info;
	int rc;

	memset(&info, 0xa5, sizeof(info));
	rc = hwt_insn_decode(&info, code, avail, tc->ip, tc->mode);
	if (rc != tc->rc)
		fail_msg("%s: rc %d, expected %d", tc->name, rc, tc->rc);
	if (rc < 0)
		return;
	if (info.size != tc->size || info.iclass != tc->iclass ||
	    info.flags != tc->flags || info.target != tc->target)
		fail_msg("%s: size %u class %u flags %#x target %#llx, "
			 "expected %u %u %#x %#llx", tc->name, info.size,
			 info.iclass, info.flags,
			 (unsigned long long) info.target, tc->size,
			 tc->iclass, tc->flags,
			 (unsigned long long) tc->target);
}

static void test_cases(void **state)
{
	(void) state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_case(&cases[i], cases[i].bytes, cases[i].len);
}

/* Bytes after the instruction must not change anything. */
static void test_trailing_bytes(void **state)
{
	(void) state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct tcase *tc = &cases[i];
		uint8_t buf[32];

		if (tc->rc < 0)
			continue;
		memset(buf, 0xcc, sizeof(buf));
		memcpy(buf, tc->bytes, tc->len);
		check_case(tc, buf, sizeof(buf));
		memset(buf + tc->len, 0x66, sizeof(buf) - tc->len);
		check_case(tc, buf, sizeof(buf));
	}
}

/* Every proper prefix of an instruction is too short to decode. */
static void test_truncated(void **state)
{
	(void) state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct tcase *tc = &cases[i];
		struct hwt_insn_info info;

		if (tc->rc < 0)
			continue;
		for (size_t n = 0; n < tc->size; n++) {
			uint8_t buf[16];
			int rc;

			/* An exact-size copy, so a read past it would show in ASan. */
			memcpy(buf, tc->bytes, n);
			rc = hwt_insn_decode(&info, n ? buf : NULL, n, tc->ip,
					     tc->mode);
			if (rc != -HWT_ERR_BAD_INSN)
				fail_msg("%s: %zu of %u bytes: rc %d", tc->name,
					 n, tc->size, rc);
		}
	}
}

static void test_invalid_args(void **state)
{
	struct hwt_insn_info info;
	const uint8_t ret = 0xc3;

	(void) state;

	assert_int_equal(hwt_insn_decode(NULL, &ret, 1, 0, M64),
			 -HWT_ERR_INVALID);
	assert_int_equal(hwt_insn_decode(&info, NULL, 1, 0, M64),
			 -HWT_ERR_INVALID);
	assert_int_equal(hwt_insn_decode(&info, NULL, 0, 0, M64),
			 -HWT_ERR_BAD_INSN);
}

/* The preinitialised decoders are what Zydis' own set-up would give. */
static void test_zydis_tables(void **state)
{
	static const struct {
		unsigned mode;
		ZydisMachineMode mm;
		ZydisStackWidth sw;
	} modes[] = {
		{ HWT_MODE_UNKNOWN, ZYDIS_MACHINE_MODE_LONG_64,
		  ZYDIS_STACK_WIDTH_64 },
		{ HWT_MODE_16, ZYDIS_MACHINE_MODE_LEGACY_16,
		  ZYDIS_STACK_WIDTH_16 },
		{ HWT_MODE_32, ZYDIS_MACHINE_MODE_LEGACY_32,
		  ZYDIS_STACK_WIDTH_32 },
		{ HWT_MODE_64, ZYDIS_MACHINE_MODE_LONG_64,
		  ZYDIS_STACK_WIDTH_64 },
	};

	(void) state;

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		ZydisDecoder d;

		memset(&d, 0, sizeof(d));
		assert_true(ZYAN_SUCCESS(ZydisDecoderInit(&d, modes[i].mm,
							  modes[i].sw)));
		assert_true(ZYAN_SUCCESS(ZydisDecoderEnableMode(
			&d, ZYDIS_DECODER_MODE_MINIMAL, ZYAN_TRUE)));
		assert_memory_equal(&d, hwt_insn_zydis_decoder(modes[i].mode),
				    sizeof(d));
	}
}

static int same_result(int rc, const struct hwt_insn_info *a, int zrc,
		       const struct hwt_insn_info *b)
{
	if (rc != zrc)
		return 0;
	return rc < 0 || (a->size == b->size && a->iclass == b->iclass &&
			  a->flags == b->flags && a->target == b->target);
}

/*
 * The table fast path against Zydis, exhaustively: every one- and two-byte
 * (0f) opcode with every ModRM byte, a few SIB bytes, and the prefix and
 * REX combinations the fast path takes, in 32- and 64-bit mode; also every
 * truncation of each.
 */
static void test_fast_path(void **state)
{
	static const uint8_t pfx[][3] = {
		{ 0 }, { 1, 0x66 }, { 1, 0x2e }, { 2, 0x66, 0x64 },
		{ 2, 0x3e, 0x66 },
	};
	static const uint8_t rexes[] = { 0, 0x41, 0x44, 0x48 };
	static const uint8_t sibs[] = { 0x24, 0x25 };
	static const uint8_t tail[] = { 0x81, 0x02, 0xf3, 0x84, 0x05, 0x86,
					0x07, 0x88, 0x09, 0x8a, 0x0b, 0x8c,
					0x0d, 0x8e, 0x0f };
	unsigned long n = 0, bad = 0;

	(void) state;

	for (unsigned mode = M32; mode <= M64; mode++)
	for (size_t ip = 0; ip < sizeof(pfx) / sizeof(pfx[0]); ip++)
	for (size_t ir = 0; ir < sizeof(rexes); ir++)
	for (unsigned op = 0; op < 512; op++)
	for (unsigned modrm = 0; modrm < 256; modrm++)
	for (size_t is = 0; is < sizeof(sibs); is++) {
		struct hwt_insn_info a, b;
		uint8_t buf[32];
		size_t len = 0, avail = sizeof(buf);
		int rc, zrc;

		if (rexes[ir] && mode != M64)
			break;
		/* The SIB byte only matters with rm == 4 in memory forms. */
		if (is && ((modrm & 7) != 4 || (modrm >> 6) == 3))
			break;
		memcpy(buf, &pfx[ip][1], pfx[ip][0]);
		len = pfx[ip][0];
		if (rexes[ir])
			buf[len++] = rexes[ir];
		if (op >= 256)
			buf[len++] = 0x0f;
		buf[len++] = (uint8_t) op;
		buf[len++] = (uint8_t) modrm;
		buf[len++] = sibs[is];
		memcpy(buf + len, tail, sizeof(tail));

		/* All of it, then one byte short of the instruction. */
		for (int k = 0; k < 2; k++) {
			n++;
			rc = hwt_insn_decode(&a, buf, avail, IP64, mode);
			zrc = hwt_insn_decode_zydis(&b, buf, avail, IP64,
						    mode);
			if (!same_result(rc, &a, zrc, &b) && bad++ < 20) {
				printf("  fast path differs (mode %u, %zu of",
				       mode, avail);
				for (size_t i = 0; i < 15; i++)
					printf(" %02x", buf[i]);
				printf("): rc %d size %u class %u flags %#x, "
				       "zydis rc %d size %u class %u flags "
				       "%#x\n", rc, a.size, a.iclass, a.flags,
				       zrc, b.size, b.iclass, b.flags);
			}
			if (rc < 0 || zrc < 0)
				break;
			avail = a.size - 1u;
		}
	}
	printf("fast path vs zydis: %lu decodes, %lu differ\n", n, bad);
	assert_int_equal(bad, 0);
}

#ifdef HWT_HAVE_LIBIPT
/*
 * libipt as the oracle: a tiny trace (PSB, PSBEND, MODE.Exec, TIP.PGE to
 * @ip, one taken TNT) and a memory callback that serves the bytes under
 * test at @ip. The first pt_insn_next() decodes them; the second one reads
 * memory wherever libipt went next: ip + size, or the direct target (the
 * TNT bit says taken). That is all libipt's public API tells, and enough.
 */
struct oracle {
	struct pt_insn_decoder *dec;
	struct pt_image *image;
	uint8_t trace[128];
	uint64_t ip;
	const uint8_t *code;
	size_t avail;
	int probing;		/* second pt_insn_next: record the address */
	int probed;
	uint64_t probe_ip;
};

static int oracle_read(uint8_t *buffer, size_t size,
		       const struct pt_asid *asid, uint64_t ip, void *context)
{
	struct oracle *o = context;

	(void) asid;
	if (o->probing) {
		if (!o->probed) {
			o->probed = 1;
			o->probe_ip = ip;
		}
		return -pte_nomap;
	}
	if (ip < o->ip || ip - o->ip >= o->avail)
		return -pte_nomap;
	if (size > o->avail - (ip - o->ip))
		size = o->avail - (ip - o->ip);
	memcpy(buffer, o->code + (ip - o->ip), size);
	return (int) size;
}

static void oracle_init(struct oracle *o, unsigned mode, uint64_t ip)
{
	struct pt_packet pkts[5];
	struct pt_encoder *enc;
	struct pt_config cfg;
	int n = 0;

	memset(o, 0, sizeof(*o));
	o->ip = ip;

	memset(pkts, 0, sizeof(pkts));
	pkts[0].type = ppt_psb;
	pkts[1].type = ppt_psbend;
	pkts[2].type = ppt_mode;
	pkts[2].payload.mode.leaf = pt_mol_exec;
	pkts[2].payload.mode.bits.exec =
		pt_set_exec_mode(mode == M16 ? ptem_16bit :
				 mode == M32 ? ptem_32bit : ptem_64bit);
	pkts[3].type = ppt_tip_pge;
	pkts[3].payload.ip.ipc = pt_ipc_full;
	pkts[3].payload.ip.ip = ip;
	pkts[4].type = ppt_tnt_8;
	pkts[4].payload.tnt.bit_size = 1;
	pkts[4].payload.tnt.payload = 1;

	pt_config_init(&cfg);
	cfg.begin = o->trace;
	cfg.end = o->trace + sizeof(o->trace);
	enc = pt_alloc_encoder(&cfg);
	assert_non_null(enc);
	for (size_t i = 0; i < sizeof(pkts) / sizeof(pkts[0]); i++) {
		int rc = pt_enc_next(enc, &pkts[i]);

		assert_true(rc > 0);
		n += rc;
	}
	pt_free_encoder(enc);

	cfg.end = o->trace + n;
	o->dec = pt_insn_alloc_decoder(&cfg);
	assert_non_null(o->dec);
	o->image = pt_insn_get_image(o->dec);
	assert_non_null(o->image);
	assert_int_equal(pt_image_set_callback(o->image, oracle_read, o), 0);
}

static void oracle_fini(struct oracle *o)
{
	pt_insn_free_decoder(o->dec);
}

static int oracle_drain(struct oracle *o, int status)
{
	while (status >= 0 && (status & pts_event_pending)) {
		struct pt_event ev;

		status = pt_insn_event(o->dec, &ev, sizeof(ev));
	}
	return status;
}

/*
 * Decode @code with libipt. Returns 0 and fills @insn, or a negative
 * libipt error if it cannot decode it; o->probed/probe_ip say where libipt
 * went next, if it got that far.
 */
static int oracle_decode(struct oracle *o, const uint8_t *code, size_t avail,
			 struct pt_insn *insn)
{
	int status;

	o->code = code;
	o->avail = avail;
	o->probing = 0;
	o->probed = 0;

	status = oracle_drain(o, pt_insn_sync_set(o->dec, 0));
	assert_true(status >= 0);

	memset(insn, 0, sizeof(*insn));
	status = pt_insn_next(o->dec, insn, sizeof(*insn));
	if (insn->iclass == ptic_error)
		return status < 0 ? status : -pte_internal;
	if (status < 0)
		return 0;

	o->probing = 1;
	status = oracle_drain(o, status);
	if (status >= 0) {
		struct pt_insn next;

		(void) pt_insn_next(o->dec, &next, sizeof(next));
	}
	return 0;
}

struct xcheck {
	unsigned long total, agree, hwt_rejects, ipt_rejects, mismatch;
	unsigned long classes[HWT_IC_INDIRECT + 1];
	unsigned long direct_checked;
	unsigned long verbose;	/* how many rejects to show */
};

static const enum pt_insn_class ptic_of[] = {
	[HWT_IC_UNKNOWN] = ptic_error,
	[HWT_IC_OTHER] = ptic_other,
	[HWT_IC_CALL] = ptic_call,
	[HWT_IC_RETURN] = ptic_return,
	[HWT_IC_JUMP] = ptic_jump,
	[HWT_IC_COND_JUMP] = ptic_cond_jump,
	[HWT_IC_FAR_CALL] = ptic_far_call,
	[HWT_IC_FAR_RETURN] = ptic_far_return,
	[HWT_IC_FAR_JUMP] = ptic_far_jump,
	[HWT_IC_PTWRITE] = ptic_ptwrite,
	[HWT_IC_INDIRECT] = ptic_error,
};

static void report(const char *what, unsigned mode, const uint8_t *code,
		   size_t avail, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void report(const char *what, unsigned mode, const uint8_t *code,
		   size_t avail, const char *fmt, ...)
{
	va_list ap;

	printf("  %s (mode %u):", what, mode);
	for (size_t i = 0; i < avail && i < 15; i++)
		printf(" %02x", code[i]);
	printf(": ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/*
 * Known, accepted differences: libipt 2.0 (the library Debian ships) does
 * not know uiret, which 2.1 classifies like we do.
 */
static int known_difference(const struct hwt_insn_info *info,
			    const struct pt_insn *insn)
{
	return (info->flags & HWT_INSN_UIRET) && insn->iclass == ptic_other;
}

static void xcheck_one(struct xcheck *x, struct oracle *o, unsigned mode,
		       const uint8_t *code, size_t avail)
{
	struct hwt_insn_info info;
	struct pt_insn insn;
	int rc, irc;

	x->total++;
	rc = hwt_insn_decode(&info, code, avail, o->ip, mode);
	irc = oracle_decode(o, code, avail, &insn);

	{
		struct hwt_insn_info zinfo;
		int zrc = hwt_insn_decode_zydis(&zinfo, code, avail, o->ip,
						mode);

		if (!same_result(rc, &info, zrc, &zinfo)) {
			if (x->mismatch++ < 20)
				report("fast path", mode, code, avail,
				       "rc %d/%d size %u/%u", rc, zrc,
				       info.size, zinfo.size);
			return;
		}
	}

	if (rc < 0 && irc < 0) {
		x->agree++;
		return;
	}
	if (rc < 0) {
		/* Zydis rejects what no CPU executes; libipt only sizes. */
		if (x->hwt_rejects++ < x->verbose)
			report("only libipt decodes", mode, code, avail,
			       "libipt size %u class %d", insn.size,
			       insn.iclass);
		return;
	}
	if (irc < 0) {
		if (x->ipt_rejects++ < 10)
			report("libipt rejects", mode, code, avail,
			       "hwt size %u class %u", info.size, info.iclass);
		return;
	}
	if (info.size != insn.size ||
	    (ptic_of[info.iclass] != insn.iclass &&
	     !known_difference(&info, &insn))) {
		if (x->mismatch++ < 20)
			report("mismatch", mode, code, avail,
			       "hwt size %u class %u, libipt size %u class %d",
			       info.size, info.iclass, insn.size,
			       insn.iclass);
		return;
	}
	if (o->probed) {
		uint64_t next = (info.flags & HWT_INSN_DIRECT) ?
			info.target : o->ip + info.size;

		if (insn.iclass == ptic_other || insn.iclass == ptic_ptwrite ||
		    (info.flags & HWT_INSN_DIRECT)) {
			if (next != o->probe_ip) {
				if (x->mismatch++ < 20)
					report("next ip", mode, code, avail,
					       "hwt %#llx, libipt %#llx",
					       (unsigned long long) next,
					       (unsigned long long) o->probe_ip);
				return;
			}
			if (info.flags & HWT_INSN_DIRECT)
				x->direct_checked++;
		}
	} else if ((info.flags & HWT_INSN_DIRECT) &&
		   info.iclass != HWT_IC_COND_JUMP) {
		/* libipt always follows a direct jump or call. */
		if (x->mismatch++ < 20)
			report("no probe", mode, code, avail, "class %u",
			       info.iclass);
		return;
	}
	x->agree++;
	x->classes[info.iclass]++;
}

static void xcheck_print(const char *what, unsigned mode,
			 const struct xcheck *x)
{
	printf("%s, mode %u: %lu insns, %lu agree, %lu only libipt decodes, "
	       "%lu only hwt decodes, %lu differ; %lu direct targets "
	       "checked; classes:", what, mode, x->total, x->agree,
	       x->hwt_rejects, x->ipt_rejects, x->mismatch, x->direct_checked);
	for (int c = 0; c <= HWT_IC_PTWRITE; c++)
		printf(" %lu", x->classes[c]);
	printf("\n");
}

/* HWT_TEST_VERBOSE=n shows n instructions only libipt decodes per run. */
static unsigned long verbose(void)
{
	const char *v = getenv("HWT_TEST_VERBOSE");

	return v ? strtoul(v, NULL, 0) : 3;
}

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Bytes that steer random input to prefixes and branches. */
static const uint8_t interesting[] = {
	0x66, 0x67, 0xf2, 0xf3, 0xf0, 0x2e, 0x3e, 0x26, 0x64, 0x48, 0x41,
	0x0f, 0x0f, 0x0f, 0x70, 0x7f, 0x9a, 0xc2, 0xc3, 0xca, 0xcb, 0xcc,
	0xcd, 0xce, 0xcf, 0xe0, 0xe1, 0xe2, 0xe3, 0xe8, 0xe9, 0xea, 0xeb,
	0xf1, 0xff, 0xff, 0xc4, 0xc5, 0x62, 0x8f, 0x01, 0x22, 0xc7, 0xae,
	0x05, 0x07, 0x34, 0x35, 0x84, 0x8f, 0xec, 0xc1, 0x38, 0x3a,
};

static void test_libipt_random(void **state)
{
	static const unsigned modes[] = { M16, M32, M64 };
	static const uint64_t ips[] = { IP16, IP32, IP64 };
	unsigned long bad = 0;

	(void) state;

	for (size_t m = 0; m < 3; m++) {
		struct xcheck x;
		struct oracle o;
		uint64_t seed = 0x5eed0000 + m;

		memset(&x, 0, sizeof(x));
		x.verbose = verbose();
		oracle_init(&o, modes[m], ips[m]);
		for (int i = 0; i < 100000; i++) {
			uint8_t buf[15];

			for (size_t k = 0; k < sizeof(buf); k++) {
				uint64_t r = rnd(&seed);

				buf[k] = (r & 3) ? (uint8_t) (r >> 8) :
					interesting[(r >> 8) %
						    sizeof(interesting)];
			}
			xcheck_one(&x, &o, modes[m], buf, sizeof(buf));
		}
		oracle_fini(&o);
		xcheck_print("random bytes", modes[m], &x);
		bad += x.mismatch + x.ipt_rejects;
	}
	assert_int_equal(bad, 0);
}

/* The hand-written expectations are libipt's, too. */
static void test_libipt_cases(void **state)
{
	struct xcheck x;

	(void) state;

	memset(&x, 0, sizeof(x));
	x.verbose = 100;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct tcase *tc = &cases[i];
		struct oracle o;

		if (tc->rc < 0 || tc->mode < M16 || tc->mode > M64)
			continue;
		oracle_init(&o, tc->mode, tc->ip);
		xcheck_one(&x, &o, tc->mode, tc->bytes, tc->len);
		oracle_fini(&o);
	}
	xcheck_print("hand-written cases", 0, &x);
	assert_int_equal(x.mismatch + x.ipt_rejects + x.hwt_rejects, 0);
}

struct code_walk {
	struct oracle *o;
	struct xcheck *x;
	unsigned mode;
	unsigned long budget;
};

/* Linear sweep over an executable segment, re-syncing byte-wise on errors. */
static void sweep(struct code_walk *w, const uint8_t *p, size_t n)
{
	size_t off = 0;

	while (off < n && w->budget) {
		struct hwt_insn_info info;
		size_t avail = n - off < 15 ? n - off : 15;

		w->budget--;
		xcheck_one(w->x, w->o, w->mode, p + off, avail);
		if (hwt_insn_decode(&info, p + off, avail, 0, w->mode) < 0)
			off++;
		else
			off += info.size;
	}
}

static int phdr_cb(struct dl_phdr_info *dl, size_t size, void *data)
{
	struct code_walk *w = data;

	(void) size;
	for (int i = 0; i < dl->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &dl->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		/* The vDSO and our own code are mapped too; all fine. */
		sweep(w, (const uint8_t *) (dl->dlpi_addr + ph->p_vaddr),
		      ph->p_memsz);
	}
	return 0;
}

static void test_libipt_real_code(void **state)
{
	static const unsigned modes[] = { M64, M32, M16 };
	static const uint64_t ips[] = { IP64, IP32, IP16 };
	unsigned long bad = 0;

	(void) state;

	for (size_t m = 0; m < 3; m++) {
		struct xcheck x;
		struct oracle o;
		struct code_walk w;

		memset(&x, 0, sizeof(x));
		x.verbose = verbose();
		oracle_init(&o, modes[m], ips[m]);
		w.o = &o;
		w.x = &x;
		w.mode = modes[m];
		w.budget = m == 0 ? 600000 : 100000;
		dl_iterate_phdr(phdr_cb, &w);
		oracle_fini(&o);
		xcheck_print("loaded code", modes[m], &x);
		bad += x.mismatch + x.ipt_rejects;
	}
	assert_int_equal(bad, 0);
}
#endif /* HWT_HAVE_LIBIPT */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_trailing_bytes),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_invalid_args),
		cmocka_unit_test(test_zydis_tables),
		cmocka_unit_test(test_fast_path),
#ifdef HWT_HAVE_LIBIPT
		cmocka_unit_test(test_libipt_cases),
		cmocka_unit_test(test_libipt_random),
		cmocka_unit_test(test_libipt_real_code),
#endif
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
