/* SPDX-License-Identifier: MIT */
#ifndef SMD_LOG_H
#define SMD_LOG_H
/*
 * DOC: logging
 *
 * One line per message on stderr: "smd[ID]: text". Each message has a
 * stable ID (e.g. "SMD-0101") so admins can grep and the man page can list
 * them. Under systemd (stderr is the stream JOURNAL_STREAM names) lines
 * are prefixed "<N>" so journald picks the level. Only programs (smd, smctl) log; library code
 * returns errors to its caller.
 */
#include <stdarg.h>

enum sm_log_level { SM_LOG_ERR = 3, SM_LOG_WARN = 4, SM_LOG_NOTICE = 5, SM_LOG_INFO = 6, SM_LOG_DEBUG = 7 };

void sm_log_init(const char *prog, int level);
void sm_log_set_level(int level);
int sm_log_level(void);
void sm_log(int level, const char *id, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define sm_err(id, ...) sm_log(SM_LOG_ERR, id, __VA_ARGS__)
#define sm_warn(id, ...) sm_log(SM_LOG_WARN, id, __VA_ARGS__)
#define sm_notice(id, ...) sm_log(SM_LOG_NOTICE, id, __VA_ARGS__)
#define sm_info(id, ...) sm_log(SM_LOG_INFO, id, __VA_ARGS__)
#define sm_debug(id, ...) sm_log(SM_LOG_DEBUG, id, __VA_ARGS__)

#endif
