/* SPDX-License-Identifier: BSD-2-Clause */
/* Packet-layer helpers shared inside libhwt (not public API). */
#ifndef HWT_PT_PACKET_INTERNAL_H
#define HWT_PT_PACKET_INTERNAL_H

#include <stdint.h>

/* First PSB at or after @from, or NULL. */
const uint8_t *hwt_pt_find_psb(const uint8_t *from, const uint8_t *end);

/* Last PSB starting before @before and ending by @end, or NULL. */
const uint8_t *hwt_pt_find_psb_backward(const uint8_t *begin,
					const uint8_t *before,
					const uint8_t *end);

#endif
