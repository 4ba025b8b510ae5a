/* SPDX-License-Identifier: MIT */
#ifndef SMD_LIB_ERR_H
#define SMD_LIB_ERR_H
/*
 * DOC: error messages and notes, the one convention (STYLE.md 4)
 *
 * Library code returns 0 or a negative errno and, where the caller gave a
 * buffer, a one-line message in it; it never logs. A note is a message a
 * library hands to its caller's sink (sm_note_fn) for the caller to log.
 * Every helper accepts a NULL buffer or sink and then does nothing.
 */
#include <stdarg.h>
#include <stddef.h>

/* A sink for notes (the program decides where they go: log, report, nowhere). */
typedef void sm_note_fn(void *arg, const char *msg);

/* Format into err (err may be NULL or len 0: nothing is written). */
void sm_errf(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same, returning rc: `return sm_errf_rc(-EINVAL, err, len, "...")`. */
int sm_errf_rc(int rc, char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Append to the NUL-terminated text already in buf (after a "FILE:LINE: " prefix, say). */
void sm_vappendf(char *buf, size_t size, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
/* Format a note and hand it to fn (fn may be NULL). */
void sm_notef(sm_note_fn *fn, void *arg, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
