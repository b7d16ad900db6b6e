/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Instruction classification: length and control-flow class of one x86
 * instruction, as the flow layer needs them.
 *
 * A table-driven fast path sizes the common general-purpose instructions of
 * 32/64-bit code (about 97% of a typical .text); Zydis (MINIMAL mode, no
 * operands) does everything else and rejects what no CPU executes. The
 * class is then derived from the opcode map, opcode and ModRM byte, not
 * from the mnemonic, because the flow layer must agree with libipt's
 * instruction decoder bit for bit: libipt classifies by opcode bytes, so
 * e.g. vmclear and vmxon (0f c7 /6 with a prefix) bind a VMCS like vmptrld
 * does, and vmlaunch/vmresume are far returns.
 *
 * Direct targets are ip + size + displacement in 64-bit arithmetic without
 * truncation to the operand size: that is what libipt computes, and trace
 * IPs are compared against it.
 */
#include <stddef.h>
#include <stdint.h>

#include <Zydis/Zydis.h>

#include <hwt/error.h>
#include <hwt/flow.h>

/*
 * Decoders as ZydisDecoderInit() + MINIMAL would set them up (the test
 * checks that they still are), so decoding costs no set-up and the library
 * keeps no mutable state. Operand decoding is never needed: the branch
 * displacement is in the raw immediate.
 */
#define HWT_ZYDIS_DECODER(mm, sw) {					\
	.machine_mode = (mm),						\
	.stack_width = (sw),						\
	.decoder_mode = {						\
		[ZYDIS_DECODER_MODE_MINIMAL] = ZYAN_TRUE,		\
		[ZYDIS_DECODER_MODE_MPX] = ZYAN_TRUE,			\
		[ZYDIS_DECODER_MODE_CET] = ZYAN_TRUE,			\
		[ZYDIS_DECODER_MODE_LZCNT] = ZYAN_TRUE,			\
		[ZYDIS_DECODER_MODE_TZCNT] = ZYAN_TRUE,			\
		[ZYDIS_DECODER_MODE_CLDEMOTE] = ZYAN_TRUE,		\
	},								\
}

/* Indexed by enum hwt_exec_mode; an unknown mode decodes as 64-bit. */
static const ZydisDecoder insn_decoders[4] = {
	[HWT_MODE_UNKNOWN] = HWT_ZYDIS_DECODER(ZYDIS_MACHINE_MODE_LONG_64,
					       ZYDIS_STACK_WIDTH_64),
	[HWT_MODE_16] = HWT_ZYDIS_DECODER(ZYDIS_MACHINE_MODE_LEGACY_16,
					  ZYDIS_STACK_WIDTH_16),
	[HWT_MODE_32] = HWT_ZYDIS_DECODER(ZYDIS_MACHINE_MODE_LEGACY_32,
					  ZYDIS_STACK_WIDTH_32),
	[HWT_MODE_64] = HWT_ZYDIS_DECODER(ZYDIS_MACHINE_MODE_LONG_64,
					  ZYDIS_STACK_WIDTH_64),
};

const void *hwt_insn_zydis_decoder(unsigned mode);

/* For the test that compares the tables with ZydisDecoderInit(). */
const void *hwt_insn_zydis_decoder(unsigned mode)
{
	return &insn_decoders[mode < 4 ? mode : HWT_MODE_UNKNOWN];
}

/*
 * What the classification looks at, from either decoder: libipt's view of
 * an instruction (opcode map, opcode, ModRM, a few prefixes).
 */
struct insn_fields {
	int64_t rel;		/* branch displacement, sign-extended */
	uint8_t map;		/* INSN_MAP_* */
	uint8_t opcode;
	uint8_t modrm;		/* 0 if none */
	uint8_t rex_r;
	uint8_t f3;		/* an f3 prefix is present */
	uint8_t osz;		/* a 66 prefix is present */
};

enum {
	INSN_MAP_0,		/* one-byte opcodes */
	INSN_MAP_0F,		/* 0f xx */
	INSN_MAP_OTHER		/* 0f 38, 0f 3a, 3DNow!: no control flow */
};

