/* SPDX-License-Identifier: BSD-2-Clause */
#include <hwt/error.h>

const char *hwt_errstr(int err)
{
	static const char *const str[HWT_ERR_COUNT] = {
		[HWT_OK] = "success",
		[HWT_ERR_INTERNAL] = "internal error",
		[HWT_ERR_INVALID] = "invalid argument",
		[HWT_ERR_NOSYNC] = "not synchronized (no PSB)",
		[HWT_ERR_BAD_OPC] = "unknown packet opcode",
		[HWT_ERR_BAD_PACKET] = "malformed packet (reserved payload)",
		[HWT_ERR_EOS] = "packet truncated at end of trace",
		[HWT_ERR_NOMEM] = "out of memory",
		[HWT_ERR_IO] = "i/o error",
		[HWT_ERR_NOIP] = "no ip yet",
		[HWT_ERR_IP_SUPPRESSED] = "ip suppressed",
		[HWT_ERR_NO_TIME] = "no timing information",
		[HWT_ERR_NO_CBR] = "no core:bus ratio",
		[HWT_ERR_BAD_CONFIG] = "bad configuration",
		[HWT_ERR_NOT_SUPPORTED] = "not supported",
		[HWT_ERR_BAD_FORMAT] = "bad file format",
		[HWT_ERR_BAD_CONTEXT] = "unexpected packet context",
		[HWT_ERR_BAD_QUERY] = "trace does not match the code",
		[HWT_ERR_NOMAP] = "no memory mapped at this address",
		[HWT_ERR_BAD_INSN] = "unknown instruction",
		[HWT_ERR_NO_ENABLE] = "tracing is not enabled",
		[HWT_ERR_EVENT_IGNORED] = "event ignored",
		[HWT_ERR_BAD_STATUS_UPDATE] = "bad status update",
		[HWT_ERR_OVERFLOW] = "overflow",
	};

	if (err < 0)
		err = -err;
	if (err >= HWT_ERR_COUNT || !str[err])
		return "unknown error";
	return str[err];
}
