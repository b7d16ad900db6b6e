/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libipt's wording, for the drop-in tools (hwt ptdump, hwt ptxed): scripts
 * and test expectations written for libipt's tools match on these texts.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/error.h>
#include <hwt/query.h>

#include "cli/cli.h"

const char *cli_ipt_errstr(int err)
{
	switch (err < 0 ? -err : err) {
	case HWT_OK:
		return "OK";
	case HWT_ERR_INTERNAL:
		return "internal error";
	case HWT_ERR_INVALID:
		return "invalid argument";
	case HWT_ERR_NOSYNC:
		return "decoder out of sync";
	case HWT_ERR_BAD_OPC:
		return "unknown opcode";
	case HWT_ERR_BAD_PACKET:
		return "unknown packet";
	case HWT_ERR_EOS:
		return "reached end of trace stream";
	case HWT_ERR_NOMEM:
		return "out of memory";
	case HWT_ERR_IO:
	case HWT_ERR_BAD_FORMAT:
		return "bad file";
	case HWT_ERR_NOIP:
		return "no ip";
	case HWT_ERR_IP_SUPPRESSED:
		return "ip has been suppressed";
	case HWT_ERR_NO_TIME:
		return "no timing information";
	case HWT_ERR_NO_CBR:
		return "no core:bus ratio";
	case HWT_ERR_BAD_CONFIG:
		return "bad configuration";
	case HWT_ERR_NOT_SUPPORTED:
		return "not supported";
	case HWT_ERR_BAD_CONTEXT:
		return "unexpected packet context";
	case HWT_ERR_BAD_QUERY:
		return "trace stream does not match query";
	case HWT_ERR_NOMAP:
		return "no memory mapped at this address";
	case HWT_ERR_BAD_INSN:
		return "unknown instruction";
	case HWT_ERR_NO_ENABLE:
		return "expected tracing enabled event";
	case HWT_ERR_EVENT_IGNORED:
		return "event ignored";
	}
	return "unknown error";
}

const char *cli_ipt_exec_mode(unsigned mode)
{
	switch (mode) {
	case HWT_MODE_UNKNOWN:
		return "<unknown>";
	case HWT_MODE_16:
		return "16-bit";
	case HWT_MODE_32:
		return "32-bit";
	case HWT_MODE_64:
		return "64-bit";
	}
	return "<invalid>";
}

/* Appends to @buf at *@len, bounded by @size; the text is cut if needed. */
#define APPEND(...)                                                        \
	do {                                                               \
		int n_ = snprintf(buf + len, len < size ? size - len : 0,  \
				  __VA_ARGS__);                            \
		if (n_ > 0)                                                \
			len += (size_t)n_;                                 \
		if (len >= size)                                           \
			len = size ? size - 1 : 0;                         \
	} while (0)

#define APPEND_IP(ip)                                                      \
	do {                                                               \
		if (print_ip && !ev->ip_suppressed)                        \
			APPEND(", ip: %016" PRIx64, (uint64_t)(ip));       \
	} while (0)