static inline uint8_t modrm_reg(const struct insn_fields *f)
{
	return (f->modrm >> 3) & 7;
}

static void set_class(struct hwt_insn_info *info, enum hwt_insn_class iclass,
		      uint8_t flags)
{
	info->iclass = (uint8_t) iclass;
	info->flags = flags;
}

static void set_direct(struct hwt_insn_info *info, enum hwt_insn_class iclass,
		       const struct insn_fields *f, uint64_t ip)
{
	info->iclass = (uint8_t) iclass;
	info->flags = HWT_INSN_DIRECT;
	info->target = ip + info->size + (uint64_t) f->rel;
}

static void classify_map0(struct hwt_insn_info *info,
			  const struct insn_fields *f, uint64_t ip)
{
	uint8_t op = f->opcode;

	if (op >= 0x70 && op <= 0x7f) {
		set_direct(info, HWT_IC_COND_JUMP, f, ip);
		return;
	}

	switch (op) {
	case 0xe0:	/* loopne */
	case 0xe1:	/* loope */
	case 0xe2:	/* loop */
	case 0xe3:	/* jcxz/jecxz/jrcxz */
		set_direct(info, HWT_IC_COND_JUMP, f, ip);
		return;
	case 0xe8:
		set_direct(info, HWT_IC_CALL, f, ip);
		return;
	case 0xe9:
	case 0xeb:
		set_direct(info, HWT_IC_JUMP, f, ip);
		return;
	case 0xff:
		switch (modrm_reg(f)) {
		case 2:
			set_class(info, HWT_IC_CALL, 0);
			return;
		case 3:
			set_class(info, HWT_IC_FAR_CALL, 0);
			return;
		case 4:
			set_class(info, HWT_IC_JUMP, 0);
			return;
		case 5:
			set_class(info, HWT_IC_FAR_JUMP, 0);
			return;
		}
		return;
	case 0xc2:
	case 0xc3:
		set_class(info, HWT_IC_RETURN, 0);
		return;
	case 0xca:
	case 0xcb:
		set_class(info, HWT_IC_FAR_RETURN, 0);
		return;
	case 0xcf:	/* iret */
		set_class(info, HWT_IC_FAR_RETURN, HWT_INSN_IRET);
		return;
	case 0x9a:	/* call far ptr16:16/32 (not in 64-bit mode) */
		set_class(info, HWT_IC_FAR_CALL, 0);
		return;
	case 0xea:	/* jmp far ptr16:16/32 (not in 64-bit mode) */
		set_class(info, HWT_IC_FAR_JUMP, 0);
		return;
	case 0xcc:	/* int3 */
	case 0xcd:	/* int n */
	case 0xce:	/* into (not in 64-bit mode) */
	case 0xf1:	/* int1 */
		set_class(info, HWT_IC_FAR_CALL, HWT_INSN_SYSCALL);
		return;
	case 0x9d:	/* popf */
	case 0xfa:	/* cli */
	case 0xfb:	/* sti */
		info->flags = HWT_INSN_STI_POPF;
		return;
	}
}

