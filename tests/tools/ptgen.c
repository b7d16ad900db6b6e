/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ptgen: write an Intel PT trace from a text description, with hwt's
 * packet encoder. For tests only: golden outputs of `hwt flow` and
 * `hwt ptxed` on tiny programs without depending on libipt's pttc.
 *
 *   ptgen OUT.pt < DESCRIPTION
 *
 * One packet per line; '#' starts a comment. IPs are compressed against
 * the last IP as a real encoder would, unless an explicit IPC is given
 * (`tip/6 0x1000'); `-' is a suppressed IP.
 *
 *   psb | psbend | pad | ovf | stop
 *   tnt BITS                 '!' taken, '.' not taken, oldest first
 *   tip|tip.pge|tip.pgd|fup[/IPC] ADDR|-
 *   mode.exec 16|32|64       mode.tsx begin|commit|abort
 *   pip CR3 [nr]             vmcs BASE
 *   tsc N | cbr N | mtc N | cyc N | tma CTC FC | mnt N
 *   ptw 4|8 PAYLOAD [ip]     exstop [ip]
 *   raw HEX...               bytes as they are (corruption)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwt/pt.h>

static int fail(unsigned line, const char *what)
{
	fprintf(stderr, "ptgen: line %u: %s\n", line, what);
	return 1;
}

static int num(const char *s, uint64_t *v)
{
	char *end;

	if (!s)
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return (errno || *end) ? -1 : 0;
}

static int ip_packet(struct hwt_pt_packet *pkt, unsigned type,
		     const char *ipc_str, const char *arg,
		     struct hwt_pt_last_ip *lip)
{
	uint64_t ip, ipc, payload;

	pkt->type = (uint8_t)type;
	if (!arg)
		return -1;
	if (!strcmp(arg, "-")) {
		pkt->u.ip.ipc = HWT_PT_IPC_SUPPRESSED;
		pkt->u.ip.ip = 0;
		return hwt_pt_last_ip_update(lip, HWT_PT_IPC_SUPPRESSED, 0);
	}
	if (num(arg, &ip))
		return -1;
	if (ipc_str) {
		if (num(ipc_str, &ipc) || hwt_pt_ipc_size((unsigned)ipc) < 0)
			return -1;
		payload = ip;
		if (ipc == HWT_PT_IPC_UPDATE16)
			payload &= 0xffff;
		else if (ipc == HWT_PT_IPC_UPDATE32)
			payload &= 0xffffffff;
		else if (ipc == HWT_PT_IPC_UPDATE48 ||
			 ipc == HWT_PT_IPC_SEXT48)
			payload &= 0xffffffffffffull;
	} else {
		ipc = hwt_pt_ipc_choose(lip, ip, &payload);
	}
	pkt->u.ip.ipc = (uint8_t)ipc;
	pkt->u.ip.ip = payload;
	return hwt_pt_last_ip_update(lip, (unsigned)ipc, payload);
}

int main(int argc, char **argv)
{
	static uint8_t buf[1 << 26];	/* (untouched pages cost nothing) */
	struct hwt_pt_last_ip lip;
	size_t len = 0;
	unsigned lineno = 0;
	char line[512];
	FILE *out;

	if (argc != 2) {
		fprintf(stderr, "usage: ptgen OUT.pt < DESCRIPTION\n");
		return 2;
	}
	hwt_pt_last_ip_init(&lip);

	while (fgets(line, sizeof(line), stdin)) {
		struct hwt_pt_packet pkt;
		char *cmd, *a1, *a2, *a3, *slash, *hash;
		uint64_t v, w;
		int n;

		lineno++;
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		cmd = strtok(line, " \t\r\n");
		if (!cmd)
			continue;
		a1 = strtok(NULL, " \t\r\n");
		a2 = a1 ? strtok(NULL, " \t\r\n") : NULL;
		a3 = a2 ? strtok(NULL, " \t\r\n") : NULL;
		slash = strchr(cmd, '/');
		if (slash)
			*slash++ = '\0';
		memset(&pkt, 0, sizeof(pkt));

		if (!strcmp(cmd, "raw")) {
			char *bytes[3] = { a1, a2, a3 }, *b;

			for (int i = 0; i < 3 && bytes[i]; i++) {
				if (num(bytes[i], &v) || v > 0xff ||
				    len >= sizeof(buf))
					return fail(lineno, "bad raw byte");
				buf[len++] = (uint8_t)v;
			}
			while (a3 && (b = strtok(NULL, " \t\r\n"))) {
				if (num(b, &v) || v > 0xff ||
				    len >= sizeof(buf))
					return fail(lineno, "bad raw byte");
				buf[len++] = (uint8_t)v;
			}
			continue;
		}
		if (!strcmp(cmd, "psb")) {
			pkt.type = HWT_PT_PSB;
			hwt_pt_last_ip_init(&lip);
		} else if (!strcmp(cmd, "psbend")) {
			pkt.type = HWT_PT_PSBEND;
		} else if (!strcmp(cmd, "pad")) {
			pkt.type = HWT_PT_PAD;
		} else if (!strcmp(cmd, "ovf")) {
			pkt.type = HWT_PT_OVF;
		} else if (!strcmp(cmd, "stop")) {
			pkt.type = HWT_PT_STOP;
		} else if (!strcmp(cmd, "tnt")) {
			size_t bits = a1 ? strlen(a1) : 0;

			if (!bits || bits > 47)
				return fail(lineno, "tnt: 1..47 bits");
			pkt.type = bits <= 6 ? HWT_PT_TNT8 : HWT_PT_TNT64;
			pkt.u.tnt.bits = (uint8_t)bits;
			for (size_t i = 0; i < bits; i++) {
				if (a1[i] != '!' && a1[i] != '.')
					return fail(lineno, "tnt: ! or .");
				pkt.u.tnt.payload = pkt.u.tnt.payload << 1 |
						    (a1[i] == '!');
			}
		} else if (!strcmp(cmd, "tip") || !strcmp(cmd, "tip.pge") ||
			   !strcmp(cmd, "tip.pgd") || !strcmp(cmd, "fup")) {
			unsigned type = !strcmp(cmd, "tip") ? HWT_PT_TIP :
					!strcmp(cmd, "fup") ? HWT_PT_FUP :
					cmd[6] == 'e' ? HWT_PT_TIP_PGE :
							HWT_PT_TIP_PGD;

			if (ip_packet(&pkt, type, slash, a1, &lip))
				return fail(lineno, "bad ip");
		} else if (!strcmp(cmd, "mode.exec")) {
			pkt.type = HWT_PT_MODE_EXEC;
			if (a1 && !strcmp(a1, "64"))
				pkt.u.exec = HWT_PT_EXEC_CSL;
			else if (a1 && !strcmp(a1, "32"))
				pkt.u.exec = HWT_PT_EXEC_CSD;
			else if (a1 && !strcmp(a1, "16"))
				pkt.u.exec = 0;
			else
				return fail(lineno, "mode.exec 16|32|64");
		} else if (!strcmp(cmd, "mode.tsx")) {
			pkt.type = HWT_PT_MODE_TSX;
			if (a1 && !strcmp(a1, "begin"))
				pkt.u.tsx = HWT_PT_TSX_INTX;
			else if (a1 && !strcmp(a1, "abort"))
				pkt.u.tsx = HWT_PT_TSX_ABORT;
			else if (a1 && !strcmp(a1, "commit"))
				pkt.u.tsx = 0;
			else
				return fail(lineno, "mode.tsx begin|commit|abort");
		} else if (!strcmp(cmd, "pip")) {
			if (num(a1, &v))
				return fail(lineno, "pip CR3 [nr]");
			pkt.type = HWT_PT_PIP;
			pkt.u.pip.cr3 = v;
			pkt.u.pip.nr = a2 && !strcmp(a2, "nr");
		} else if (!strcmp(cmd, "vmcs")) {
			if (num(a1, &v))
				return fail(lineno, "vmcs BASE");
			pkt.type = HWT_PT_VMCS;
			pkt.u.vmcs = v;
		} else if (!strcmp(cmd, "tsc") || !strcmp(cmd, "cbr") ||
			   !strcmp(cmd, "mtc") || !strcmp(cmd, "cyc") ||
			   !strcmp(cmd, "mnt")) {
			if (num(a1, &v))
				return fail(lineno, "missing number");
			switch (cmd[1]) {
			case 's': pkt.type = HWT_PT_TSC; pkt.u.tsc = v; break;
			case 'b': pkt.type = HWT_PT_CBR;
				pkt.u.cbr = (uint8_t)v; break;
			case 't': pkt.type = HWT_PT_MTC;
				pkt.u.mtc = (uint8_t)v; break;
			case 'y': pkt.type = HWT_PT_CYC; pkt.u.cyc = v; break;
			default: pkt.type = HWT_PT_MNT; pkt.u.mnt = v; break;
			}
		} else if (!strcmp(cmd, "tma")) {
			if (num(a1, &v) || num(a2, &w))
				return fail(lineno, "tma CTC FC");
			pkt.type = HWT_PT_TMA;
			pkt.u.tma.ctc = (uint16_t)v;
			pkt.u.tma.fc = (uint16_t)w;
		} else if (!strcmp(cmd, "ptw")) {
			if (num(a1, &v) || (v != 4 && v != 8) || num(a2, &w))
				return fail(lineno, "ptw 4|8 PAYLOAD [ip]");
			pkt.type = HWT_PT_PTW;
			pkt.u.ptw.plc = v == 8;
			pkt.u.ptw.payload = w;
			pkt.u.ptw.ip = a3 && !strcmp(a3, "ip");
		} else if (!strcmp(cmd, "exstop")) {
			pkt.type = HWT_PT_EXSTOP;
			pkt.u.exstop_ip = a1 && !strcmp(a1, "ip");
		} else {
			return fail(lineno, "unknown packet");
		}
		n = hwt_pt_encode(buf + len, buf + sizeof(buf), &pkt);
		if (n < 0)
			return fail(lineno, hwt_errstr(n));
		len += (size_t)n;
	}

	out = fopen(argv[1], "wb");
	if (!out || fwrite(buf, 1, len, out) != len || fclose(out)) {
		fprintf(stderr, "ptgen: cannot write %s\n", argv[1]);
		return 1;
	}
	return 0;
}
