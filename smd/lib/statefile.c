/* SPDX-License-Identifier: MIT */
/*
 * DOC: atomic state-file writer (see statefile.h)
 *
 * The steps, each of which may fail: mkdir of the directory (if missing),
 * open of the temp file (EACCES, EROFS, ENOSPC for the inode), write
 * (ENOSPC, EDQUOT, EIO), fsync (ENOSPC/EIO on delayed allocation), rename
 * (EROFS, EXDEV never: same directory), fsync of the directory. The first
 * four leave the target alone; a failed directory fsync after the rename
 * is reported, the new file being in place but maybe not yet durable.
 */
#include "lib/statefile.h"
#include "lib/err.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Remove PATH.tmp.PID files whose writer is gone (killed mid-write); a live writer's is left alone. */
static void remove_leftovers(const char *dir, const char *base, const char *mine)
{
	char prefix[512], full[4400];
	size_t plen;
	DIR *d;
	struct dirent *de;

	if ((size_t)snprintf(prefix, sizeof(prefix), "%s.tmp.", base) >= sizeof(prefix))
		return;
	plen = strlen(prefix);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		long pid;
		if (strncmp(de->d_name, prefix, plen) || !strcmp(de->d_name, mine))
			continue;
		pid = strtol(de->d_name + plen, &end, 10);
		if (*end || pid <= 0 || !(kill((pid_t)pid, 0) && errno == ESRCH))
			continue;
		if ((size_t)snprintf(full, sizeof(full), "%s/%s", dir, de->d_name) < sizeof(full))
			unlink(full);
	}
	closedir(d);
}

int sm_state_mkdir(const char *dir, mode_t mode, char *err, size_t errlen)
{
	char buf[4096];
	struct stat st;
	size_t len = strlen(dir);

	if (!len || len >= sizeof(buf)) {
		sm_errf(err, errlen, "%s: bad directory name", dir);
		return len ? -ENAMETOOLONG : -EINVAL;
	}
	if (!stat(dir, &st)) {
		if (S_ISDIR(st.st_mode))
			return 0;   /* an existing directory keeps its mode */
		sm_errf(err, errlen, "%s: not a directory", dir);
		return -ENOTDIR;
	}
	memcpy(buf, dir, len + 1);
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = '\0';
	/* each missing parent, from the top: 0755, so the path can be walked */
	for (char *s = buf + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST) {
			int rc = -errno;
			sm_errf(err, errlen, "%s: cannot create the directory %s: %s", dir, buf,
				strerror(-rc));
			return rc;
		}
		*s = '/';
	}
	if (mkdir(buf, mode) && errno != EEXIST) {
		int rc = -errno;
		sm_errf(err, errlen, "%s: cannot create the directory: %s", dir, strerror(-rc));
		return rc;
	}
	return 0;
}

int sm_state_write(const char *path, const void *data, size_t len, mode_t mode, char *err,
		   size_t errlen)
{
	char dir[4096], tmp[4200];
	const char *base, *step;
	const char *p = data;
	int fd, rc = 0;

	if (strlen(path) >= sizeof(dir)) {
		sm_errf(err, errlen, "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(dir, path);
	char *slash = strrchr(dir, '/');
	if (slash == dir) {
		dir[1] = '\0';
		base = path + 1;
	} else if (slash) {
		*slash = '\0';
		base = path + (slash - dir) + 1;
	} else {
		strcpy(dir, ".");
		base = path;
	}
	rc = sm_state_mkdir(dir, 0750, err, errlen);
	if (rc)
		return rc;
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	step = "create";
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0) {
		rc = -errno;
		sm_errf(err, errlen, "%s: cannot write (create %s: %s); the previous file is kept", path,
		       tmp, strerror(-rc));
		return rc;
	}
	step = "chmod";
	if (fchmod(fd, mode))
		rc = -errno;
	step = rc ? step : "write";
	while (!rc && len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
		} else if (n == 0) {
			rc = -EIO;
		} else {
			p += n;
			len -= (size_t)n;
		}
	}
	if (!rc) {
		step = "fsync";
		if (fsync(fd))
			rc = -errno;
	}
	if (close(fd) && !rc) {
		step = "close";
		rc = -errno;
	}
	if (!rc) {
		step = "rename";
		if (rename(tmp, path))
			rc = -errno;
	}
	if (rc) {
		sm_errf(err, errlen, "%s: cannot write (%s of %s: %s); the previous file is kept", path, step,
		       tmp, strerror(-rc));
		unlink(tmp);
		return rc;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		/* the rename is durable only once the directory is */
		if (fsync(fd))
			rc = -errno;
		close(fd);
	}
	if (rc) {
		sm_errf(err, errlen, "%s: written, but the fsync of directory %s failed: %s", path, dir,
		       strerror(-rc));
		return rc;
	}
	remove_leftovers(dir, base, tmp + (base - path));
	return 0;
}

