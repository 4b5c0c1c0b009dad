// SPDX-License-Identifier: GPL-2.0-or-later
/* JSON string escaping: runs of plain bytes are written whole. */
#include "json.h"

#include <stdbool.h>

static bool
plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

void
json_put_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	putc_unlocked('"', out);
	while (*p) {
		const unsigned char *run = p;

		while (*p && plain(*p))
			p++;
		if (p > run)
			fwrite_unlocked(run, 1, (size_t)(p - run), out);
		if (!*p)
			break;
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else
			fprintf(out, "\\u%04x", *p);
		p++;
	}
	putc_unlocked('"', out);
}
