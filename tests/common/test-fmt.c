// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the hand-written formatters the tools print with: addresses
 * against glibc's inet_ntop (edge cases and a million random ones with
 * zero runs) against RFC 5952 written plainly and, on glibc, glibc's
 * inet_ntop, numbers against printf, JSON strings against hand-written
 * expectations. */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "check.h"
#include "fmt.h"
#include "json.h"

/* The IPv6 text RFC 5952 asks for, written plainly here (slowly, by
 * snprintf): the first of the longest runs of two or more zero groups
 * is "::", and, as glibc writes them (and Debian's nft and ip print),
 * a mapped address (::ffff:a.b.c.d) and a deprecated IPv4-compatible
 * one (::a.b.c.d) end in a dotted quad. The C library's inet_ntop is not
 * the reference everywhere: musl's takes the last of two equal runs
 * (0:0:0:7764::9c for ::7764:0:0:0:9c) and writes ::102:304 for
 * ::1.2.3.4. */
static void
rfc5952(const uint8_t *a, char *out, size_t size)
{
	unsigned w[8], best = 0, best_len = 0, n = 0;
	size_t at = 0;

	for (int i = 0; i < 8; i++)
		w[i] = (unsigned)a[2 * i] << 8 | a[2 * i + 1];
	for (unsigned i = 0; i < 8; i++) {
		unsigned run = 0;

		while (i + run < 8 && !w[i + run])
			run++;
		if (run >= 2 && run > best_len) {
			best = i;
			best_len = run;
		}
	}
	if (best == 0 && (best_len == 6 || (best_len == 5 && w[5] == 0xffff))) {
		snprintf(out, size, "::%s%u.%u.%u.%u", best_len == 5 ? "ffff:" : "",
		         a[12], a[13], a[14], a[15]);
		return;
	}
	while (n < 8) {
		if (best_len && n == best) {
			at += (size_t)snprintf(out + at, size - at, "::");
			n += best_len;
			continue;
		}
		at += (size_t)snprintf(out + at, size - at, "%s%x",
		                       at && out[at - 1] != ':' ? ":" : "", w[n]);
		n++;
	}
	out[at] = 0;
}

static void
check_ip(int family, const uint8_t *addr)
{
	char want[INET6_ADDRSTRLEN], got[FMT_IP_MAX];
	unsigned len = fmt_ip(family, addr, got);

	if (family == AF_INET6) {
		rfc5952(addr, want, sizeof(want));
#ifdef __GLIBC__
		/* (and glibc agrees) */
		char libc[INET6_ADDRSTRLEN];

		CHECK(inet_ntop(family, addr, libc, sizeof(libc)));
		CHECK_STR(want, libc);
#endif
	} else {
		CHECK(inet_ntop(family, addr, want, sizeof(want)));
	}
	CHECK_STR(got, want);
	CHECK_INT(len, strlen(want));
}

static void
test_ip_edges(void)
{
	static const char *const v6[] = {
		"::",	       "::1",	      "1::",	      "::ffff:1.2.3.4",
		"::1.2.3.4",   "::ffff:0:0",  "1:0:0:2::3",   "1::2:0:0:3",
		"1:0:1:0:1:0:1:0", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
		"2001:db8::25", "2001:db8:0:1:0:0:0:1", "0:0:1::", "::2:0:0",
		"fe80::1:2",   "2001:db8:1:1:1:1:1:1",
		"::7764:0:0:0:9c", "1:0:0:2:0:0:3:4",
	};
	static const char *const v4[] = {"0.0.0.0", "255.255.255.255",
					 "198.51.100.7", "10.0.100.9",
					 "203.0.113.99"};
	uint8_t a[16];
	char out[FMT_IP_MAX];

	for (size_t i = 0; i < sizeof(v6) / sizeof(*v6); i++) {
		CHECK_INT(inet_pton(AF_INET6, v6[i], a), 1);
		check_ip(AF_INET6, a);
	}
	for (size_t i = 0; i < sizeof(v4) / sizeof(*v4); i++) {
		CHECK_INT(inet_pton(AF_INET, v4[i], a), 1);
		check_ip(AF_INET, a);
		CHECK_STR((fmt_ip(AF_INET, a, out), out), v4[i]);
	}
	CHECK_INT(fmt_ip(AF_UNIX, a, out), 0);
	CHECK_STR(out, "");
}

