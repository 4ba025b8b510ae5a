/* SPDX-License-Identifier: MIT */
/*
 * DOC: logging to stderr/journald; see log.h.
 *
 * "<N>" prefixes are for journald only: systemd sets JOURNAL_STREAM to the
 * "DEV:INODE" of the stream it connected to stderr, and the prefixes are
 * used only when stderr is still that stream (a shell under a unit that
 * redirects `smd ... 2>file` inherits the variable but not the stream; the
 * file gets plain lines). Decided once, at sm_log_init() or the first line.
 *
 * One message is one line: control bytes (a newline, an escape sequence)
 * are written as \n, \r, \t or \xNN and a backslash as \\, so a string
 * from outside (an engine name or a path in a control request, a node
 * description) can neither forge a second line nor drive the terminal.
 */
#include "lib/log.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *log_prog = "smd";
/* read by every thread that logs, written by a config reload: atomic */
static atomic_int log_lvl = SM_LOG_NOTICE;
static atomic_int log_journal = -1;

/* Is stderr the journal stream systemd gave us? */
static int stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	uintmax_t dev, ino;
	struct stat st;
	char tail;

	if (!e || sscanf(e, "%ju:%ju%c", &dev, &ino, &tail) != 2)
		return 0;
	if (fstat(2, &st))
		return 0;
	return (uintmax_t)st.st_dev == dev && (uintmax_t)st.st_ino == ino;
}

void sm_log_init(const char *prog, int level)
{
	log_prog = prog ? prog : "smd";
	atomic_store(&log_lvl, level);
	atomic_store(&log_journal, stderr_is_journal());
}

void sm_log_set_level(int level)
{
	atomic_store(&log_lvl, level);
}

int sm_log_level(void)
{
	return atomic_load(&log_lvl);
}

/* src as one printable line into dst (see the DOC); cut at a whole escape. */
static void escape_line(char *dst, size_t dlen, const char *src)
{
	size_t o = 0;

	for (const unsigned char *s = (const unsigned char *)src; *s; s++) {
		char e[5];
		size_t n;
		if (*s == '\\' || *s == '\n' || *s == '\r' || *s == '\t')
			n = (size_t)snprintf(e, sizeof(e), "\\%c", *s == '\\' ? '\\' : *s == '\n' ? 'n' : *s == '\r' ? 'r' : 't');
		else if (*s < 0x20 || *s == 0x7f)
			n = (size_t)snprintf(e, sizeof(e), "\\x%02x", *s);
		else
			e[0] = (char)*s, n = 1;
		if (o + n >= dlen)
			break;
		memcpy(dst + o, e, n);
		o += n;
	}
	dst[o] = '\0';
}

void sm_log(int level, const char *id, const char *fmt, ...)
{
	static const char *const names[] = { "", "", "", "error", "warning", "notice", "info", "debug" };
	char raw[2048], buf[2048];
	va_list ap;

	if (level > atomic_load(&log_lvl))
		return;
	if (atomic_load(&log_journal) < 0)
		atomic_store(&log_journal, stderr_is_journal());
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	escape_line(buf, sizeof(buf), raw);
	if (atomic_load(&log_journal))
		fprintf(stderr, "<%d>%s: %s\n", level, id ? id : "", buf);
	else
		fprintf(stderr, "%s: %s%s%s: %s\n", log_prog, names[level & 7], id ? " " : "",
			id ? id : "", buf);
}