uint32_t sm_state_crc32(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint32_t c = 0xffffffffu, tab[256];

	/* the byte table costs 2k steps: cheaper than keeping global state for a file-sized input */
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t v = i;
		for (int k = 0; k < 8; k++)
			v = (v >> 1) ^ (0xedb88320u & -(v & 1));
		tab[i] = v;
	}
	while (len--)
		c = tab[(c ^ *p++) & 0xff] ^ (c >> 8);
	return ~c;
}

size_t sm_state_header(char *hdr, const void *body, size_t blen)
{
	int n = snprintf(hdr, SM_STATE_HDR_MAX, SM_STATE_MAGIC "%d crc32=%08x\n", SM_STATE_VERSION,
			 sm_state_crc32(body, blen));
	return n > 0 ? (size_t)n : 0;
}

int sm_state_check(const char *buf, size_t len, const char *name, size_t *body_off, char *err,
		   size_t errlen)
{
	const char *nul = memchr(buf, '\0', len);
	size_t mlen = strlen(SM_STATE_MAGIC);

	if (nul) {
		unsigned line = 1;
		for (const char *p = buf; p < nul; p++)
			line += *p == '\n';
		sm_errf(err, errlen, "%s:%u: NUL byte at offset %zu: the file is damaged (refused, not read as empty)",
			name, line, (size_t)(nul - buf));
		return -EINVAL;
	}
	if (len < mlen || memcmp(buf, SM_STATE_MAGIC, mlen))
		return 0;
	const char *eol = memchr(buf, '\n', len);
	unsigned ver = 0, crc = 0;
	int used = 0;
	char line[SM_STATE_HDR_MAX + 1];
	size_t hl = eol ? (size_t)(eol - buf) : len;
	if (hl > SM_STATE_HDR_MAX) {
		sm_errf(err, errlen, "%s:1: smd-state header too long: the file is damaged", name);
		return -EINVAL;
	}
	memcpy(line, buf, hl);
	line[hl] = '\0';
	if (sscanf(line + mlen, "%u%n", &ver, &used) != 1) {
		sm_errf(err, errlen, "%s:1: bad smd-state header: the file is damaged", name);
		return -EINVAL;
	}
	if (ver != SM_STATE_VERSION) {
		sm_errf(err, errlen, "%s:1: smd-state version %u, this smd reads version %d (written by a newer smd?)",
			name, ver, SM_STATE_VERSION);
		return -EINVAL;
	}
	const char *p = line + mlen + used;
	if (strncmp(p, " crc32=", 7) || strlen(p + 7) != 8 || sscanf(p + 7, "%8x", &crc) != 1 ||
	    strspn(p + 7, "0123456789abcdefABCDEF") != 8) {
		sm_errf(err, errlen, "%s:1: bad smd-state header (no crc32=XXXXXXXX): the file is damaged", name);
		return -EINVAL;
	}
	if (!eol) {
		sm_errf(err, errlen, "%s:1: smd-state header without an end of line: the file is truncated", name);
		return -EINVAL;
	}
	size_t off = hl + 1;
	uint32_t got = sm_state_crc32(buf + off, len - off);
	if (got != crc) {
		sm_errf(err, errlen, "%s:1: checksum mismatch (header crc32=%08x, content %08x): the file is damaged",
			name, crc, got);
		return -EINVAL;
	}
	*body_off = off;
	return 1;
}

int sm_state_read(const char *path, size_t max, char **bufp, size_t *lenp, char *err, size_t errlen)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int fd, rc = 0;

	*bufp = NULL;
	*lenp = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		rc = -errno;
		sm_errf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st)) {
		rc = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		sm_errf(err, errlen, "%s: not a regular file", path);
		return -EINVAL;
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		sm_errf(err, errlen, "%s: %lld bytes, more than a state file holds (%zu)", path,
			(long long)st.st_size, max);
		return -EFBIG;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		rc = -ENOMEM;
		goto fail;
	}
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			goto fail;
		}
		if (n == 0)
			break;   /* shrank under us: what was read is checked like any content */
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	return 0;
fail:
	free(buf);
	close(fd);
	sm_errf(err, errlen, "%s: %s", path, strerror(-rc));
	return rc;
}
