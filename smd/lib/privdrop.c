/* SPDX-License-Identifier: MIT */
/*
 * DOC: privilege drop (see privdrop.h)
 *
 * Order matters: files are chowned while still root, supplementary groups
 * and GIDs are set before the UID (after it, setgid would be refused).
 * Symlinks are never followed when chowning (a state directory writable by
 * someone else must not give them a way to chown arbitrary files).
 */
#include "lib/privdrop.h"
#include "lib/err.h"
#include "lib/statefile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

static int chown_dir(const char *dir, uid_t uid, gid_t gid, char *err, size_t errlen)
{
	DIR *d;
	struct dirent *de;
	int dfd, rc = 0;

	rc = sm_state_mkdir(dir, 0750, err, errlen);   /* with its missing parents (0755) */
	if (rc)
		return rc;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (dfd < 0) {
		rc = -errno;
		sm_errf(err, errlen, "state directory %s: %s", dir, strerror(-rc));
		return rc;
	}
	if (fchown(dfd, uid, gid)) {
		rc = -errno;
		sm_errf(err, errlen, "chown %s: %s", dir, strerror(-rc));
		close(dfd);
		return rc;
	}
	d = fdopendir(dfd);
	if (!d) {
		rc = -errno;
		close(dfd);
		sm_errf(err, errlen, "%s: %s", dir, strerror(-rc));
		return rc;
	}
	while ((de = readdir(d))) {
		struct stat st;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (fchownat(dfd, de->d_name, uid, gid, AT_SYMLINK_NOFOLLOW)) {
			rc = -errno;
			sm_errf(err, errlen, "chown %s/%s: %s", dir, de->d_name, strerror(-rc));
			break;
		}
	}
	closedir(d);
	return rc;
}

int smd_priv_drop(const char *user, const char *group, const char *state_dir, const char *socket,
		  char *err, size_t errlen)
{
	struct passwd *pw = NULL;
	struct group *gr = NULL;
	uid_t uid = getuid();
	gid_t gid = getgid();
	int rc;

	if (!user && !group)
		return 0;
	if (user) {
		pw = getpwnam(user);
		if (!pw) {
			sm_errf(err, errlen, "user '%s': no such user", user);
			return -ENOENT;
		}
		uid = pw->pw_uid;
		gid = pw->pw_gid;
	}
	if (group) {
		gr = getgrnam(group);
		if (!gr) {
			sm_errf(err, errlen, "group '%s': no such group", group);
			return -ENOENT;
		}
		gid = gr->gr_gid;
	}
	if (geteuid() != 0) {
		if (geteuid() == uid && getegid() == gid)
			return 0;   /* started as that user already */
		sm_errf(err, errlen, "cannot switch to %s:%s: not started as root", user ? user : "-",
			  group ? group : "-");
		return -EPERM;
	}
	if (state_dir && (rc = chown_dir(state_dir, uid, gid, err, errlen)))
		return rc;
	/*
	 * The socket: to the user; its group stays the one the server gave it
	 * (socket_group: its members connect through the file's mode), and
	 * only a socket still in the group it was created with (ours: no
	 * socket_group) gets the new gid.
	 */
	struct stat sst;
	if (socket && lstat(socket, &sst) == 0 && S_ISSOCK(sst.st_mode) &&
	    lchown(socket, uid, sst.st_gid == getegid() ? gid : (gid_t)-1)) {
		rc = -errno;
		sm_errf(err, errlen, "chown %s: %s", socket, strerror(-rc));
		return rc;
	}
	if (pw ? initgroups(pw->pw_name, gid) : setgroups(1, &gid)) {
		rc = -errno;
		sm_errf(err, errlen, "setting supplementary groups: %s", strerror(-rc));
		return rc;
	}
	if (setresgid(gid, gid, gid)) {
		rc = -errno;
		sm_errf(err, errlen, "setresgid(%u): %s", (unsigned)gid, strerror(-rc));
		return rc;
	}
	if (setresuid(uid, uid, uid)) {
		rc = -errno;
		sm_errf(err, errlen, "setresuid(%u): %s", (unsigned)uid, strerror(-rc));
		return rc;
	}
	if (uid != 0 && (setuid(0) == 0 || seteuid(0) == 0)) {
		sm_errf(err, errlen, "root could be regained after the switch to UID %u", (unsigned)uid);
		return -EPERM;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		rc = -errno;
		sm_errf(err, errlen, "PR_SET_NO_NEW_PRIVS: %s", strerror(-rc));
		return rc;
	}
	return 0;
}