/* Random addresses whose groups are mostly zero, so that every shape of
 * zero run (none, one group, several, equal runs, at either end) comes up. */
static void
test_ip_random(void)
{
	uint8_t a[16];

	srandom(25);
	for (int n = 0; n < 1000000; n++) {
		for (int g = 0; g < 8; g++) {
			unsigned v = random() % 3 ? 0 : (unsigned)random();

			if (random() % 4 == 0)
				v &= 0xff;
			a[2 * g] = (uint8_t)(v >> 8);
			a[2 * g + 1] = (uint8_t)v;
		}
		check_ip(AF_INET6, a);
		if (n % 10 == 0)
			check_ip(AF_INET, a + 12);
	}
}

static void
test_uint(void)
{
	static const uint64_t values[] = {0,	 7,	 10,	   99,
					  100,	 65535,	 999999,   1000000,
					  1700000000, UINT64_MAX};
	char got[FMT_UINT_MAX + 1], want[32];

	for (size_t i = 0; i < sizeof(values) / sizeof(*values); i++) {
		*fmt_uint(got, values[i]) = 0;
		snprintf(want, sizeof(want), "%llu",
			 (unsigned long long)values[i]);
		CHECK_STR(got, want);
		*fmt_uint_pad(got, values[i] % 1000000, 6) = 0;
		snprintf(want, sizeof(want), "%06llu",
			 (unsigned long long)(values[i] % 1000000));
		CHECK_STR(got, want);
	}
}

static void
test_json(void)
{
	/* control bytes, quote, backslash, UTF-8 (é, €, 𝄞) as it is, stray
	 * bytes (a lone continuation, an overlong '/', a surrogate, a cut
	 * character) as U+FFFD, and a plain run */
	const char *in = "a\x01\"\\\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e"
			 "\x80\xc0\xaf\xed\xa0\x80\xe2\x82z <x@example.org>";
	const char *want = "\"a\\u0001\\\"\\\\\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e"
			   "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd"
			   "\\ufffdz <x@example.org>\"";
	char buf[JSON_ESCAPED_MAX(64)], *end;
	char long_in[1000], *put = NULL;
	size_t put_len = 0;
	FILE *f;

	end = json_append_string(buf, in);
	*end = 0;
	CHECK_STR(buf, want);
	end = json_escape(buf, in, strlen(in));
	*end = 0;
	CHECK_INT(strlen(buf), strlen(want) - 2);
	CHECK(memcmp(buf, want + 1, strlen(buf)) == 0);
	*json_append_string(buf, "") = 0;
	CHECK_STR(buf, "\"\"");

	/* json_put_string works in slices: a long string crosses them,
	 * with UTF-8 characters across every slice's edge */
	for (size_t i = 0; i < sizeof(long_in) - 1; i++)
		long_in[i] = i % 100 == 99 ? '"' : 'a' + (char)(i % 26);
	for (size_t i = 250; i + 3 < sizeof(long_in) - 1; i += 256) {
		memcpy(long_in + i, "\xe2\x82\xac", 3);
		memcpy(long_in + i + 4, "\xc3\xa9", 2);
	}
	long_in[sizeof(long_in) - 1] = 0;
	f = open_memstream(&put, &put_len);
	CHECK(f);
	json_put_string(f, long_in);
	fclose(f);
	{
		char *whole = malloc(JSON_ESCAPED_MAX(sizeof(long_in)));

		CHECK(whole);
		*json_append_string(whole, long_in) = 0;
		CHECK_STR(put, whole);
		free(whole);
	}
	free(put);
}

int
main(void)
{
	RUN(test_ip_edges);
	RUN(test_ip_random);
	RUN(test_uint);
	RUN(test_json);
	return 0;
}
