/* SPDX-License-Identifier: MIT */
#ifndef SMD_PRIVDROP_H
#define SMD_PRIVDROP_H
/*
 * DOC: dropping root (the daemon's `user:` / `group:`)
 *
 * smd starts as root because opening /dev/infiniband/umadN and issmN needs
 * it on a default install. Once the daemon has opened its transports (its
 * first cycle), its control socket and its state directory, it switches
 * to the configured user and group for good: the state directory, the
 * regular files directly in it and the control socket are given to that
 * user (so it keeps saving state and can remove the socket; the socket
 * keeps a group other than the one it was created with, i.e. the
 * socket_group the server gave it, else gets the new group), supplementary
 * groups become the user's (initgroups: a group such as "rdma" that grants
 * device access carries over), then the real, effective and saved GIDs and
 * UIDs are set. Leaving UID 0 clears every capability; PR_SET_NO_NEW_PRIVS
 * then forbids regaining any through exec. Success is checked: setuid(0)
 * must fail afterwards.
 *
 * Not thread-specific: glibc applies set*id to every thread of the process.
 */
#include <stddef.h>

/*
 * Drop to user/group (either may be NULL: group NULL = the user's primary
 * group; user NULL = keep the UID, change only the group). chown targets:
 * state_dir (may be NULL) and its regular files, socket (may be NULL).
 * Returns 0, or a negative errno with a message (the process may then be
 * half-way: the caller must stop).
 */
int smd_priv_drop(const char *user, const char *group, const char *state_dir, const char *socket,
		  char *err, size_t errlen);

#endif
