// SPDX-License-Identifier: GPL-2.0-or-later
/* An SMTP reply's end and code (see smtp_reply.h). */
#include "smtp_reply.h"

static int
digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : -1;
}

size_t
smtp_reply_whole(const char *buf, size_t len, int *code)
{
	size_t start = 0;

	for (size_t i = 0; i < len; i++) {
		size_t line;

		if (buf[i] != '\n')
			continue;
		line = i - start - (i > start && buf[i - 1] == '\r');
		/* "250" alone, or "250 text": the last line of the reply */
		if (line >= 3 && (line == 3 || buf[start + 3] != '-')) {
			int a = digit(buf[start]), b = digit(buf[start + 1]),
			    c = digit(buf[start + 2]);

			*code = a < 0 || b < 0 || c < 0 ? 0
			                                : a * 100 + b * 10 + c;
			return i + 1;
		}
		start = i + 1;
	}
	return 0;
}
