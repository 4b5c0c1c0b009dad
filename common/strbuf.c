// SPDX-License-Identifier: GPL-2.0-or-later
/* Strings built in place (strbuf.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "strbuf.h"

void
strbuf_init(struct strbuf *b, char *buf, size_t size)
{
	*b = (struct strbuf){buf, size, 0, false};
	buf[0] = 0;
}

void
strbuf_continue(struct strbuf *b, char *buf, size_t size)
{
	*b = (struct strbuf){buf, size, strnlen(buf, size), false};
	if (b->len == size) { /* (no NUL in it: its last byte becomes one) */
		b->len = size - 1;
		buf[b->len] = 0;
		b->cut = true;
	}
}

void
strbuf_add(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->len + 1 >= b->size) {
		b->cut = true;
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(b->buf + b->len, b->size - b->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return; /* (an encoding error: nothing added) */
	if ((size_t)n >= b->size - b->len) {
		b->len = b->size - 1;
		b->cut = true;
	} else {
		b->len += (size_t)n;
	}
}
