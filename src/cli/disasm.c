/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Disassembly for the CLI (Zydis), and an independent classification of
 * instructions for ptxed's --check. The flow layer classifies with its own
 * table (src/flow); this one goes by mnemonic, so --check compares two
 * derivations rather than one with itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include <hwt/flow.h>
#include <hwt/image.h>
#include <hwt/query.h>

#include "cli/cli.h"

/* Texts up to this long (with the NUL) are kept in a memo's slot. */
#define DIS_TEXT_MAX 72

struct cli_disasm {
	ZydisDecoder dec[4];	/* by enum hwt_exec_mode; [0] unused */
	ZydisFormatter fmt;
};

struct cli_disasm *cli_disasm_new(int att)
{
	struct cli_disasm *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	if (ZYAN_FAILED(ZydisDecoderInit(&d->dec[HWT_MODE_16],
					 ZYDIS_MACHINE_MODE_LEGACY_16,
					 ZYDIS_STACK_WIDTH_16)) ||
	    ZYAN_FAILED(ZydisDecoderInit(&d->dec[HWT_MODE_32],
					 ZYDIS_MACHINE_MODE_LEGACY_32,
					 ZYDIS_STACK_WIDTH_32)) ||
	    ZYAN_FAILED(ZydisDecoderInit(&d->dec[HWT_MODE_64],
					 ZYDIS_MACHINE_MODE_LONG_64,
					 ZYDIS_STACK_WIDTH_64)) ||
	    ZYAN_FAILED(ZydisFormatterInit(&d->fmt,
					   att ? ZYDIS_FORMATTER_STYLE_ATT :
						 ZYDIS_FORMATTER_STYLE_INTEL))) {
		free(d);
		return NULL;
	}
	return d;
}

void cli_disasm_delete(struct cli_disasm *d)
{
	free(d);
}

static const ZydisDecoder *decoder_for(const struct cli_disasm *d,
				       unsigned mode)
{
	if (mode < HWT_MODE_16 || mode > HWT_MODE_64)
		return NULL;
	return &d->dec[mode];
}

int cli_disasm_format(const struct cli_disasm *d, unsigned mode,
		      const uint8_t *raw, size_t size, uint64_t ip, char *buf,
		      size_t len)
{
	const ZydisDecoder *dec = decoder_for(d, mode);
	ZydisDecodedInstruction insn;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];

	if (!dec || ZYAN_FAILED(ZydisDecoderDecodeFull(dec, raw, size, &insn,
						       ops)))
		return -1;
	if (ZYAN_FAILED(ZydisFormatterFormatInstruction(
		    &d->fmt, &insn, ops, insn.operand_count_visible, buf, len,
		    ip, NULL)))
		return -1;
	return insn.length;
}

/* A formatted instruction: the key (address, mode, bytes) and its text;
 * where it was read from an image (cli_disasm_text_at()), that image's id
 * and generation (0: by the bytes alone). */
struct dis_slot {
	uint64_t ip, image, gen;
	uint8_t mode, size, tlen;	/* mode 0: empty */
	uint8_t raw[15];
	char text[DIS_TEXT_MAX];
};

enum { DIS_SLOT_BITS = 16 };

struct cli_disasm_memo {
	struct dis_slot *slots;		/* 1 << DIS_SLOT_BITS */
	char scratch[256];		/* a text too long for a slot */
};

struct cli_disasm_memo *cli_disasm_memo_new(void)
{
	struct cli_disasm_memo *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->slots = calloc((size_t)1 << DIS_SLOT_BITS, sizeof(*m->slots));
	if (!m->slots) {
		free(m);
		return NULL;
	}
	return m;
}

void cli_disasm_memo_delete(struct cli_disasm_memo *m)
{
	if (!m)
		return;
	free(m->slots);
	free(m);
}

static struct dis_slot *slot_of(struct cli_disasm_memo *m, uint64_t ip)
{
	return &m->slots[(ip * 0x9e3779b97f4a7c15ull) >> (64 - DIS_SLOT_BITS)];
}

/* Format @raw into @m's scratch, and keep it in @sl under the key given
 * (the text and the key, or nothing if either does not fit). */
static const char *format_keep(const struct cli_disasm *d,
			       struct cli_disasm_memo *m, struct dis_slot *sl,
			       unsigned mode, const uint8_t *raw, size_t size,
			       uint64_t ip, uint64_t image, uint64_t gen,
			       size_t *tlen)
{
	size_t n;

	if (cli_disasm_format(d, mode, raw, size, ip, m->scratch,
			      sizeof(m->scratch)) < 0)
		return NULL;
	n = strlen(m->scratch);
	*tlen = n;
	if (n >= sizeof(sl->text) || size > sizeof(sl->raw) || !mode)
		return m->scratch;
	sl->ip = ip;
	sl->image = image;
	sl->gen = gen;
	sl->mode = (uint8_t)mode;
	sl->size = (uint8_t)size;
	sl->tlen = (uint8_t)n;
	memcpy(sl->raw, raw, size);
	memcpy(sl->text, m->scratch, n + 1);
	return sl->text;
}

const char *cli_disasm_text(const struct cli_disasm *d,
			    struct cli_disasm_memo *m, unsigned mode,
			    const uint8_t *raw, size_t size, uint64_t ip,
			    size_t *tlen)
{
	struct dis_slot *sl = slot_of(m, ip);

	if (sl->mode == mode && sl->ip == ip && sl->size == size &&
	    size <= sizeof(sl->raw) && !memcmp(sl->raw, raw, size)) {
		*tlen = sl->tlen;
		return sl->text;
	}
	return format_keep(d, m, sl, mode, raw, size, ip, 0, 0, tlen);
}

