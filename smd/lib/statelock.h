/* SPDX-License-Identifier: MIT */
#ifndef SMD_STATELOCK_H
#define SMD_STATELOCK_H
/*
 * DOC: one smd per state directory
 *
 * Two SMs writing one state directory overwrite each other's LID tables
 * (issue 18: two daemons on one directory both ran). Every mode (smd -f,
 * smd --once on one plane or several) takes an exclusive flock(2) on the
 * state directory itself, non-blocking, before it reads a state file, and
 * holds it until it exits (the kernel drops it when the process dies, even
 * on kill -9: no stale lock to clean up). Locking the directory's own fd
 * creates no file in it, and works on a read-only directory.
 */
#include <stddef.h>

/*
 * Lock `dir` (created with sm_state_mkdir(dir, 0750) if missing). Returns
 * the fd holding the lock (close-on-exec; keep it open), -EBUSY with a
 * message naming the directory if another process holds it, or another
 * -errno with a message if the directory cannot be created or opened (the
 * caller may run without the lock: its saves will fail the same way).
 */
int sm_state_lock(const char *dir, char *err, size_t errlen);

#endif
