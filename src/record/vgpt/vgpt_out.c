/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Output files and the sideband.
 *
 * All files are opened O_APPEND: the sideband is shared with forked
 * children, and an image after execve continues the files of the one
 * before (@append), so our bytes start at the file's end (base).
 *
 * A write error (a full disk, a file size limit) is reported once, with
 * the file's name, and ends that file: it is cut back to the last whole
 * buffer written, which ends on a packet (or line) boundary, so what is
 * there stays decodable. The program runs on.
 */
#include "vgpt.h"

#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"

/* Not in the tool headers, but in the core this tool links (3.15 on):
 * truncate and taking back the SIGXFSZ a file size limit sends need a
 * syscall. */
extern SysRes VG_(do_syscall)(UWord sysno, RegWord a1, RegWord a2,
			      RegWord a3, RegWord a4, RegWord a5, RegWord a6,
			      RegWord a7, RegWord a8);

enum { SB_BUF = 1 << 14 };

/* The sideband: one file shared with forked children (they inherit the
 * open file), appended to in whole lines. */
static struct vgpt_file *sb_file;
static HChar *sb_buf;
static UInt sb_len;

HChar *vgpt_path(const HChar *fmt, ...)
{
	HChar *p = VG_(malloc)("vgpt.path", VKI_PATH_MAX);
	va_list vargs;

	va_start(vargs, fmt);
	VG_(vsnprintf)(p, VKI_PATH_MAX, fmt, vargs);
	va_end(vargs);
	return p;
}

/*
 * Files are opened for each write and closed again: Valgrind keeps only a
 * dozen descriptors out of the client's reach, too few for a file per
 * thread, and a client may close or dup2 over any other. A write is a
 * whole buffer (16 KiB or more), so the two more syscalls cost little.
 */
static Int reopen(const HChar *path, Int flags)
{
	SysRes r = VG_(open)(path, flags | VKI_O_WRONLY | VKI_O_APPEND, 0644);

	return sr_isError(r) ? -(Int)sr_Err(r) : (Int)sr_Res(r);
}

/* @append: keep what the file has. */
struct vgpt_file *vgpt_file_open(const HChar *path, Bool append)
{
	struct vgpt_file *f = VG_(calloc)("vgpt.file", 1, sizeof(*f));
	Int fd = reopen(path, VKI_O_CREAT | (append ? 0 : VKI_O_TRUNC));

	if (fd < 0) {
		VG_(umsg)("vgpt: cannot create %s\n", path);
		VG_(exit)(1);
	}
	f->path = VG_(strdup)("vgpt.path", path);
	f->base = (ULong)VG_(lseek)(fd, 0, VKI_SEEK_END);
	VG_(close)(fd);
	return f;
}

static const HChar *errname(Int err)
{
	switch (err) {
	case VKI_ENOSPC:
		return "no space left on device";
	case VKI_EFBIG:
		return "file too large";
	case VKI_EIO:
		return "input/output error";
	default:
		return "write error";
	}
}

/* A file size limit also sends SIGXFSZ, which would kill the program
 * when Valgrind unblocks it: take it back, the error is reported. */
static void drop_sigxfsz(void)
{
	vki_sigset_t set;
	struct vki_timespec zero = { 0, 0 };

	VG_(memset)(&set, 0, sizeof(set));
	set.sig[0] = 1UL << (VKI_SIGXFSZ - 1);
	VG_(do_syscall)(__NR_rt_sigtimedwait, (RegWord)&set, 0,
			(RegWord)&zero, sizeof(set), 0, 0, 0, 0);
}

void vgpt_file_truncate(struct vgpt_file *f, ULong size)
{
	VG_(do_syscall)(__NR_truncate, (RegWord)f->path,
			(RegWord)(f->base + size), 0, 0, 0, 0, 0, 0);
	f->size = size;
}

static void write_failed(struct vgpt_file *f, Int err, ULong lost)
{
	f->failed = True;
	if (err == VKI_EFBIG)
		drop_sigxfsz();
	/* Cut back to the last whole buffer (not the sideband: other
	 * processes append to it). */
	if (!f->shared)
		vgpt_file_truncate(f, f->size);
	vgpt_stat_lost += lost;
	VG_(umsg)("vgpt: cannot write %s: %s; it ends at byte %llu, "
		  "nothing more is written to it\n", f->path, errname(err),
		  f->base + f->size);
}

void vgpt_file_write(struct vgpt_file *f, const void *p, ULong n)
{
	const UChar *b = p;
	ULong done = 0;
	Int fd;

	if (f->failed) {
		vgpt_stat_lost += n;
		return;
	}
	fd = reopen(f->path, 0);
	if (fd < 0) {
		write_failed(f, -fd, n);
		return;
	}
	while (done < n) {
		ULong k = n - done > (1U << 30) ? 1U << 30 : n - done;
		Int w = VG_(write)(fd, b + done, (Int)k);

		if (w == -VKI_EINTR)
			continue;
		if (w <= 0) {
			VG_(close)(fd);
			write_failed(f, w ? -w : VKI_ENOSPC, n);
			return;
		}
		done += (ULong)w;
	}
	VG_(close)(fd);
	f->size += n;
}

void vgpt_file_close(struct vgpt_file *f)
{
	VG_(free)(f->path);
	VG_(free)(f);
}

/* ------------------------------------------------------------------ */
/* Sideband                                                            */
/* ------------------------------------------------------------------ */

void vgpt_sb_open(Bool append)
{
	HChar *path = vgpt_path("%s.sb", vgpt_clo_out);

	sb_buf = VG_(malloc)("vgpt.sb", SB_BUF);
	sb_file = vgpt_file_open(path, append);
	sb_file->shared = True;
	VG_(free)(path);
}

void vgpt_sb_flush(void)
{
	if (sb_len && sb_file)
		vgpt_file_write(sb_file, sb_buf, sb_len);
	sb_len = 0;
}

/* A forked child: what is buffered is the parent's to write. */
void vgpt_sb_forget(void)
{
	sb_len = 0;
}

/* One sideband line (no newline in @fmt). */
void vgpt_sb_line(const HChar *fmt, ...)
{
	va_list vargs;
	UInt n;

	if (sb_len > SB_BUF - 1024)
		vgpt_sb_flush();
	va_start(vargs, fmt);
	n = VG_(vsnprintf)(sb_buf + sb_len, SB_BUF - 1 - sb_len, fmt, vargs);
	va_end(vargs);
	sb_len += n;
	if (sb_len > SB_BUF - 2)
		sb_len = SB_BUF - 2;
	sb_buf[sb_len++] = '\n';
}
