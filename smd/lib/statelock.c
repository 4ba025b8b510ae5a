/* SPDX-License-Identifier: MIT */
/*
 * DOC: state directory lock (see statelock.h)
 *
 * flock(2) rather than fcntl(2) locks: a flock belongs to the open file
 * description, so no other fd of the process (a state file opened and
 * closed while saving) can drop it, and threads share it.
 */
#include "lib/statelock.h"
#include "lib/statefile.h"
#include "lib/err.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

int sm_state_lock(const char *dir, char *err, size_t errlen)
{
	int fd, rc;

	rc = sm_state_mkdir(dir, 0750, err, errlen);
	if (rc)
		return rc;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		sm_errf(err, errlen, "state directory %s: %s", dir, strerror(-rc));
		return rc;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		rc = -errno;
		close(fd);
		if (rc == -EWOULDBLOCK) {
			sm_errf(err, errlen,
				"state directory %s is in use by another smd (a daemon or smd --once); "
				"two SMs on one state directory would overwrite each other's LIDs: stop it, or give "
				"another --state-dir", dir);
			return -EBUSY;
		}
		sm_errf(err, errlen, "state directory %s: cannot lock: %s", dir, strerror(-rc));
		return rc;
	}
	return fd;
}
