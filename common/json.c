// SPDX-License-Identifier: GPL-2.0-or-later
/* JSON string escaping: runs of plain bytes are written whole. */
#include "json.h"

#include <stdbool.h>
#include <string.h>

/* Bytes that go out as they are: printable ASCII other than '"' and '\\'.
 * A table, as this runs for every byte of every string the tools print. */
static const unsigned char plain_table[256] = {
	[0x20] = 1, [0x21] = 1, [0x23 ... 0x5b] = 1, [0x5d ... 0x7e] = 1,
};

static inline bool
plain(unsigned char c)
{
	return plain_table[c];
}

/* One byte that is not plain: \" \\ or \u00XX. */
static char *
escape_byte(char *dst, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";

	*dst++ = '\\';
	if (c == '"' || c == '\\') {
		*dst++ = (char)c;
		return dst;
	}
	memcpy(dst, "u00", 3);
	dst[3] = hex[c >> 4];
	dst[4] = hex[c & 15];
	return dst + 5;
}

char *
json_escape(char *dst, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	while (p < end) {
		const unsigned char *run = p;

		while (p < end && plain(*p))
			p++;
		memcpy(dst, run, (size_t)(p - run));
		dst += p - run;
		if (p == end)
			break;
		dst = escape_byte(dst, *p++);
	}
	return dst;
}

char *
json_append_string(char *dst, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	/* One pass, no strlen: NUL is not plain, so the copy stops there. */
	*dst++ = '"';
	for (;;) {
		while (plain(*p))
			*dst++ = (char)*p++;
		if (!*p)
			break;
		dst = escape_byte(dst, *p++);
	}
	*dst++ = '"';
	return dst;
}

void
json_put_string(FILE *out, const char *s)
{
	char buf[JSON_ESCAPED_MAX(256)];
	size_t len = strlen(s);

	putc_unlocked('"', out);
	/* in slices, so that strings of any length need no allocation */
	for (size_t off = 0; off < len; off += 256) {
		size_t n = len - off < 256 ? len - off : 256;
		char *end = json_escape(buf, s + off, n);

		fwrite_unlocked(buf, 1, (size_t)(end - buf), out);
	}
	putc_unlocked('"', out);
}