size_t cli_ipt_event(char *buf, size_t size, const struct hwt_event *ev,
		     int print_ip)
{
	size_t len = 0;

	if (size)
		buf[0] = '\0';
	switch (ev->type) {
	case HWT_EV_ENABLED:
		APPEND("%s", ev->u.enabled.resumed ? "resumed" : "enabled");
		/* ptxed prints it even when suppressed. */
		if (print_ip)
			APPEND(", ip: %016" PRIx64, ev->u.enabled.ip);
		break;
	case HWT_EV_DISABLED:
		APPEND("disabled");
		APPEND_IP(ev->u.disabled.ip);
		break;
	case HWT_EV_ASYNC_DISABLED:
		APPEND("disabled");
		if (print_ip) {
			APPEND(", at: %016" PRIx64, ev->u.async_disabled.at);
			APPEND_IP(ev->u.async_disabled.ip);
		}
		break;
	case HWT_EV_ASYNC_BRANCH:
		APPEND("interrupt");
		if (print_ip) {
			APPEND(", from: %016" PRIx64, ev->u.async_branch.from);
			if (!ev->ip_suppressed)
				APPEND(", to: %016" PRIx64,
				       ev->u.async_branch.to);
		}
		break;
	case HWT_EV_PAGING:
		APPEND("paging, cr3: %016" PRIx64 "%s", ev->u.paging.cr3,
		       ev->u.paging.non_root ? ", nr" : "");
		break;
	case HWT_EV_ASYNC_PAGING:
		APPEND("paging, cr3: %016" PRIx64 "%s", ev->u.async_paging.cr3,
		       ev->u.async_paging.non_root ? ", nr" : "");
		if (print_ip)
			APPEND(", ip: %016" PRIx64, ev->u.async_paging.ip);
		break;
	case HWT_EV_OVERFLOW:
		APPEND("overflow");
		APPEND_IP(ev->u.overflow.ip);
		break;
	case HWT_EV_EXEC_MODE:
		APPEND("exec mode: %s",
		       cli_ipt_exec_mode(ev->u.exec_mode.mode));
		APPEND_IP(ev->u.exec_mode.ip);
		break;
	case HWT_EV_TSX:
		if (ev->u.tsx.aborted)
			APPEND("aborted");
		else if (ev->u.tsx.speculative)
			APPEND("begin transaction");
		else
			APPEND("committed");
		APPEND_IP(ev->u.tsx.ip);
		break;
	case HWT_EV_STOP:
		APPEND("stopped");
		break;
	case HWT_EV_VMCS:
		APPEND("vmcs, base: %016" PRIx64, ev->u.vmcs.base);
		break;
	case HWT_EV_ASYNC_VMCS:
		APPEND("vmcs, base: %016" PRIx64, ev->u.async_vmcs.base);
		if (print_ip)
			APPEND(", ip: %016" PRIx64, ev->u.async_vmcs.ip);
		break;
	case HWT_EV_EXSTOP:
		APPEND("exstop");
		APPEND_IP(ev->u.exstop.ip);
		break;
	case HWT_EV_MWAIT:
		APPEND("mwait %" PRIx32 " %" PRIx32, ev->u.mwait.hints,
		       ev->u.mwait.ext);
		APPEND_IP(ev->u.mwait.ip);
		break;
	case HWT_EV_PWRE:
		APPEND("pwre c%u.%u", (ev->u.pwre.state + 1u) & 0xf,
		       (ev->u.pwre.sub_state + 1u) & 0xf);
		if (ev->u.pwre.hw)
			APPEND(" hw");
		break;
	case HWT_EV_PWRX:
		APPEND("pwrx ");
		if (ev->u.pwrx.interrupt)
			APPEND("int: ");
		if (ev->u.pwrx.store)
			APPEND("st: ");
		if (ev->u.pwrx.autonomous)
			APPEND("hw: ");
		APPEND("c%u (c%u)", (ev->u.pwrx.last + 1u) & 0xf,
		       (ev->u.pwrx.deepest + 1u) & 0xf);
		break;
	case HWT_EV_PTWRITE:
		APPEND("ptwrite: %" PRIx64, ev->u.ptwrite.payload);
		APPEND_IP(ev->u.ptwrite.ip);
		break;
	case HWT_EV_TICK:
		APPEND("tick");
		APPEND_IP(ev->u.tick.ip);
		break;
	case HWT_EV_CBR:
		APPEND("cbr: %x", ev->u.cbr.ratio);
		break;
	case HWT_EV_MNT:
		APPEND("mnt: %" PRIx64, ev->u.mnt.payload);
		break;
	case HWT_EV_TIP:
		APPEND("tip: %" PRIx64, ev->u.tip.ip);
		break;
	case HWT_EV_TNT:
		/*
		 * ptxed walks a mask from the size down; keep its output
		 * bit for bit, odd as it is for sizes that are not powers
		 * of two.
		 */
		APPEND("tnt: ");
		for (uint64_t m = ev->u.tnt.size; m; m >>= 1)
			APPEND("%s", (ev->u.tnt.bits & m) ? "!" : ".");
		break;
	case HWT_EV_IFLAGS:
		APPEND("interrupts %s",
		       ev->u.iflags.iflag ? "enabled" : "disabled");
		APPEND_IP(ev->u.iflags.ip);
		break;
	case HWT_EV_INTERRUPT:
		APPEND("interrupt %u", ev->u.interrupt.vector);
		if (ev->u.interrupt.has_cr2)
			APPEND(", cr2: %016" PRIx64, ev->u.interrupt.cr2);
		APPEND_IP(ev->u.interrupt.ip);
		break;
	case HWT_EV_IRET:
		APPEND("iret");
		APPEND_IP(ev->u.iret.ip);
		break;
	case HWT_EV_SMI:
		APPEND("smi");
		APPEND_IP(ev->u.smi.ip);
		break;
	case HWT_EV_RSM:
		APPEND("rsm");
		APPEND_IP(ev->u.rsm.ip);
		break;
	case HWT_EV_SIPI:
		APPEND("sipi: %x", ev->u.sipi.vector);
		break;
	case HWT_EV_INIT:
		APPEND("init");
		APPEND_IP(ev->u.init.ip);
		break;
	case HWT_EV_VMENTRY:
		APPEND("vmentry");
		APPEND_IP(ev->u.vmentry.ip);
		break;
	case HWT_EV_VMEXIT:
		APPEND("vmexit");
		if (ev->u.vmexit.has_vector)
			APPEND(", intr: %u", ev->u.vmexit.vector);
		if (ev->u.vmexit.has_vmxr)
			APPEND(", vmxr: %016" PRIx64, ev->u.vmexit.vmxr);
		if (ev->u.vmexit.has_vmxq)
			APPEND(", vmxq: %016" PRIx64, ev->u.vmexit.vmxq);
		APPEND_IP(ev->u.vmexit.ip);
		break;
	case HWT_EV_SHUTDOWN:
		APPEND("shutdown");
		APPEND_IP(ev->u.shutdown.ip);
		break;
	case HWT_EV_UINTR:
		APPEND("uintr %u", ev->u.uintr.vector);
		APPEND_IP(ev->u.uintr.ip);
		break;
	case HWT_EV_UIRET:
		APPEND("uiret");
		APPEND_IP(ev->u.uiret.ip);
		break;
	default:
		/* ptxed prints nothing for types it does not know. */
		break;
	}
	return len;
}

