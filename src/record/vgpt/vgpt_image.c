/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The code image in the sideband: `mmap` lines for the mappings code runs
 * from (written when their code is first translated), `munmap` lines when
 * such a mapping goes away, and the bytes of code no file holds.
 *
 * Code without a file (anonymous memory: generated code, a vdso; or file
 * code made writable) is saved to PREFIX.PID.ADDR.TIME.bin. Valgrind
 * re-translates such code when it changes (--smc-check, all-non-file by
 * default), so each translation there compares its bytes with the copy
 * saved last; when they differ the mapping is saved again, with a new
 * `mmap` line at a later time, and every thread starts a PSB+ before it
 * runs more code (vgpt_image_changed), so that a decoder which switches
 * images by time (the TSC of the packets against the time of the lines)
 * uses the new bytes from there on.
 */
#include "vgpt.h"

#include "pub_tool_aspacemgr.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"

/* A code mapping described in the sideband. */
struct seg {
	Addr start;
	Addr end;		/* inclusive, as NSegment */
	ULong offset;
	HChar *name;		/* the file, or NULL */
	UChar *copy;		/* saved bytes, when we saved them */
};

static struct seg *segs;
static UInt nsegs, segs_cap;
static Addr seg_lo = 1, seg_hi;		/* last segment checked */

/* File-backed ranges made writable before their code ran: their bytes
 * may not be the file's any more. */
struct range {
	Addr start, end;
};
static struct range *tainted;
static UInt ntainted;

static Bool overlaps(Addr s1, Addr e1, Addr s2, Addr e2)
{
	return s1 <= e2 && s2 <= e1;
}

static Bool seg_equal(const struct seg *s, const NSegment *seg,
		      const HChar *name)
{
	if (s->start != seg->start || s->end != seg->end ||
	    s->offset != (ULong)seg->offset)
		return False;
	if (!s->name || !name)
		return s->name == name;
	return !VG_(strcmp)(s->name, name);
}

static Bool is_tainted(Addr start, Addr end)
{
	for (UInt i = 0; i < ntainted; i++)
		if (overlaps(start, end, tainted[i].start, tainted[i].end))
			return True;
	return False;
}

static void forget(UInt i)
{
	VG_(free)(segs[i].name);
	VG_(free)(segs[i].copy);
	segs[i] = segs[--nsegs];
}

/* Save the bytes of @s as they are now, and say so in the sideband. */
static void save(struct seg *s, const NSegment *seg)
{
	SizeT n = s->end - s->start + 1;
	HChar *path = vgpt_path("%s.%d.%lx.%llu.bin", vgpt_clo_out,
				VG_(getpid)(), s->start, vgpt_icount);
	struct vgpt_file *f = vgpt_file_open(path, False);

	if (!s->copy)
		s->copy = VG_(malloc)("vgpt.copy", n);
	VG_(memcpy)(s->copy, (const void *)s->start, n);
	vgpt_file_write(f, s->copy, n);
	vgpt_file_close(f);
	vgpt_sb_line("mmap %llu %d %lx %lx 0 %c%c%c %s", vgpt_icount,
		     VG_(getpid)(), s->start, n, seg->hasR ? 'r' : '-',
		     seg->hasW ? 'w' : '-', seg->hasX ? 'x' : '-', path);
	VG_(free)(path);
}

