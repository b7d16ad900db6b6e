/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sideband records applied, as libipt-sb applies them for ptxed.
 *
 * A context switch (ITRACE_START, SWITCH, SWITCH_CPU_WIDE, COMM.EXEC) is
 * only prepared by its record and made at the first event that shows the
 * trace in (or likely in, or not known to be out of) the kernel, where
 * the real switch happened: timestamps are too coarse to place it. This
 * is libipt-sb's model, kept as it is because libipt's expectations
 * encode it.
 *
 * A process context is the list of its mappings and, once the trace
 * switched to it, an image made from the list and kept up to date with
 * it. A switch gives the decoder the context's image (hwt_blk_set_image()),
 * which keeps the block cache of the one it leaves: as libipt's caches
 * per section, a process the trace comes back to is not decoded again.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hwt/flow.h>
#include <hwt/image.h>
#include <hwt/query.h>

#include "cli/ipt_sb_int.h"
#include "common/grow.h"

/* ------------------------------------------------------------------ */
/* Contexts                                                            */
/* ------------------------------------------------------------------ */

int sb_maps_add(struct sb_maps *m, const char *path, uint64_t pgoff,
		uint64_t len, uint64_t vaddr, int elf)
{
	char *copy;

	if (hwt_grow((void **)&m->v, &m->cap, m->n + 1, sizeof(*m->v)) < 0)
		return -HWT_ERR_NOMEM;
	copy = strdup(path);
	if (!copy)
		return -HWT_ERR_NOMEM;
	m->v[m->n++] = (struct sb_map){ copy, pgoff, len, vaddr, elf };
	return 0;
}

static int maps_copy(struct sb_maps *dst, const struct sb_maps *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct sb_map *s = &src->v[i];
		int err = sb_maps_add(dst, s->path, s->pgoff, s->len, s->vaddr,
				      s->elf);

		if (err < 0)
			return err;
	}
	return 0;
}

void sb_maps_free(struct sb_maps *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

static int image_add(struct hwt_image *image, const struct sb_map *m)
{
	return m->elf ? hwt_image_add_elf(image, m->path, 0)
		      : hwt_image_add_mmap(image, m->path, m->pgoff, m->len,
					   m->vaddr);
}

void sb_ctx_put(struct cli_sb *sb, struct sb_ctx *c)
{
	if (!c || --c->refs)
		return;
	if (c->image) {
		/* Not the decoder's: sb->image_ctx holds a reference. */
		if (sb->dec)
			(void)hwt_blk_forget_image(sb->dec, c->image);
		hwt_image_delete(c->image);
	}
	sb_maps_free(&c->maps);
	free(c);
}

static struct sb_ctx *ctx_find(struct cli_sb *sb, uint32_t pid)
{
	struct sb_ctx *c;

	for (c = sb->ctxs; c; c = c->next)
		if (c->pid == pid)
			break;
	return c;
}

/* The context of @pid, made (with the kernel's mappings) if new. */
static int ctx_get(struct cli_sb *sb, uint32_t pid, struct sb_ctx **out)
{
	struct sb_ctx *c = ctx_find(sb, pid);

	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return -HWT_ERR_NOMEM;
		c->pid = pid;
		c->refs = 1;
		snprintf(c->name, sizeof(c->name), "pid-%x", pid);
		if (maps_copy(&c->maps, &sb->kernel) < 0) {
			sb_ctx_put(sb, c);
			return -HWT_ERR_NOMEM;
		}
		c->next = sb->ctxs;
		sb->ctxs = c;
	}
	*out = c;
	return 0;
}

static void ctx_remove(struct cli_sb *sb, uint32_t pid)
{
	struct sb_ctx **pp;

	for (pp = &sb->ctxs; *pp; pp = &(*pp)->next) {
		if ((*pp)->pid == pid) {
			struct sb_ctx *c = *pp;

			*pp = c->next;
			sb_ctx_put(sb, c);
			return;
		}
	}
}

/* @c's image, made from its mappings the first time. */
static int ctx_image(struct sb_ctx *c)
{
	if (c->image)
		return 0;
	c->image = hwt_image_new();
	if (!c->image)
		return -HWT_ERR_NOMEM;
	/* ptxed prints no symbols. */
	hwt_image_set_symbols(c->image, 0);
	/* Each was added once already, and checked then. */
	for (size_t i = 0; i < c->maps.n; i++)
		(void)image_add(c->image, &c->maps.v[i]);
	return 0;
}