/* --cpu none|auto|f/m[/s], with ptdump's and ptxed's messages. */
int cli_ipt_parse_cpu(const char *prog, const char *arg, struct hwt_pt_cpu *cpu)
{
	if (!arg) {
		fprintf(stderr, "%s: --cpu: missing argument.\n", prog);
		return -1;
	}
	if (!strcmp(arg, "none")) {
		memset(cpu, 0, sizeof(*cpu));
		return 0;
	}
	if (!strcmp(arg, "auto")) {
		if (hwt_pt_cpu_host(cpu) < 0) {
			fprintf(stderr, "%s: --cpu auto: not supported on this "
				"cpu (Intel only); use --cpu f/m[/s].\n",
				prog);
			return -1;
		}
		return 0;
	}
	if (hwt_pt_cpu_parse(cpu, arg) < 0) {
		fprintf(stderr, "%s: cpu must be specified as f/m[/s]\n", prog);
		return -1;
	}
	return 0;
}

/* A numeric option argument, C notation, at most @max; 0 or -1 (reported). */
int cli_ipt_get_arg(const char *prog, const char *option, const char *arg,
		    uint64_t max, uint64_t *value)
{
	char *end;

	if (!arg || !arg[0] || (arg[0] == '-' && arg[1] == '-')) {
		fprintf(stderr, "%s: %s: missing argument.\n", prog, option);
		return -1;
	}
	errno = 0;
	*value = strtoull(arg, &end, 0);
	if (errno || *end || arg[0] == '-') {
		fprintf(stderr, "%s: %s: bad argument: %s.\n", prog, option,
			arg);
		return -1;
	}
	if (*value > max) {
		fprintf(stderr, "%s: %s: value too big: %s.\n", prog, option,
			arg);
		return -1;
	}
	return 0;
}
