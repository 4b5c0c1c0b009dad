// SPDX-License-Identifier: GPL-2.0-or-later
/* An SMTP reply's lines, end and code (see smtp_reply.h). */
#include <strings.h>

#include "smtp_line.h"
#include "smtp_reply.h"

static inline int
digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : -1;
}

enum smtp_reply_line_kind
smtp_reply_line(const char *line, size_t len, int *code)
{
	int a, b, c;

	*code = 0;
	if (len < 3)
		return SMTP_REPLY_BAD;
	a = digit(line[0]);
	b = digit(line[1]);
	c = digit(line[2]);
	if (a < 0 || b < 0 || c < 0 ||
	    (len > 3 && line[3] != ' ' && line[3] != '-'))
		return SMTP_REPLY_BAD;
	*code = a * 100 + b * 10 + c;
	return len > 3 && line[3] == '-' ? SMTP_REPLY_MORE : SMTP_REPLY_LAST;
}

size_t
smtp_reply_whole(const char *buf, size_t len, int *code)
{
	size_t start = 0, line, took;

	while ((took = smtp_line_next(buf + start, len - start, &line))) {
		enum smtp_reply_line_kind kind =
		        smtp_reply_line(buf + start, line, code);

		start += took;
		if (kind != SMTP_REPLY_MORE)
			return start;
	}
	return 0;
}

const char *
smtp_ehlo_line(const char *ehlo, size_t len, const char *kw, size_t kl,
	       size_t *line_len)
{
	size_t start = 0;

	while (start < len) {
		const char *line = ehlo + start + 4;
		size_t n, took = smtp_line_next(ehlo + start, len - start, &n);

		if (!took) { /* the last line, without its LF */
			took = len - start;
			n = smtp_line_trim(ehlo + start, took);
		}
		/* Past the first line (the greeting's host name). */
		if (start > 0 && n >= 4 + kl && !strncasecmp(line, kw, kl) &&
		    (n == 4 + kl || line[kl] == ' ')) {
			*line_len = n - 4;
			return line;
		}
		start += took;
	}
	return NULL;
}
