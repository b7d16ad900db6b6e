/* SPDX-License-Identifier: BSD-2-Clause */
/* Last-IP: how compressed IP payloads expand (SDM "IP Compression"). */
#include <hwt/pt.h>

#include "pt/last_ip_choose.h"

int hwt_pt_last_ip_update(struct hwt_pt_last_ip *lip, unsigned ipc,
			  uint64_t payload)
{
	uint64_t ip;

	switch (ipc) {
	case HWT_PT_IPC_SUPPRESSED:
		lip->suppressed = 1;
		return 0;
	case HWT_PT_IPC_UPDATE16:
		ip = (lip->ip & ~0xffffull) | (payload & 0xffffull);
		break;
	case HWT_PT_IPC_UPDATE32:
		ip = (lip->ip & ~0xffffffffull) | (payload & 0xffffffffull);
		break;
	case HWT_PT_IPC_SEXT48:
		ip = hwt_pt_sext48(payload);
		break;
	case HWT_PT_IPC_UPDATE48:
		ip = (lip->ip & ~0xffffffffffffull) |
		     (payload & 0xffffffffffffull);
		break;
	case HWT_PT_IPC_FULL:
		ip = payload;
		break;
	default:
		return -HWT_ERR_BAD_PACKET;
	}
	lip->ip = ip;
	lip->have_ip = 1;
	lip->suppressed = 0;
	return 0;
}

int hwt_pt_last_ip_query(const struct hwt_pt_last_ip *lip, uint64_t *ip)
{
	if (!lip->have_ip)
		return -HWT_ERR_NOIP;
	if (lip->suppressed)
		return -HWT_ERR_IP_SUPPRESSED;
	if (ip)
		*ip = lip->ip;
	return 0;
}

unsigned hwt_pt_ipc_choose(const struct hwt_pt_last_ip *lip, uint64_t ip,
			   uint64_t *payload)
{
	return hwt_pt_ipc_choose_inline(lip, ip, payload);
}
