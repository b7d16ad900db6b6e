/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * --vgpt-filter=FUNC[@OBJ][,FUNC[@OBJ]...]: trace only inside the named
 * functions, as Intel PT's IP filtering does with one address range per
 * function. An address is inside when the symbol that covers it (Valgrind's
 * debug info: [start, start + size) of the symbol table entry) has one of
 * the names, in an object whose path or base name is OBJ when given.
 *
 * Translations are classified when they are made (their first instruction
 * and each exiting one, vgpt_instr.c); the encoder (vgpt_trace.c) then
 * turns transitions into TIP.PGE and TIP.PGD.
 */
#include "vgpt.h"

#include "pub_tool_debuginfo.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_mallocfree.h"

struct fentry {
	HChar *func;
	HChar *obj;		/* or NULL: any object */
	Bool hit;
};

Bool vgpt_filtering;
static struct fentry *fents;
static UInt nfents;

/* Parse the option's value; False if it is malformed. */
Bool vgpt_filter_parse(const HChar *arg)
{
	HChar *copy = VG_(strdup)("vgpt.filter", arg), *save = NULL, *tok;

	for (tok = VG_(strtok_r)(copy, ",", &save); tok;
	     tok = VG_(strtok_r)(NULL, ",", &save)) {
		HChar *at = VG_(strchr)(tok, '@');
		struct fentry *f;

		if (at)
			*at++ = 0;
		if (!*tok || (at && !*at))
			return False;
		fents = VG_(realloc)("vgpt.filter", fents,
				     (nfents + 1) * sizeof(*fents));
		f = &fents[nfents++];
		f->func = VG_(strdup)("vgpt.filter", tok);
		f->obj = at ? VG_(strdup)("vgpt.filter", at) : NULL;
		f->hit = False;
	}
	VG_(free)(copy);
	vgpt_filtering = nfents > 0;
	return nfents > 0;
}

static Bool obj_matches(const HChar *want, const HChar *obj)
{
	return !VG_(strcmp)(want, obj) ||
	       !VG_(strcmp)(want, VG_(basename)(obj));
}

Bool vgpt_in_filter(Addr a)
{
	DiEpoch ep = VG_(current_DiEpoch)();
	const HChar *fn, *obj = NULL;

	if (!VG_(get_fnname)(ep, a, &fn))
		return False;
	for (UInt i = 0; i < nfents; i++) {
		if (VG_(strcmp)(fents[i].func, fn))
			continue;
		if (fents[i].obj) {
			if (!obj && !VG_(get_objname)(ep, a, &obj))
				return False;
			if (!obj_matches(fents[i].obj, obj))
				continue;
		}
		fents[i].hit = True;
		return True;
	}
	return False;
}

/* At exit: name the functions that never ran (a typo, most likely). */
void vgpt_filter_report(void)
{
	for (UInt i = 0; i < nfents; i++)
		if (!fents[i].hit)
			VG_(umsg)("vgpt: --vgpt-filter: %s%s%s never ran\n",
				  fents[i].func, fents[i].obj ? "@" : "",
				  fents[i].obj ? fents[i].obj : "");
}