static void classify_map0f(struct hwt_insn_info *info,
			   const struct insn_fields *f, uint64_t ip)
{
	uint8_t op = f->opcode;

	if (op >= 0x80 && op <= 0x8f) {
		set_direct(info, HWT_IC_COND_JUMP, f, ip);
		return;
	}

	switch (op) {
	case 0x05:	/* syscall */
	case 0x34:	/* sysenter */
		set_class(info, HWT_IC_FAR_CALL, HWT_INSN_SYSCALL);
		return;
	case 0x07:	/* sysret */
	case 0x35:	/* sysexit */
		set_class(info, HWT_IC_FAR_RETURN, HWT_INSN_IRET);
		return;
	case 0x01:
		/* The group is told apart by the whole ModRM byte. */
		switch (f->modrm) {
		case 0xc1:	/* vmcall */
			set_class(info, HWT_IC_FAR_CALL, 0);
			return;
		case 0xc2:	/* vmlaunch */
		case 0xc3:	/* vmresume */
			set_class(info, HWT_IC_FAR_RETURN, HWT_INSN_VMENTRY);
			return;
		case 0xec:	/* uiret */
			set_class(info, HWT_IC_FAR_RETURN, HWT_INSN_UIRET);
			return;
		}
		return;
	case 0x22:
		/*
		 * mov to cr: ModRM.mod is ignored, REX.R selects cr8-15;
		 * libipt does not look at lock (AMD's alternative cr8), nor
		 * does Zydis accept it.
		 */
		if (modrm_reg(f) == 3 && !f->rex_r)
			info->flags = HWT_INSN_MOV_CR3;
		return;
	case 0xc7:
		/* vmptrld, and as in libipt also vmclear (66) and vmxon (f3) */
		if ((f->modrm >> 6) != 3 && modrm_reg(f) == 6)
			info->flags = HWT_INSN_VMPTRLD;
		return;
	case 0xae:
		/* ptwrite is f3 0f ae /4; with 66 it is #UD (and not for libipt) */
		if (modrm_reg(f) == 4 && f->f3 && !f->osz)
			set_class(info, HWT_IC_PTWRITE, 0);
		return;
	}
}

static void classify(struct hwt_insn_info *info, const struct insn_fields *f,
		     uint64_t ip)
{
	info->target = 0;
	info->iclass = HWT_IC_OTHER;
	info->flags = 0;
	if (f->map == INSN_MAP_0)
		classify_map0(info, f, ip);
	else if (f->map == INSN_MAP_0F)
		classify_map0f(info, f, ip);
}

/* Whether a legacy prefix byte @value is among the instruction's prefixes. */
static int has_prefix(const ZydisDecodedInstruction *zi, uint8_t value)
{
	for (unsigned i = 0; i < zi->raw.prefix_count; i++)
		if (zi->raw.prefixes[i].value == value)
			return 1;
	return 0;
}

int hwt_insn_decode_zydis(struct hwt_insn_info *info, const uint8_t *code,
			  size_t avail, uint64_t ip, unsigned mode);

/* The general path: anything Zydis decodes. Also used by the test. */
int hwt_insn_decode_zydis(struct hwt_insn_info *info, const uint8_t *code,
			  size_t avail, uint64_t ip, unsigned mode)
{
	ZydisDecodedInstruction zi;
	struct insn_fields f;

	if (!avail)
		return -HWT_ERR_BAD_INSN;
	if (mode >= 4)
		mode = HWT_MODE_UNKNOWN;
	if (avail > ZYDIS_MAX_INSTRUCTION_LENGTH)
		avail = ZYDIS_MAX_INSTRUCTION_LENGTH;

	if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&insn_decoders[mode],
							NULL, code, avail,
							&zi)))
		return -HWT_ERR_BAD_INSN;

	info->size = zi.length;
	switch (zi.encoding) {
	case ZYDIS_INSTRUCTION_ENCODING_LEGACY:
	case ZYDIS_INSTRUCTION_ENCODING_3DNOW:
		break;
	case ZYDIS_INSTRUCTION_ENCODING_XOP:
		/*
		 * AMD only: on Intel, 8f /1-7 is #UD (libipt sizes it as pop).
		 * Where Intel PT runs, this is not an instruction.
		 */
		return -HWT_ERR_BAD_INSN;
	default:
		/* VEX/EVEX hold no control flow that PT traces. */
		info->target = 0;
		info->iclass = HWT_IC_OTHER;
		info->flags = 0;
		return 0;
	}

	f.map = zi.encoding != ZYDIS_INSTRUCTION_ENCODING_LEGACY ?
		INSN_MAP_OTHER : zi.opcode_map == ZYDIS_OPCODE_MAP_DEFAULT ?
		INSN_MAP_0 : zi.opcode_map == ZYDIS_OPCODE_MAP_0F ?
		INSN_MAP_0F : INSN_MAP_OTHER;
	f.opcode = zi.opcode;
	f.modrm = (uint8_t) (zi.raw.modrm.mod << 6 | zi.raw.modrm.reg << 3 |
			     zi.raw.modrm.rm);
	f.rex_r = zi.raw.rex.R;
	f.f3 = (uint8_t) has_prefix(&zi, 0xf3);
	f.osz = (uint8_t) has_prefix(&zi, 0x66);
	/* rel8/16/32: Zydis sign-extends the raw immediate for us. */
	f.rel = zi.raw.imm[0].is_relative ? zi.raw.imm[0].value.s : 0;

	/*
	 * ud0 (0f ff) and ud1 (0f b9): libipt (like older SDMs) sizes them
	 * without a ModRM byte. They always fault, so only the reported size
	 * is affected: keep it the same as libipt's.
	 */
	if (f.map == INSN_MAP_0F && (f.opcode == 0xff || f.opcode == 0xb9))
		info->size = zi.raw.modrm.offset;

	classify(info, &f, ip);
	return 0;
}

