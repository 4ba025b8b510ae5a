/* SPDX-License-Identifier: MIT */
#ifndef SMD_STATEFILE_H
#define SMD_STATEFILE_H
/*
 * DOC: state files (written atomically)
 *
 * Everything smd keeps across restarts (guid2lid, plane-lids, keys) is
 * written through sm_state_write(): the new content goes to PATH.tmp.PID
 * (created with the requested mode, fchmod'ed so the umask cannot widen or
 * narrow it), is fsync'ed, renamed over PATH, and the directory is fsync'ed
 * so the rename itself is durable.
 *
 * Invariants, whatever fails and whenever the process is killed:
 *  - PATH is either the complete previous file or the complete new one,
 *    never a truncated or partial file (rename(2) is atomic);
 *  - on an error return the temp file has been removed and PATH is
 *    untouched; the message names PATH, the step that failed and errno's
 *    text (ENOSPC, EROFS, EACCES, EIO...);
 *  - a process killed with SIGKILL can leave a PATH.tmp.PID behind; the
 *    next successful write of PATH removes such leftovers.
 *
 * All I/O goes through open/write/fsync/rename (not stdio), so a test
 * LD_PRELOAD shim (tests/fsfail_preload.c) can make any step fail.
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Replace `path` with `len` bytes of `data`, atomically and durably, the
 * new file having exactly `mode`. Creates the parent directory with
 * sm_state_mkdir(dir, 0750) if missing. Returns 0 or a negative errno with
 * a message in err.
 */
int sm_state_write(const char *path, const void *data, size_t len, mode_t mode, char *err,
		   size_t errlen);

/*
 * Create directory `dir` with `mode` (umask applies) and every missing
 * parent with 0755, like mkdir -p. An existing directory, its parents
 * included, is left as it is (mode untouched). 0 or -errno with err.
 */
int sm_state_mkdir(const char *dir, mode_t mode, char *err, size_t errlen);

/*
 * Sealed state files. A state file smd writes starts with one header line
 *     # smd-state v1 crc32=XXXXXXXX
 * where XXXXXXXX is the CRC-32 (IEEE 802.3, as zlib's crc32()) in hex of
 * every byte after that line. The header is a comment for readers that
 * know the format (OpenSM's guid2lid parser skips it as an invalid key),
 * so the file stays in the format it had. A damaged file (a flipped bit,
 * a file of zeros, a truncation, a second file pasted in) fails the
 * check and is refused, never read as an empty table.
 */
#define SM_STATE_MAGIC "# smd-state v"
#define SM_STATE_VERSION 1
#define SM_STATE_HDR_MAX 64

uint32_t sm_state_crc32(const void *data, size_t len);

/* Write the header line for `body` into hdr (SM_STATE_HDR_MAX bytes); returns its length. */
size_t sm_state_header(char *hdr, const void *body, size_t blen);

/*
 * Check a whole file's content. Returns 1 and *body_off (the offset of the
 * first byte after the header line) if the file is sealed and intact; 0 if
 * it has no header (an older smd's file or another program's: the caller
 * decides whether to accept it) and no NUL byte; -EINVAL with
 * "NAME:LINE: reason" in err if it is damaged: NUL bytes (a file of
 * zeros), an unknown version, a checksum that does not match.
 */
int sm_state_check(const char *buf, size_t len, const char *name, size_t *body_off, char *err,
		   size_t errlen);

/*
 * Read a whole state file (at most `max` bytes) into a malloc'ed,
 * NUL-terminated buffer. 0, -ENOENT, -EFBIG, other -errno with err.
 */
int sm_state_read(const char *path, size_t max, char **buf, size_t *len, char *err, size_t errlen);


#endif
