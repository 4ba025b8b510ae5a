/* SPDX-License-Identifier: MIT */
#ifndef SMD_CTL_PRIV_H
#define SMD_CTL_PRIV_H
/* DOC: what server.c and client.c share besides ctl.h (proto.c). */
#include <stddef.h>
#include <sys/un.h>

int smd_ctl_set_nonblock(int fd);   /* 0 or -errno */
/* sa for path: 0, or -EINVAL ("socket path ... is empty or longer than N bytes"). */
int smd_ctl_fill_addr(struct sockaddr_un *sa, const char *path, char *err, size_t errlen);

#endif