/*
 * The fast path: the common general-purpose instructions of 32- and 64-bit
 * code, sized by table, so that the usual instruction costs a few
 * nanoseconds instead of a full Zydis decode. It only ever accepts an
 * encoding when it knows Zydis would accept it with the same length (the
 * unit test checks that exhaustively over opcodes, ModRM, SIB and prefix
 * combinations); anything else (16-bit mode, f2/f3/f0/67 prefixes, x87,
 * SSE, VEX, odd ModRM.reg values, ...) goes to Zydis.
 */
enum {
	FX,		/* not here: ask Zydis */
	NO,		/* opcode only */
	MR,		/* ModRM */
	IB,		/* imm8 */
	IW,		/* imm16 */
	IZ,		/* imm16/32 by operand size */
	IV,		/* imm16/32/64 by operand size (mov r, imm) */
	MB,		/* ModRM, imm8 */
	MZ,		/* ModRM, imm16/32 */
	J8,		/* rel8 */
	JZ,		/* rel32, or rel16 with 66 outside 64-bit mode */
	GR		/* depends on the mode or on ModRM: see fast_group() */
};

static const uint8_t fast_map0[256] = {
	/* 00 */ MR, MR, MR, MR, IB, IZ, FX, FX, MR, MR, MR, MR, IB, IZ, FX, FX,
	/* 10 */ MR, MR, MR, MR, IB, IZ, FX, FX, MR, MR, MR, MR, IB, IZ, FX, FX,
	/* 20 */ MR, MR, MR, MR, IB, IZ, FX, FX, MR, MR, MR, MR, IB, IZ, FX, FX,
	/* 30 */ MR, MR, MR, MR, IB, IZ, FX, FX, MR, MR, MR, MR, IB, IZ, FX, FX,
	/* 40 */ GR, GR, GR, GR, GR, GR, GR, GR, GR, GR, GR, GR, GR, GR, GR, GR,
	/* 50 */ NO, NO, NO, NO, NO, NO, NO, NO, NO, NO, NO, NO, NO, NO, NO, NO,
	/* 60 */ FX, FX, FX, GR, FX, FX, FX, FX, IZ, MZ, IB, MB, FX, FX, FX, FX,
	/* 70 */ J8, J8, J8, J8, J8, J8, J8, J8, J8, J8, J8, J8, J8, J8, J8, J8,
	/* 80 */ MB, MZ, FX, MB, MR, MR, MR, MR, MR, MR, MR, MR, FX, GR, FX, GR,
	/* 90 */ NO, NO, NO, NO, NO, NO, NO, NO, NO, NO, FX, FX, NO, NO, FX, FX,
	/* a0 */ FX, FX, FX, FX, NO, NO, NO, NO, IB, IZ, NO, NO, NO, NO, NO, NO,
	/* b0 */ IB, IB, IB, IB, IB, IB, IB, IB, IV, IV, IV, IV, IV, IV, IV, IV,
	/* c0 */ GR, GR, IW, NO, FX, FX, GR, GR, FX, NO, FX, FX, NO, IB, FX, FX,
	/* d0 */ GR, GR, GR, GR, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX,
	/* e0 */ J8, J8, J8, J8, FX, FX, FX, FX, JZ, JZ, FX, J8, FX, FX, FX, FX,
	/* f0 */ FX, FX, FX, FX, FX, NO, GR, GR, NO, NO, NO, NO, NO, NO, GR, GR,
};