const char *cli_disasm_text_at(const struct cli_disasm *d,
			       struct cli_disasm_memo *m,
			       const struct cli_image_key *img, unsigned mode,
			       uint64_t ip, size_t size, size_t *tlen)
{
	struct dis_slot *sl = slot_of(m, ip);
	const uint8_t *code;
	size_t avail;

	if (sl->image == img->id && sl->gen == img->gen && sl->ip == ip &&
	    sl->mode == mode && sl->size == size && img->id) {
		*tlen = sl->tlen;
		return sl->text;
	}
	if (hwt_image_read(img->image, ip, &code, &avail) < 0 ||
	    avail < size)
		return NULL;
	return format_keep(d, m, sl, mode, code, size, ip, img->id, img->gen,
			   tlen);
}

/* The class of a mnemonic, as libipt's ptxed derives it from XED's. */
static int class_of(const ZydisDecodedInstruction *insn)
{
	switch (insn->mnemonic) {
	case ZYDIS_MNEMONIC_CALL:
		return insn->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR ?
			       HWT_IC_FAR_CALL : HWT_IC_CALL;
	case ZYDIS_MNEMONIC_RET:
		return HWT_IC_RETURN;
	case ZYDIS_MNEMONIC_JMP:
		return insn->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR ?
			       HWT_IC_FAR_JUMP : HWT_IC_JUMP;
	case ZYDIS_MNEMONIC_JB: case ZYDIS_MNEMONIC_JBE:
	case ZYDIS_MNEMONIC_JCXZ: case ZYDIS_MNEMONIC_JECXZ:
	case ZYDIS_MNEMONIC_JL: case ZYDIS_MNEMONIC_JLE:
	case ZYDIS_MNEMONIC_JNB: case ZYDIS_MNEMONIC_JNBE:
	case ZYDIS_MNEMONIC_JNL: case ZYDIS_MNEMONIC_JNLE:
	case ZYDIS_MNEMONIC_JNO: case ZYDIS_MNEMONIC_JNP:
	case ZYDIS_MNEMONIC_JNS: case ZYDIS_MNEMONIC_JNZ:
	case ZYDIS_MNEMONIC_JO: case ZYDIS_MNEMONIC_JP:
	case ZYDIS_MNEMONIC_JRCXZ: case ZYDIS_MNEMONIC_JS:
	case ZYDIS_MNEMONIC_JZ: case ZYDIS_MNEMONIC_LOOP:
	case ZYDIS_MNEMONIC_LOOPE: case ZYDIS_MNEMONIC_LOOPNE:
		return HWT_IC_COND_JUMP;
	case ZYDIS_MNEMONIC_INT: case ZYDIS_MNEMONIC_INT1:
	case ZYDIS_MNEMONIC_INT3: case ZYDIS_MNEMONIC_INTO:
	case ZYDIS_MNEMONIC_SYSCALL: case ZYDIS_MNEMONIC_SYSENTER:
	case ZYDIS_MNEMONIC_VMCALL:
		return HWT_IC_FAR_CALL;
	case ZYDIS_MNEMONIC_IRET: case ZYDIS_MNEMONIC_IRETD:
	case ZYDIS_MNEMONIC_IRETQ: case ZYDIS_MNEMONIC_SYSEXIT:
	case ZYDIS_MNEMONIC_SYSRET: case ZYDIS_MNEMONIC_UIRET:
	case ZYDIS_MNEMONIC_VMLAUNCH: case ZYDIS_MNEMONIC_VMRESUME:
		return HWT_IC_FAR_RETURN;
	case ZYDIS_MNEMONIC_PTWRITE:
		return HWT_IC_PTWRITE;
	default:
		return HWT_IC_OTHER;
	}
}

int cli_disasm_class(const struct cli_disasm *d, unsigned mode,
		     const uint8_t *raw, size_t size, const char **mnemonic)
{
	const ZydisDecoder *dec = decoder_for(d, mode);
	ZydisDecodedInstruction insn;
	int iclass;

	if (!dec || ZYAN_FAILED(ZydisDecoderDecodeInstruction(
			    dec, NULL, raw, size, &insn)))
		return -1;
	iclass = class_of(&insn);
	/* A far return is "ret far" in Zydis: RET with a far branch. */
	if (insn.mnemonic == ZYDIS_MNEMONIC_RET &&
	    insn.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
		iclass = HWT_IC_FAR_RETURN;
	if (mnemonic)
		*mnemonic = ZydisMnemonicGetString(insn.mnemonic);
	return iclass;
}

const char *cli_iclass_name(unsigned iclass)
{
	switch (iclass) {
	case HWT_IC_UNKNOWN: return "unknown";
	case HWT_IC_OTHER: return "other";
	case HWT_IC_CALL: return "near call";
	case HWT_IC_RETURN: return "near return";
	case HWT_IC_JUMP: return "near jump";
	case HWT_IC_COND_JUMP: return "cond jump";
	case HWT_IC_FAR_CALL: return "far call";
	case HWT_IC_FAR_RETURN: return "far return";
	case HWT_IC_FAR_JUMP: return "far jump";
	case HWT_IC_PTWRITE: return "ptwrite";
	case HWT_IC_INDIRECT: return "indirect";
	}
	return "undefined";
}
