/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A string built in a caller's buffer, piece by piece (issue 58: each
 * builder wrote its own "snprintf(buf + n, size - n, ...)" and kept n):
 * what does not fit is cut, the text always ends with its NUL, and the
 * builder says it was cut.
 *
 *	char line[256];
 *	struct strbuf b;
 *
 *	strbuf_init(&b, line, sizeof(line));
 *	strbuf_add(&b, "fcrdns:%s", name);
 */
#ifndef GREYGATE_STRBUF_H
#define GREYGATE_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf {
	char *buf;
	size_t size; /* of buf, its NUL included */
	size_t len;  /* the text's, without the NUL */
	bool cut;    /* something did not fit */
};

/* strbuf_init - b builds in buf[0..size) (size > 0), empty. */
void strbuf_init(struct strbuf *b, char *buf, size_t size);

/* strbuf_continue - b builds on after the text buf already holds. */
void strbuf_continue(struct strbuf *b, char *buf, size_t size);

/* strbuf_add - the formatted text after what b holds, cut to fit. */
void strbuf_add(struct strbuf *b, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

#endif
