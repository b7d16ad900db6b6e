/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hwt error codes, shared by every layer.
 *
 * Functions return a negative hwt_error on failure (-HWT_ERR_EOS, ...), so a
 * caller can test `< 0` and hand the value to hwt_errstr() unchanged.
 */
#ifndef HWT_ERROR_H
#define HWT_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

enum hwt_error {
	HWT_OK = 0,
	HWT_ERR_INTERNAL,	/* a bug in hwt */
	HWT_ERR_INVALID,	/* bad argument */
	HWT_ERR_NOSYNC,		/* no PSB found / not synchronised */
	HWT_ERR_BAD_OPC,	/* unknown packet opcode */
	HWT_ERR_BAD_PACKET,	/* known opcode, reserved or malformed payload */
	HWT_ERR_EOS,		/* packet runs past the end of the buffer */
	HWT_ERR_NOMEM,
	HWT_ERR_IO,		/* file could not be read/written (see errno) */
	HWT_ERR_NOIP,		/* no IP known yet (last-IP empty) */
	HWT_ERR_IP_SUPPRESSED,	/* the IP was suppressed */
	HWT_ERR_NO_TIME,	/* no timing information yet */
	HWT_ERR_NO_CBR,		/* no core:bus ratio yet */
	HWT_ERR_BAD_CONFIG,	/* inconsistent configuration */
	HWT_ERR_NOT_SUPPORTED,
	HWT_ERR_BAD_FORMAT,	/* input is not in the expected format */
	HWT_ERR_BAD_CONTEXT,	/* a packet where the protocol allows none */
	HWT_ERR_BAD_QUERY,	/* the trace does not match the code walked */
	HWT_ERR_NOMAP,		/* no code image at this address */
	HWT_ERR_BAD_INSN,	/* an instruction that cannot be decoded */
	HWT_ERR_NO_ENABLE,	/* trace ended while tracing was disabled */
	HWT_ERR_EVENT_IGNORED,	/* an event that was not expected here */
	HWT_ERR_BAD_STATUS_UPDATE, /* PSB+ contradicts the decoder's state */
	HWT_ERR_OVERFLOW,	/* a counter or buffer would overflow */
	HWT_ERR_COUNT
};

/* A one-line description of @err; accepts both signs. Never NULL. */
const char *hwt_errstr(int err);

#ifdef __cplusplus
}
#endif

#endif /* HWT_ERROR_H */
