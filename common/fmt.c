// SPDX-License-Identifier: GPL-2.0-or-later
/* Number and address formatting by hand; see fmt.h for why. */
#include "fmt.h"

#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* Two digits at a time from a table: "00".."99". */
static const char pairs[] = "00010203040506070809"
			    "10111213141516171819"
			    "20212223242526272829"
			    "30313233343536373839"
			    "40414243444546474849"
			    "50515253545556575859"
			    "60616263646566676869"
			    "70717273747576777879"
			    "80818283848586878889"
			    "90919293949596979899";

char *
fmt_uint_pad(char *p, uint64_t v, unsigned width)
{
	char buf[FMT_UINT_MAX];
	char *q = buf + sizeof(buf);
	size_t n;

	while (v >= 100) {
		q -= 2;
		memcpy(q, pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		q -= 2;
		memcpy(q, pairs + 2 * v, 2);
	} else {
		*--q = (char)('0' + v);
	}
	n = (size_t)(buf + sizeof(buf) - q);
	for (; width > n && width <= FMT_UINT_MAX; width--)
		*p++ = '0';
	/* A byte loop: a call to memcpy costs more for a few digits. */
	while (q < buf + sizeof(buf))
		*p++ = *q++;
	return p;
}

char *
fmt_uint(char *p, uint64_t v)
{
	return fmt_uint_pad(p, v, 1);
}

static char *
put_dec_byte(char *p, unsigned v)
{
	if (v >= 100) {
		*p++ = (char)('0' + v / 100);
		v %= 100;
		memcpy(p, pairs + 2 * v, 2);
		return p + 2;
	}
	if (v >= 10) {
		memcpy(p, pairs + 2 * v, 2);
		return p + 2;
	}
	*p++ = (char)('0' + v);
	return p;
}

static char *
put_v4(char *p, const uint8_t *a)
{
	for (int i = 0; i < 4; i++) {
		if (i)
			*p++ = '.';
		p = put_dec_byte(p, a[i]);
	}
	return p;
}

static char *
put_hex_group(char *p, unsigned v)
{
	static const char hex[] = "0123456789abcdef";
	int shift = 12;

	while (shift > 0 && !(v >> shift))
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		*p++ = hex[(v >> shift) & 15];
	return p;
}

static char *
put_v6(char *p, const uint8_t *a)
{
	unsigned g[8];
	int best = -1, best_len = 0;

	for (int i = 0; i < 8; i++)
		g[i] = (unsigned)a[2 * i] << 8 | a[2 * i + 1];
	for (int i = 0; i < 8;) {
		int j = i;

		while (j < 8 && !g[j])
			j++;
		if (j - i > best_len) {
			best = i;
			best_len = j - i;
		}
		i = j == i ? i + 1 : j;
	}
	if (best_len < 2)
		best = -1;
	for (int i = 0; i < 8; i++) {
		if (i == best) {
			*p++ = ':';
			if (i + best_len == 8)
				*p++ = ':';
			i += best_len - 1;
			continue;
		}
		if (i)
			*p++ = ':';
		/* ::ffff:a.b.c.d and the deprecated ::a.b.c.d, as inet_ntop */
		if (i == 6 && best == 0 &&
		    (best_len == 6 || (best_len == 5 && g[5] == 0xffff)))
			return put_v4(p, a + 12);
		p = put_hex_group(p, g[i]);
	}
	return p;
}

unsigned
fmt_ip(int family, const uint8_t *addr, char *out)
{
	char *end = out;

	if (family == AF_INET)
		end = put_v4(out, addr);
	else if (family == AF_INET6)
		end = put_v6(out, addr);
	*end = 0;
	return (unsigned)(end - out);
}

const char *
fmt_utc(int64_t t, char *buf)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) ||
	    !strftime(buf, FMT_UTC_MAX, "%Y-%m-%dT%H:%M:%SZ", &tm)) {
		char *end = t < 0 ? (buf[0] = '-', fmt_uint(buf + 1, -(uint64_t)t))
				  : fmt_uint(buf, (uint64_t)t);

		*end = 0;
	}
	return buf;
}