/* Describe the executable segment holding @a in the sideband, once. */
void vgpt_note_code(Addr a)
{
	const NSegment *seg;
	const HChar *name = NULL;
	Bool changed = False;
	struct seg *s;

	if (a >= seg_lo && a <= seg_hi)
		return;
	seg = VG_(am_find_nsegment)(a);
	if (!seg)
		return;
	seg_lo = seg->start;
	seg_hi = seg->end;
	if (seg->kind == SkFileC)
		name = VG_(am_get_filename)(seg);
	/* "[vdso]" and the like name no file to decode from. */
	if (name && name[0] == '[')
		name = NULL;
	for (UInt i = 0; i < nsegs; i++)
		if (seg_equal(&segs[i], seg, name))
			return;
	/* The line's time must be the clock now. */
	vgpt_drain(vgpt_xlate_ip);
	/* A mapping described before changed (mprotect splits or joins
	 * segments): the new line replaces it from now on. */
	for (UInt i = 0; i < nsegs;) {
		if (overlaps(seg->start, seg->end, segs[i].start, segs[i].end)) {
			forget(i);
			changed = True;
		} else {
			i++;
		}
	}
	if (nsegs == segs_cap) {
		segs_cap = segs_cap ? 2 * segs_cap : 64;
		segs = VG_(realloc)("vgpt.segs", segs,
				    segs_cap * sizeof(*segs));
	}
	s = &segs[nsegs++];
	s->start = seg->start;
	s->end = seg->end;
	s->offset = (ULong)seg->offset;
	s->name = name ? VG_(strdup)("vgpt.seg", name) : NULL;
	s->copy = NULL;
	if (!name || seg->hasW || is_tainted(s->start, s->end))
		save(s, seg);
	else
		vgpt_sb_line("mmap %llu %d %lx %lx %llx %c%c%c %s",
			     vgpt_icount, VG_(getpid)(), seg->start,
			     seg->end - seg->start + 1, s->offset,
			     seg->hasR ? 'r' : '-', seg->hasW ? 'w' : '-',
			     seg->hasX ? 'x' : '-', name);
	if (changed)
		vgpt_image_changed(vgpt_xlate_ip);
}

static struct seg *seg_of(Addr a)
{
	for (UInt i = 0; i < nsegs; i++)
		if (a >= segs[i].start && a <= segs[i].end)
			return &segs[i];
	return NULL;
}

/* A translation is being made of @vge: code we saved may have changed. */
void vgpt_check_code(const VexGuestExtents *vge)
{
	for (UInt i = 0; i < vge->n_used; i++) {
		Addr a = (Addr)vge->base[i];
		struct seg *s = seg_of(a);
		const NSegment *seg;

		if (!s || !s->copy || a + vge->len[i] - 1 > s->end ||
		    !VG_(memcmp)((const void *)a, s->copy + (a - s->start),
				 vge->len[i]))
			continue;
		seg = VG_(am_find_nsegment)(a);
		if (!seg)
			continue;
		vgpt_drain(vgpt_xlate_ip);
		save(s, seg);
		vgpt_image_changed(vgpt_xlate_ip);
	}
}

/* [@a, @a + @len) is unmapped (or mapped over). */
void vgpt_unmapped(Addr a, SizeT len)
{
	Addr end = a + len - 1;
	Bool hit = False;

	if (!len)
		return;
	for (UInt i = 0; i < nsegs;) {
		if (overlaps(a, end, segs[i].start, segs[i].end)) {
			forget(i);
			hit = True;
		} else {
			i++;
		}
	}
	for (UInt i = 0; i < ntainted;) {
		if (overlaps(a, end, tainted[i].start, tainted[i].end))
			tainted[i] = tainted[--ntainted];
		else
			i++;
	}
	seg_lo = 1;
	seg_hi = 0;
	if (!hit)
		return;
	vgpt_drain(0);
	vgpt_sb_line("munmap %llu %d %lx %lx", vgpt_icount, VG_(getpid)(),
		     a, len);
	vgpt_image_changed(0);
}

/* mprotect: code that becomes writable may change without the file. */
void vgpt_protect(Addr a, SizeT len, Bool w)
{
	Addr end = a + len - 1;
	const NSegment *seg;

	if (!w || !len)
		return;
	for (UInt i = 0; i < nsegs; i++) {
		struct seg *s = &segs[i];

		if (!overlaps(a, end, s->start, s->end) || s->copy)
			continue;
		/* The bytes are still the file's: compare from now on. */
		s->copy = VG_(malloc)("vgpt.copy", s->end - s->start + 1);
		VG_(memcpy)(s->copy, (const void *)s->start,
			    s->end - s->start + 1);
	}
	/* And whatever describes this range later saves its bytes. */
	seg = VG_(am_find_nsegment)(a);
	if (!seg || seg->kind != SkFileC || is_tainted(a, end))
		return;
	tainted = VG_(realloc)("vgpt.tainted", tainted,
			       (ntainted + 1) * sizeof(*tainted));
	tainted[ntainted].start = a;
	tainted[ntainted++].end = end;
}
