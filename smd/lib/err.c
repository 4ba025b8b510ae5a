/* SPDX-License-Identifier: MIT */
/* DOC: error messages and notes (see err.h). */
#include "lib/err.h"

#include <stdio.h>
#include <string.h>

void sm_errf(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

int sm_errf_rc(int rc, char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return rc;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return rc;
}

void sm_vappendf(char *buf, size_t size, const char *fmt, va_list ap)
{
	size_t n;

	if (!buf || !size)
		return;
	n = strnlen(buf, size);
	if (n + 1 >= size)
		return;
	vsnprintf(buf + n, size - n, fmt, ap);
}

void sm_notef(sm_note_fn *fn, void *arg, const char *fmt, ...)
{
	char buf[640];
	va_list ap;

	if (!fn)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fn(arg, buf);
}