static const uint8_t fast_map0f[256] = {
	/* 00 */ FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, NO, FX, FX, FX, FX,
	/* 10 */ FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, GR,
	/* 20 */ FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX,
	/* 30 */ FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX,
	/* 40 */ MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR, MR,
	/* 50 */ FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX,
	/* 60 */ FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX,
	/* 70 */ FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX,
	/* 80 */ JZ, JZ, JZ, JZ, JZ, JZ, JZ, JZ, JZ, JZ, JZ, JZ, JZ, JZ, JZ, JZ,
	/* 90 */ GR, GR, GR, GR, GR, GR, GR, GR, GR, GR, GR, GR, GR, GR, GR, GR,
	/* a0 */ FX, FX, NO, MR, MB, MR, FX, FX, FX, FX, FX, MR, MB, MR, FX, MR,
	/* b0 */ MR, MR, FX, MR, FX, FX, MR, MR, FX, FX, FX, MR, FX, FX, MR, MR,
	/* c0 */ MR, MR, FX, FX, FX, FX, FX, FX, NO, NO, NO, NO, NO, NO, NO, NO,
	/* d0 */ FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX,
	/* e0 */ FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX,
	/* f0 */ FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX, FX,
};

/* Resolve GR for @op in @map given the ModRM byte @modrm (if any). */
static uint8_t fast_group(uint8_t map, uint8_t op, const uint8_t *next,
			  const uint8_t *end, unsigned mode)
{
	uint8_t modrm, mod, reg;

	if (map == INSN_MAP_0 && op >= 0x40 && op <= 0x4f)
		return mode == HWT_MODE_32 ? NO : FX;	/* inc/dec */
	if (map == INSN_MAP_0 && op == 0x63)
		return mode == HWT_MODE_64 ? MR : FX;	/* movsxd; arpl */
	if (next >= end)
		return FX;

	modrm = *next;
	mod = modrm >> 6;
	reg = (modrm >> 3) & 7;
	if (map == INSN_MAP_0F)	/* 0f 1f /0 nop, 0f 9x /0 setcc */
		return reg == 0 ? MR : FX;

	switch (op) {
	case 0x8d:	/* lea */
		return mod != 3 ? MR : FX;
	case 0x8f:	/* pop r/m; else XOP */
		return reg == 0 ? MR : FX;
	case 0xc0:	/* shifts; /6 is an alias */
	case 0xc1:
		return reg != 6 ? MB : FX;
	case 0xd0:
	case 0xd1:
	case 0xd2:
	case 0xd3:
		return reg != 6 ? MR : FX;
	case 0xc6:	/* mov r/m, imm; else xabort/xbegin */
		return reg == 0 ? MB : FX;
	case 0xc7:
		return reg == 0 ? MZ : FX;
	case 0xf6:	/* test imm, not, neg, mul, ...; /1 is an alias */
		return reg == 0 ? MB : reg >= 2 ? MR : FX;
	case 0xf7:
		return reg == 0 ? MZ : reg >= 2 ? MR : FX;
	case 0xfe:	/* inc/dec r/m8 */
		return reg <= 1 ? MR : FX;
	case 0xff:	/* inc, dec, call, call far, jmp, jmp far, push */
		if (reg == 7 || ((reg == 3 || reg == 5) && mod == 3))
			return FX;
		return MR;
	}
	return FX;
}

