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


#endif