/* The decoder's image becomes @c's. */
static int switch_contexts(struct cli_sb *sb, struct sb_chan *ch)
{
	struct sb_ctx *next = ch->next_ctx;
	int err;

	if (!next || !sb->dec)
		return -HWT_ERR_INTERNAL;
	if (sb->show_switch) {
		struct cli_text t = { .len = 0 };

		cli_put(&t, "[context: %s]\n", next->name);
		sb_emit(sb, &t);
	}
	if (sb->image_ctx != next) {
		err = ctx_image(next);
		if (err >= 0)
			err = hwt_blk_set_image(sb->dec, next->image);
		if (err < 0)
			return err;
		next->refs++;
		sb_ctx_put(sb, sb->image_ctx);
		sb->image_ctx = next;
	}
	ch->next_ctx = NULL;
	sb_ctx_put(sb, ch->ctx);
	ch->ctx = next;
	return 0;
}

static void prepare_switch(struct cli_sb *sb, struct sb_chan *ch,
			   struct sb_ctx *c)
{
	if (ch->next_ctx == c)
		return;
	/* A newer switch wins over one not made yet. */
	sb_ctx_put(sb, ch->next_ctx);
	ch->next_ctx = NULL;
	if (ch->ctx == c)
		return;
	c->refs++;
	ch->next_ctx = c;
}

