/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt_pt_ipc_choose() as an inline function, for encoders whose inner
 * loop emits IP packets (src/record/vgpt): last_ip.c defines the exported
 * function with it, so there is one implementation.
 */
#ifndef HWT_PT_LAST_IP_CHOOSE_H
#define HWT_PT_LAST_IP_CHOOSE_H

#include <hwt/pt.h>

static inline uint64_t hwt_pt_sext48(uint64_t v)
{
	return (uint64_t)((int64_t)(v << 16) >> 16);
}

static inline unsigned hwt_pt_ipc_choose_inline(const struct hwt_pt_last_ip *lip,
						uint64_t ip, uint64_t *payload)
{
	if (lip->have_ip) {
		uint64_t diff = lip->ip ^ ip;

		if (!(diff >> 16)) {
			*payload = ip & 0xffff;
			return HWT_PT_IPC_UPDATE16;
		}
		if (!(diff >> 32)) {
			*payload = ip & 0xffffffff;
			return HWT_PT_IPC_UPDATE32;
		}
	}
	if (hwt_pt_sext48(ip) == ip) {
		*payload = ip & 0xffffffffffffull;
		return HWT_PT_IPC_SEXT48;
	}
	if (lip->have_ip && !((lip->ip ^ ip) >> 48)) {
		*payload = ip & 0xffffffffffffull;
		return HWT_PT_IPC_UPDATE48;
	}
	*payload = ip;
	return HWT_PT_IPC_FULL;
}

#endif
