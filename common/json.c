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

/* The length of the valid UTF-8 character at p (RFC 3629: no overlong
 * forms, no surrogates, nothing past U+10FFFF), or 0. */
static size_t
utf8_len(const unsigned char *p, size_t avail)
{
	unsigned char c = p[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (avail < n || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/* What is not plain at p: a UTF-8 character as it is, \" \\ or \u00XX
 * for one byte, or \ufffd for a byte that is not UTF-8 (JSON is text:
 * a wire's stray byte must not come out as another character). Returns
 * the end; *used gets the bytes of p taken. */
static char *
escape_at(char *dst, const unsigned char *p, size_t avail, size_t *used)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char c = *p;
	size_t n;

	*used = 1;
	if (c >= 0x80) {
		n = utf8_len(p, avail);
		if (n) {
			memcpy(dst, p, n);
			*used = n;
			return dst + n;
		}
		memcpy(dst, "\\ufffd", 6);
		return dst + 6;
	}
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
		size_t used;

		while (p < end && plain(*p))
			p++;
		memcpy(dst, run, (size_t)(p - run));
		dst += p - run;
		if (p == end)
			break;
		dst = escape_at(dst, p, (size_t)(end - p), &used);
		p += used;
	}
	return dst;
}

char *
json_append_string(char *dst, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	/* One pass, no strlen: NUL is not plain, so the copy stops there
	 * (and a UTF-8 check never reads past it: NUL is no continuation
	 * byte). */
	*dst++ = '"';
	for (;;) {
		size_t used;

		while (plain(*p))
			*dst++ = (char)*p++;
		if (!*p)
			break;
		dst = escape_at(dst, p, 4, &used);
		p += used;
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
	/* in slices, so that strings of any length need no allocation; a
	 * slice never ends inside a UTF-8 character */
	for (size_t off = 0, n; off < len; off += n) {
		char *end;

		n = len - off < 256 ? len - off : 256;
		for (int back = 0; back < 3 && off + n < len &&
				   ((unsigned char)s[off + n] & 0xc0) == 0x80;
		     back++)
			n--;
		end = json_escape(buf, s + off, n);
		fwrite_unlocked(buf, 1, (size_t)(end - buf), out);
	}
	putc_unlocked('"', out);
}