/* Bytes of ModRM + SIB + displacement at @p (32/64-bit addressing). */
static unsigned modrm_len(const uint8_t *p, const uint8_t *end)
{
	uint8_t mod = p[0] >> 6, rm = p[0] & 7;

	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (p + 1 >= end)
			return 16;	/* too long: Zydis will say */
		if (mod == 0)
			return (p[1] & 7) == 5 ? 6 : 2;
		return mod == 1 ? 3 : 6;
	}
	if (mod == 0)
		return rm == 5 ? 5 : 1;
	return mod == 1 ? 2 : 5;
}

static int64_t read_rel(const uint8_t *p, unsigned size)
{
	if (size == 1)
		return (int8_t) p[0];
	if (size == 2)
		return (int16_t) (uint16_t) (p[0] | p[1] << 8);
	return (int32_t) ((uint32_t) p[0] | (uint32_t) p[1] << 8 |
			  (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24);
}

/* Returns the size, or 0 to leave the instruction to Zydis. */
static unsigned insn_fast(struct insn_fields *f, const uint8_t *code,
			  size_t avail, unsigned mode)
{
	const uint8_t *p = code, *end;
	unsigned osz = 0, rex = 0, len, imm = 0;
	uint8_t kind, op;

	if (avail > ZYDIS_MAX_INSTRUCTION_LENGTH)
		avail = ZYDIS_MAX_INSTRUCTION_LENGTH;
	end = code + avail;

	for (; p < end; p++) {
		uint8_t b = *p;

		if (b == 0x66)
			osz = 1;
		else if (b != 0x2e && b != 0x3e && b != 0x26 && b != 0x36 &&
			 b != 0x64 && b != 0x65)
			break;
	}
	if (mode == HWT_MODE_64 && p < end && (*p & 0xf0) == 0x40)
		rex = *p++;
	if (p >= end)
		return 0;

	f->map = INSN_MAP_0;
	op = *p++;
	kind = fast_map0[op];
	if (op == 0x0f) {
		if (p >= end)
			return 0;
		f->map = INSN_MAP_0F;
		op = *p++;
		kind = fast_map0f[op];
	}
	if (kind == GR)
		kind = fast_group(f->map, op, p, end, mode);

	f->opcode = op;
	f->modrm = 0;
	f->rex_r = (rex >> 2) & 1;
	f->f3 = 0;
	f->osz = (uint8_t) osz;
	f->rel = 0;

	switch (kind) {
	case FX:
		return 0;
	case MR:
	case MB:
	case MZ:
		if (p >= end)
			return 0;
		f->modrm = *p;
		p += modrm_len(p, end);
		imm = kind == MB ? 1 : kind == MZ ? ((rex & 8) || !osz ? 4 : 2) :
		      0;
		break;
	case IB:
		imm = 1;
		break;
	case IW:
		imm = 2;
		break;
	case IZ:
		imm = (rex & 8) || !osz ? 4 : 2;
		break;
	case IV:
		imm = (rex & 8) ? 8 : osz ? 2 : 4;
		break;
	case J8:
		imm = 1;
		break;
	case JZ:
		/* Intel ignores 66 on near branches in 64-bit mode. */
		imm = mode == HWT_MODE_64 || !osz ? 4 : 2;
		break;
	}

	len = (unsigned) (p - code) + imm;
	if (len > avail)
		return 0;
	if (kind == J8 || kind == JZ)
		f->rel = read_rel(p, imm);
	return len;
}

int hwt_insn_decode(struct hwt_insn_info *info, const uint8_t *code,
		    size_t avail, uint64_t ip, unsigned mode)
{
	struct insn_fields f;
	unsigned size;

	if (!info || (!code && avail))
		return -HWT_ERR_INVALID;
	if (!avail)
		return -HWT_ERR_BAD_INSN;
	if (mode == HWT_MODE_UNKNOWN || mode >= 4)
		mode = HWT_MODE_64;

	if (mode != HWT_MODE_16) {
		size = insn_fast(&f, code, avail, mode);
		if (size) {
			info->size = (uint8_t) size;
			classify(info, &f, ip);
			return 0;
		}
	}
	return hwt_insn_decode_zydis(info, code, avail, ip, mode);
}
