/* SPDX-License-Identifier: MIT */
/*
 * DOC: fsfail_preload.so, a test shim for file-system failures
 *
 * LD_PRELOAD'ed into smd by tests, it makes file operations under one path
 * fail with a chosen errno, as a full disk (ENOSPC), a read-only mount
 * (EROFS) or a permission problem (EACCES) would. chmod cannot do that in
 * tests run as root, which bypasses permission bits.
 *
 * Environment:
 *   FSFAIL_PATH   prefix of the paths concerned (e.g. the state directory)
 *   FSFAIL_ERRNO  ENOSPC, EROFS, EACCES, EIO, EDQUOT or a number (default ENOSPC)
 *   FSFAIL_OPS    comma list of: open (opens for writing/creating), write,
 *                 fsync (fsync and fdatasync), rename, mkdir (default: all)
 *   FSFAIL_AFTER  write only: let this many bytes through first (a short
 *                 write, then the error), default 0
 *   FSFAIL_SLOW_US  slow mode (nothing fails unless FSFAIL_ERRNO is set
 *                 too): each write under the path writes half its bytes,
 *                 sleeps this long and returns the short count; fsync and
 *                 rename sleep before acting. Widens the window in which a
 *                 kill -9 lands in the middle of a state-file write.
 *   FSFAIL_FLAG   a file outside FSFAIL_PATH: failures happen only while it
 *                 exists (a test removes it: the disk has room again)
 * Reads are never failed. Only file descriptors opened under FSFAIL_PATH
 * are affected by write/fsync.
 */

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define MAX_FD 4096

static unsigned char tracked[MAX_FD];
static size_t written;

static const char *prefix(void)
{
	const char *p = getenv("FSFAIL_PATH");
	return p && *p ? p : NULL;
}

static int under(const char *path)
{
	const char *p = prefix();
	return p && path && !strncmp(path, p, strlen(p));
}

static int op_on(const char *op)
{
	const char *ops = getenv("FSFAIL_OPS");
	size_t n = strlen(op);
	if (!ops || !*ops)
		return 1;
	for (const char *s = ops; s && *s;) {
		const char *c = strchr(s, ',');
		size_t len = c ? (size_t)(c - s) : strlen(s);
		if (len == n && !strncmp(s, op, n))
			return 1;
		s = c ? c + 1 : NULL;
	}
	return 0;
}

static int fail_errno(void)
{
	const char *e = getenv("FSFAIL_ERRNO");
	if (!e || !*e || !strcmp(e, "ENOSPC"))
		return ENOSPC;
	if (!strcmp(e, "EROFS"))
		return EROFS;
	if (!strcmp(e, "EACCES"))
		return EACCES;
	if (!strcmp(e, "EIO"))
		return EIO;
	if (!strcmp(e, "EDQUOT"))
		return EDQUOT;
	return atoi(e) > 0 ? atoi(e) : ENOSPC;
}

static int failing(void)
{
	const char *e = getenv("FSFAIL_ERRNO");
	const char *flag = getenv("FSFAIL_FLAG");
	if (flag && *flag && access(flag, F_OK))
		return 0;   /* the disk has room again */
	return !getenv("FSFAIL_SLOW_US") || (e && *e);
}

static void slow(void)
{
	const char *v = getenv("FSFAIL_SLOW_US");
	if (v && *v)
		usleep((useconds_t)strtoul(v, NULL, 10));
}

static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static int writing(int flags)
{
	return (flags & O_ACCMODE) != O_RDONLY || (flags & O_CREAT) || (flags & O_TRUNC);
}

static int track(int fd, const char *path)
{
	if (fd >= 0 && fd < MAX_FD)
		tracked[fd] = (unsigned char)under(path);
	return fd;
}

static int do_open(const char *sym, int dirfd, const char *path, int flags, mode_t mode)
{
	if (under(path) && writing(flags) && op_on("open") && failing()) {
		errno = fail_errno();
		return -1;
	}
	if (dirfd == -1) {
		int (*real)(const char *, int, ...) = next(sym);
		return track(real(path, flags, mode), path);
	}
	int (*real)(int, const char *, int, ...) = next(sym);
	/* relative paths under a dirfd are not matched: smd uses absolute paths */
	return track(real(dirfd, path, flags, mode), path);
}

#define MODE_ARG(flags, mode)                                       \
	do {                                                        \
		if ((flags) & (O_CREAT | __O_TMPFILE)) {            \
			va_list ap;                                 \
			va_start(ap, flags);                        \
			mode = (mode_t)va_arg(ap, int);             \
			va_end(ap);                                 \
		}                                                   \
	} while (0)

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	MODE_ARG(flags, mode);
	return do_open("open", -1, path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;
	MODE_ARG(flags, mode);
	return do_open("open64", -1, path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	MODE_ARG(flags, mode);
	return do_open("openat", dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	MODE_ARG(flags, mode);
	return do_open("openat64", dirfd, path, flags, mode);
}

int creat(const char *path, mode_t mode)
{
	return open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

int close(int fd)
{
	int (*real)(int) = next("close");
	if (fd >= 0 && fd < MAX_FD)
		tracked[fd] = 0;
	return real(fd);
}

ssize_t write(int fd, const void *buf, size_t count)
{
	ssize_t (*real)(int, const void *, size_t) = next("write");
	if (fd >= 0 && fd < MAX_FD && tracked[fd] && !failing()) {
		ssize_t n = real(fd, buf, count > 1 ? count / 2 : count);
		slow();
		return n;
	}
	if (fd >= 0 && fd < MAX_FD && tracked[fd] && op_on("write")) {
		const char *a = getenv("FSFAIL_AFTER");
		size_t after = a ? strtoul(a, NULL, 10) : 0;
		if (written >= after) {
			errno = fail_errno();
			return -1;
		}
		if (count > after - written)
			count = after - written;
		ssize_t n = real(fd, buf, count);
		if (n > 0)
			written += (size_t)n;
		return n;
	}
	return real(fd, buf, count);
}

static int sync_common(const char *sym, int fd)
{
	int (*real)(int) = next(sym);
	if (fd >= 0 && fd < MAX_FD && tracked[fd] && !failing())
		slow();
	else if (fd >= 0 && fd < MAX_FD && tracked[fd] && op_on("fsync")) {
		errno = fail_errno();
		return -1;
	}
	return real(fd);
}

int fsync(int fd)
{
	return sync_common("fsync", fd);
}

int fdatasync(int fd)
{
	return sync_common("fdatasync", fd);
}

int rename(const char *from, const char *to)
{
	int (*real)(const char *, const char *) = next("rename");
	if ((under(from) || under(to)) && !failing())
		slow();
	else if ((under(from) || under(to)) && op_on("rename")) {
		errno = fail_errno();
		return -1;
	}
	return real(from, to);
}

int mkdir(const char *path, mode_t mode)
{
	int (*real)(const char *, mode_t) = next("mkdir");
	if (under(path) && op_on("mkdir") && failing()) {
		/* an existing directory still reads EEXIST, as on a read-only mount */
		struct stat st;
		errno = stat(path, &st) == 0 ? EEXIST : fail_errno();
		return -1;
	}
	return real(path, mode);
}
