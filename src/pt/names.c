/* SPDX-License-Identifier: BSD-2-Clause */
#include <hwt/pt.h>

const char *hwt_pt_type_name(unsigned type)
{
	static const char *const names[HWT_PT_NTYPES] = {
		[HWT_PT_INVALID] = "invalid",
		[HWT_PT_PAD] = "pad",
		[HWT_PT_PSB] = "psb",
		[HWT_PT_PSBEND] = "psbend",
		[HWT_PT_TNT8] = "tnt.8",
		[HWT_PT_TNT64] = "tnt.64",
		[HWT_PT_TIP] = "tip",
		[HWT_PT_TIP_PGE] = "tip.pge",
		[HWT_PT_TIP_PGD] = "tip.pgd",
		[HWT_PT_FUP] = "fup",
		[HWT_PT_PIP] = "pip",
		[HWT_PT_MODE_EXEC] = "mode.exec",
		[HWT_PT_MODE_TSX] = "mode.tsx",
		[HWT_PT_TSC] = "tsc",
		[HWT_PT_MTC] = "mtc",
		[HWT_PT_TMA] = "tma",
		[HWT_PT_CYC] = "cyc",
		[HWT_PT_CBR] = "cbr",
		[HWT_PT_VMCS] = "vmcs",
		[HWT_PT_OVF] = "ovf",
		[HWT_PT_MNT] = "mnt",
		[HWT_PT_STOP] = "stop",
		[HWT_PT_PTW] = "ptw",
		[HWT_PT_EXSTOP] = "exstop",
		[HWT_PT_MWAIT] = "mwait",
		[HWT_PT_PWRE] = "pwre",
		[HWT_PT_PWRX] = "pwrx",
		[HWT_PT_BBP] = "bbp",
		[HWT_PT_BIP] = "bip",
		[HWT_PT_BEP] = "bep",
		[HWT_PT_CFE] = "cfe",
		[HWT_PT_EVD] = "evd",
	};

	if (type >= HWT_PT_NTYPES || !names[type])
		return "invalid";
	return names[type];
}
