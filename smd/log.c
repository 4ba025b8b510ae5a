/* SPDX-License-Identifier: MIT */
/* DOC: logging to stderr/journald; see log.h. */
#include "log.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *log_prog = "smd";
/* read by every thread that logs, written by a config reload: atomic */
static atomic_int log_lvl = SM_LOG_NOTICE;
static atomic_int log_journal = -1;

void sm_log_init(const char *prog, int level)
{
	log_prog = prog ? prog : "smd";
	atomic_store(&log_lvl, level);
	atomic_store(&log_journal, getenv("JOURNAL_STREAM") != NULL);
}

void sm_log_set_level(int level)
{
	atomic_store(&log_lvl, level);
}

int sm_log_level(void)
{
	return atomic_load(&log_lvl);
}

void sm_log(int level, const char *id, const char *fmt, ...)
{
	static const char *const names[] = { "", "", "", "error", "warning", "notice", "info", "debug" };
	char buf[2048];
	va_list ap;

	if (level > atomic_load(&log_lvl))
		return;
	if (atomic_load(&log_journal) < 0)
		atomic_store(&log_journal, getenv("JOURNAL_STREAM") != NULL);
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (atomic_load(&log_journal))
		fprintf(stderr, "<%d>%s: %s\n", level, id ? id : "", buf);
	else
		fprintf(stderr, "%s: %s%s%s: %s\n", log_prog, names[level & 7], id ? " " : "",
			id ? id : "", buf);
}
