/* SPDX-License-Identifier: MIT */
/*
 * DOC: who may use the control socket (ctl.h smd_ctl_peer_allowed)
 *
 * The socket file is mode 0660 with the configured socket_group, so the
 * kernel already keeps others from connecting; this is the second check,
 * on the credentials the kernel recorded at connect (SO_PEERCRED), so a
 * socket made reachable by mistake (a chmod, a bind mount, a wrong group)
 * still serves only root, smd's own user and the group's members.
 *
 * Group membership: the peer's primary gid, then the supplementary groups
 * of the connecting process as the kernel holds them (/proc/PID/status
 * "Groups:"), trusted only if that process's effective uid ("Uid:" second
 * field) is still the peer's (a pid reused in between would not match);
 * otherwise the groups of the peer's user from the group database
 * (getgrouplist), which is what a new login of that user would have.
 * Pure functions: nothing is logged.
 */
#include "ctl/ctl.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int smd_ctl_group_gid(const char *name, gid_t *gid)
{
	struct group gr, *res = NULL;
	char buf[4096], *end;

	if (!name || !name[0])
		return -ENOENT;
	if (getgrnam_r(name, &gr, buf, sizeof(buf), &res) == 0 && res) {
		*gid = res->gr_gid;
		return 0;
	}
	unsigned long v = strtoul(name, &end, 10);
	if (name[0] >= '0' && name[0] <= '9' && !*end && v < (unsigned long)(gid_t)-1) {
		*gid = (gid_t)v;
		return 0;
	}
	return -ENOENT;
}

/* 1: /proc/PID/status of the peer lists gid; 0: it does not; -1: not usable (gone, uid differs). */
static int proc_in_group(const struct smd_ctl_peer *p, gid_t gid)
{
	char path[64], line[4096];
	int uid_ok = 0, found = -1;
	FILE *f;

	if (p->pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)p->pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long real, eff;
		if (sscanf(line, "Uid: %lu %lu", &real, &eff) == 2) {
			uid_ok = eff == (unsigned long)p->uid;
		} else if (!strncmp(line, "Groups:", 7)) {
			char *s = line + 7, *end;
			found = 0;
			for (;;) {
				unsigned long g = strtoul(s, &end, 10);
				if (end == s)
					break;
				if (g == (unsigned long)gid)
					found = 1;
				s = end;
			}
		}
	}
	fclose(f);
	return uid_ok ? found : -1;
}

static int user_in_group(uid_t uid, gid_t pgid, gid_t gid)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	gid_t groups[256];
	int n = (int)(sizeof(groups) / sizeof(groups[0]));

	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) || !res)
		return 0;
	if (getgrouplist(res->pw_name, pgid, groups, &n) < 0)
		return 0;   /* more than 256 groups: treated as not a member */
	for (int i = 0; i < n; i++)
		if (groups[i] == gid)
			return 1;
	return 0;
}

int smd_ctl_peer_allowed(const struct smd_ctl_peer *p, uid_t self, int have_group, gid_t gid,
			 const char *group_name, char *why, size_t whylen)
{
	if (p->uid == 0 || p->uid == self)
		return 1;
	if (have_group) {
		if (p->gid == gid)
			return 1;
		int r = proc_in_group(p, gid);
		if (r == 1 || (r < 0 && user_in_group(p->uid, p->gid, gid)))
			return 1;
		snprintf(why, whylen, "uid %u is not root, smd's user (uid %u) or a member of group '%s' (gid %u)",
			 (unsigned)p->uid, (unsigned)self, group_name ? group_name : "?", (unsigned)gid);
		return 0;
	}
	snprintf(why, whylen, "uid %u is not root or smd's user (uid %u), and no socket_group is configured",
		 (unsigned)p->uid, (unsigned)self);
	return 0;
}