static int prepare_switch_to_pid(struct cli_sb *sb, struct sb_chan *ch,
				 uint32_t pid)
{
	struct sb_ctx *c;
	int err = ctx_get(sb, pid, &c);

	if (err < 0)
		return err;
	prepare_switch(sb, ch, c);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Applying records                                                    */
/* ------------------------------------------------------------------ */

static enum sb_abi elf_abi(const char *path)
{
	uint8_t h[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return ABI_UNKNOWN;
	n = read(fd, h, sizeof(h));
	close(fd);
	if (n != (ssize_t)sizeof(h) || memcmp(h, "\177ELF", 4) || h[6] != 1)
		return ABI_UNKNOWN;
	if (h[4] == 2)
		return ABI_X64;
	if (h[4] == 1 && h[18] == 3)		/* EM_386 */
		return ABI_IA32;
	if (h[4] == 1 && h[18] == 62)		/* EM_X86_64 */
		return ABI_X32;
	return ABI_UNKNOWN;
}

static int apply_mmap(struct cli_sb *sb, struct sb_chan *ch,
		      const struct hwt_pd_mmap *m)
{
	const char *path = m->filename;
	char buf[4096];
	struct sb_ctx *c;
	struct stat st;
	int err;

	/* Kernel code is patched at boot: it is decoded from kcore, not
	 * from the files these records name. */
	if ((ch->rec.misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
	    PERF_RECORD_MISC_KERNEL)
		return 0;
	err = ctx_get(sb, m->pid, &c);
	if (err < 0)
		return err;
	if (path[0] == '[') {
		if (strcmp(path, "[vdso]"))
			return SBW_SECTION_LOST;
		path = ch->cfg.vdso[c->abi];
		if (!path)
			return -HWT_ERR_BAD_CONFIG;
	} else if (!strcmp(path, "//anon") || strstr(path, " (deleted)")) {
		/* JIT code, or a file gone since: nothing to read. */
		return SBW_SECTION_LOST;
	} else if (ch->cfg.sysroot) {
		if ((size_t)snprintf(buf, sizeof(buf), "%s%s", ch->cfg.sysroot,
				     path) >= sizeof(buf))
			return -HWT_ERR_OVERFLOW;
		path = buf;
	}
	/* Only regular files: a name from the sideband must not make us
	 * wait on a FIFO or read a device. */
	if (stat(path, &st) || !S_ISREG(st.st_mode) || access(path, R_OK))
		return -HWT_ERR_IO;
	if (c->abi == ABI_UNKNOWN)
		c->abi = elf_abi(path);
	err = sb_maps_add(&c->maps, path, m->pgoff, m->len, m->start, 0);
	if (err < 0)
		return err;
	if (!c->image)
		return 0;
	err = image_add(c->image, &c->maps.v[c->maps.n - 1]);
	/* Errors count in the current context only, as they did when a
	 * context was a list alone, rebuilt into the image on a switch. */
	return sb->image_ctx == c ? err : 0;
}

static int apply_fork(struct cli_sb *sb, const struct hwt_pd_task *k)
{
	struct sb_ctx *c, *parent;
	int err;

	/* A new thread shares its process's context. */
	if (k->ppid == k->pid)
		return 0;
	if (k->pid != k->tid)
		return -HWT_ERR_INTERNAL;
	/* An exit is seen while the process still runs, so contexts go
	 * when their pid comes again. */
	ctx_remove(sb, k->pid);
	err = ctx_get(sb, k->pid, &c);
	if (err < 0)
		return err;
	parent = ctx_find(sb, k->ppid);
	if (!parent)
		return 0;
	/* The child starts with the kernel's mappings and its parent's. */
	return maps_copy(&c->maps, &parent->maps);
}

static int apply_record(struct cli_sb *sb, struct sb_chan *ch)
{
	const struct hwt_pd_record *rec = &ch->rec;
	const struct trailer *tr = &ch->tr;
	struct sb_ctx *c;
	int err;

	switch (rec->type) {
	case PERF_RECORD_ITRACE_START:
		if (!ch->primary)
			return 0;
		err = prepare_switch_to_pid(sb, ch, rec->u.itrace_start.pid);
		if (err < 0 || !ch->next_ctx)
			return err;
		/* Tracing just started: no need to wait for the kernel. */
		return switch_contexts(sb, ch);
	case PERF_RECORD_FORK:
		return apply_fork(sb, &rec->u.task);
	case PERF_RECORD_COMM:
		if (!rec->u.comm.exec)
			return 0;
		/* A new context, not a cleared one: the old one is likely
		 * still in use until the trace reaches the exec. */
		ctx_remove(sb, rec->u.comm.pid);
		err = ctx_get(sb, rec->u.comm.pid, &c);
		if (err < 0 || !ch->primary)
			return err;
		prepare_switch(sb, ch, c);
		return 0;
	case PERF_RECORD_SWITCH:
		if (!ch->primary || rec->u.sw.out)
			return 0;
		if (!(tr->present & HWT_PD_SID_TID))
			return -HWT_ERR_BAD_CONFIG;
		return prepare_switch_to_pid(sb, ch, tr->pid);
	case PERF_RECORD_SWITCH_CPU_WIDE:
		if (!ch->primary)
			return 0;
		if (rec->u.sw.out)
			return prepare_switch_to_pid(sb, ch,
						     rec->u.sw.next_prev_pid);
		/* A switch-in helps if it has the pid; the switch-out
		 * before it had it anyway. */
		if (!(tr->present & HWT_PD_SID_TID))
			return 0;
		return prepare_switch_to_pid(sb, ch, tr->pid);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return apply_mmap(sb, ch, &rec->u.mmap);
	case PERF_RECORD_LOST:
		return SBW_LOST;
	case PERF_RECORD_AUX:
		if (ch->primary && (rec->u.aux.flags & PERF_AUX_FLAG_TRUNCATED))
			return SBW_TRACE_LOST;
		return 0;
	default:
		return 0;
	}
}

/* ------------------------------------------------------------------ */
/* Following the trace between kernel and user space                   */
/* ------------------------------------------------------------------ */

static enum sb_loc loc_of_ip(const struct sb_chan *ch, uint64_t ip)
{
	return ip < ch->cfg.kernel_start ? LOC_USER : LOC_KERNEL;
}

/* Where the trace went after leaving @from with its IP suppressed. */
static enum sb_loc loc_suppressed(enum sb_loc from)
{
	switch (from) {
	case LOC_KERNEL:
	case LOC_LIKELY_KERNEL:
		return LOC_LIKELY_USER;
	case LOC_USER:
	case LOC_LIKELY_USER:
		return LOC_LIKELY_KERNEL;
	default:
		return LOC_UNKNOWN;
	}
}

/* The IP an event names, for the kinds that name one; 0 if none. */
static int event_ip(const struct hwt_event *ev, uint64_t *ip)
{
	switch (ev->type) {
	case HWT_EV_OVERFLOW: *ip = ev->u.overflow.ip; return 1;
	case HWT_EV_EXEC_MODE: *ip = ev->u.exec_mode.ip; return 1;
	case HWT_EV_TSX: *ip = ev->u.tsx.ip; return 1;
	case HWT_EV_EXSTOP: *ip = ev->u.exstop.ip; return 1;
	case HWT_EV_MWAIT: *ip = ev->u.mwait.ip; return 1;
	case HWT_EV_PTWRITE: *ip = ev->u.ptwrite.ip; return 1;
	case HWT_EV_TICK: *ip = ev->u.tick.ip; return 1;
	case HWT_EV_IFLAGS: *ip = ev->u.iflags.ip; return 1;
	case HWT_EV_INTERRUPT: *ip = ev->u.interrupt.ip; return 1;
	case HWT_EV_IRET: *ip = ev->u.iret.ip; return 1;
	case HWT_EV_SMI: *ip = ev->u.smi.ip; return 1;
	case HWT_EV_RSM: *ip = ev->u.rsm.ip; return 1;
	case HWT_EV_INIT: *ip = ev->u.init.ip; return 1;
	case HWT_EV_VMENTRY: *ip = ev->u.vmentry.ip; return 1;
	case HWT_EV_VMEXIT: *ip = ev->u.vmexit.ip; return 1;
	case HWT_EV_SHUTDOWN: *ip = ev->u.shutdown.ip; return 1;
	case HWT_EV_UINTR: *ip = ev->u.uintr.ip; return 1;
	case HWT_EV_UIRET: *ip = ev->u.uiret.ip; return 1;
	default: return 0;
	}
}

static enum sb_loc loc_of_event(const struct sb_chan *ch,
				const struct hwt_event *ev)
{
	uint64_t ip;

	switch (ev->type) {
	case HWT_EV_ENABLED:
		return loc_of_ip(ch, ev->u.enabled.ip);
	case HWT_EV_DISABLED:
		if (!ev->ip_suppressed)
			return loc_of_ip(ch, ev->u.disabled.ip);
		return loc_suppressed(ch->loc);
	case HWT_EV_ASYNC_DISABLED:
		if (!ev->ip_suppressed)
			return loc_of_ip(ch, ev->u.async_disabled.ip);
		return loc_suppressed(loc_of_ip(ch, ev->u.async_disabled.at));
	case HWT_EV_ASYNC_BRANCH:
		return loc_of_ip(ch, ev->u.async_branch.to);
	case HWT_EV_ASYNC_PAGING:
		if (!ev->ip_suppressed)
			return loc_of_ip(ch, ev->u.async_paging.ip);
		return LOC_LIKELY_KERNEL;
	case HWT_EV_PAGING:
		return LOC_LIKELY_KERNEL;
	case HWT_EV_TIP:
		return loc_of_ip(ch, ev->u.tip.ip);
	default:
		if (!ev->ip_suppressed && event_ip(ev, &ip))
			return loc_of_ip(ch, ip);
		return LOC_UNKNOWN;
	}
}

static int in_kernel(enum sb_loc loc)
{
	return loc == LOC_KERNEL || loc == LOC_LIKELY_KERNEL ||
	       loc == LOC_UNKNOWN;
}

int sb_present(struct cli_sb *sb, struct sb_chan *ch,
	       const struct hwt_event *ev)
{
	enum sb_loc old;
	int ret;

	if (ch->have &&
	    (!(ch->tr.present & HWT_PD_SID_TIME) || ch->tsc <= ev->tsc)) {
		ret = apply_record(sb, ch);
		if (ret)
			sb_report(sb, ch, ret);
		return 1;
	}
	old = ch->loc;
	ch->loc = loc_of_event(ch, ev);
	if (!ch->next_ctx)
		return ch->have ? 0 : -HWT_ERR_EOS;
	/* A switch is made in the kernel, or where it is not known that
	 * the trace is not (as right before tracing is enabled). */
	if (in_kernel(old) || in_kernel(ch->loc)) {
		ret = switch_contexts(sb, ch);
		if (ret < 0)
			sb_report(sb, ch, ret);
	}
	return 0;
}

