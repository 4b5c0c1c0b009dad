// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the DNS reply reader and the resolver's cache on messages
 * built here byte by byte: each record type, compressed names, TTLs
 * (the least one; RFC 2308's negative TTL from the SOA), and messages
 * cut or lying about their lengths, which must be refused, never read
 * past. The resolver itself against a real DNS server: the integration
 * test test-resolver.sh. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "check.h"
#include "dns_answer.h"
#include "dns_cache.h"

/* A message being built. */
struct b {
	unsigned char m[4096];
	size_t len;
};

static void
put8(struct b *b, unsigned v)
{
	b->m[b->len++] = (unsigned char)v;
}

static void
put16(struct b *b, unsigned v)
{
	put8(b, v >> 8);
	put8(b, v & 0xff);
}

static void
put32(struct b *b, uint32_t v)
{
	put16(b, v >> 16);
	put16(b, v & 0xffff);
}

/* "mx1.mail.test" as labels, uncompressed. */
static void
put_name(struct b *b, const char *name)
{
	while (*name) {
		const char *dot = strchr(name, '.');
		size_t n = dot ? (size_t)(dot - name) : strlen(name);

		put8(b, (unsigned)n);
		memcpy(b->m + b->len, name, n);
		b->len += n;
		name += n + (dot != NULL);
	}
	put8(b, 0);
}

/* A pointer to offset (compression). */
static void
put_ptr(struct b *b, unsigned offset)
{
	put16(b, 0xc000 | offset);
}

static void
header(struct b *b, unsigned rcode, unsigned an, unsigned ns)
{
	b->len = 0;
	put16(b, 0x1234);
	put16(b, 0x8180 | rcode);
	put16(b, 1);
	put16(b, an);
	put16(b, ns);
	put16(b, 0);
}

/* The question at offset 12, so that answers may point at it. */
static void
question(struct b *b, const char *name, unsigned type)
{
	put_name(b, name);
	put16(b, type);
	put16(b, 1);
}

/* A record's head, owner compressed to the question's name. */
static void
rr(struct b *b, unsigned type, uint32_t ttl, unsigned rdlen)
{
	put_ptr(b, 12);
	put16(b, type);
	put16(b, 1);
	put32(b, ttl);
	put16(b, rdlen);
}

static void
test_a_and_aaaa(void)
{
	struct b b;
	struct dns_answer a;
	uint8_t want[16];

	header(&b, 0, 2, 0);
	question(&b, "mx1.mail.test", DNS_A);
	rr(&b, DNS_A, 300, 4);
	put32(&b, 0xc6336419); /* 198.51.100.25 */
	rr(&b, DNS_A, 120, 4);
	put32(&b, 0xc633641a);
	CHECK_INT(dns_answer_read(b.m, b.len, DNS_A, 900, &a), 0);
	CHECK_INT(a.status, DNS_OK);
	CHECK_INT(a.n, 2);
	CHECK_INT(a.ttl, 120); /* the least */
	inet_pton(AF_INET, "198.51.100.25", want);
	CHECK(!memcmp(a.rec[0].addr, want, 4));
	CHECK(a.rec[0].text == NULL);
	dns_answer_clear(&a);

	/* An A of the wrong length is dropped, not read. */
	header(&b, 0, 2, 0);
	question(&b, "mx1.mail.test", DNS_AAAA);
	rr(&b, DNS_AAAA, 60, 16);
	inet_pton(AF_INET6, "2001:db8:25::25", want);
	memcpy(b.m + b.len, want, 16);
	b.len += 16;
	rr(&b, DNS_AAAA, 60, 4);
	put32(&b, 1);
	CHECK_INT(dns_answer_read(b.m, b.len, DNS_AAAA, 900, &a), 0);
	CHECK_INT(a.n, 1);
	CHECK_INT(a.dropped, 1);
	CHECK(!memcmp(a.rec[0].addr, want, 16));
	dns_answer_clear(&a);
}

static void
test_cname_chain(void)
{
	struct b b;
	struct dns_answer a;

	/* owner CNAME (ttl 30) -> target, target A (ttl 600): kept 30 s. */
	header(&b, 0, 2, 0);
	question(&b, "www.mail.test", DNS_A);
	rr(&b, 5, 30, 6);
	put8(&b, 3);
	memcpy(b.m + b.len, "mx1", 3);
	b.len += 3;
	put_ptr(&b, 12 + 4); /* "mail.test" inside the question */
	put_ptr(&b, 12 + 15 + 4 + 12); /* the CNAME's target */
	put16(&b, DNS_A);
	put16(&b, 1);
	put32(&b, 600);
	put16(&b, 4);
	put32(&b, 0xc6336419);
	CHECK_INT(dns_answer_read(b.m, b.len, DNS_A, 900, &a), 0);
	CHECK_INT(a.status, DNS_OK);
	CHECK_INT(a.n, 1);
	CHECK_INT(a.ttl, 30);
	dns_answer_clear(&a);
}

static void
test_ptr_mx_txt(void)
{
	struct b b;
	struct dns_answer a;
	size_t rdlen_at;

	header(&b, 0, 1, 0);
	question(&b, "25.100.51.198.in-addr.arpa", DNS_PTR);
	rr(&b, DNS_PTR, 3600, 15);
	put_name(&b, "mx1.mail.test");
	CHECK_INT(dns_answer_read(b.m, b.len, DNS_PTR, 900, &a), 0);
	CHECK_INT(a.n, 1);
	CHECK_STR(a.rec[0].text, "mx1.mail.test");
	dns_answer_clear(&a);

	/* MX: a preference and a compressed name. */
	header(&b, 0, 1, 0);
	question(&b, "mail.test", DNS_MX);
	rr(&b, DNS_MX, 3600, 8);
	put16(&b, 10);
	put8(&b, 3);
	memcpy(b.m + b.len, "mx1", 3);
	b.len += 3;
	put_ptr(&b, 12);
	CHECK_INT(dns_answer_read(b.m, b.len, DNS_MX, 900, &a), 0);
	CHECK_INT(a.n, 1);
	CHECK_INT(a.rec[0].pref, 10);
	CHECK_STR(a.rec[0].text, "mx1.mail.test");
	dns_answer_clear(&a);

	/* A name longer than its record's data: dropped. */
	header(&b, 0, 1, 0);
	question(&b, "mail.test", DNS_MX);
	rr(&b, DNS_MX, 3600, 4);
	put16(&b, 10);
	put_name(&b, "mx1.mail.test");
	CHECK_INT(dns_answer_read(b.m, b.len, DNS_MX, 900, &a), 0);
	CHECK_INT(a.n, 0);
	CHECK_INT(a.dropped, 1);

	/* TXT: its strings joined (an SPF record split at 255). */
	header(&b, 0, 1, 0);
	question(&b, "mail.test", DNS_TXT);
	rr(&b, DNS_TXT, 300, 0);
	rdlen_at = b.len - 2;
	put8(&b, 7);
	memcpy(b.m + b.len, "v=spf1 ", 7);
	b.len += 7;
	put8(&b, 4);
	memcpy(b.m + b.len, "-all", 4);
	b.len += 4;
	b.m[rdlen_at + 1] = 13;
	CHECK_INT(dns_answer_read(b.m, b.len, DNS_TXT, 900, &a), 0);
	CHECK_INT(a.n, 1);
	CHECK_STR(a.rec[0].text, "v=spf1 -all");
	dns_answer_clear(&a);

	/* A NUL inside: kept, as DNS_TXT_NUL (SPF's permerror; issue 56:
	 * dropped, none), and an empty character-string is no NUL */
	header(&b, 0, 1, 0);
	question(&b, "mail.test", DNS_TXT);
	rr(&b, DNS_TXT, 300, 14);
	put8(&b, 12);
	memcpy(b.m + b.len, "v=spf1 -a\0ll", 12);
	b.len += 12;
	put8(&b, 0);
	CHECK_INT(dns_answer_read(b.m, b.len, DNS_TXT, 900, &a), 0);
	CHECK_INT(a.n, 1);
	CHECK_STR(a.rec[0].text, "v=spf1 -a\x01ll");
	dns_answer_clear(&a);

	/* A string's length past its record: dropped. */
	b.m[rdlen_at + 1] = 12;
	b.len--;
	CHECK_INT(dns_answer_read(b.m, b.len, DNS_TXT, 900, &a), 0);
	CHECK_INT(a.n, 0);
	CHECK_INT(a.dropped, 1);
}

/* NXDOMAIN and NODATA: kept as long as the SOA says, at most the bound. */
static void
test_negative(void)
{
	struct b b;
	struct dns_answer a;
	size_t rdlen_at, start;

	for (int rcode = 0; rcode <= 3; rcode += 3) {
		header(&b, (unsigned)rcode, 0, 1);
		question(&b, "nope.mail.test", DNS_A);
		put_ptr(&b, 12 + 5); /* mail.test */
		put16(&b, 6);
		put16(&b, 1);
		put32(&b, 3600);
		rdlen_at = b.len;
		put16(&b, 0);
		start = b.len;
		put_name(&b, "ns.mail.test");
		put_name(&b, "admin.mail.test");
		put32(&b, 1);
		put32(&b, 3600);
		put32(&b, 600);
		put32(&b, 86400);
		put32(&b, 3); /* minimum */
		b.m[rdlen_at] = (unsigned char)((b.len - start) >> 8);
		b.m[rdlen_at + 1] = (unsigned char)(b.len - start);
		CHECK_INT(dns_answer_read(b.m, b.len, DNS_A, 900, &a), 0);
		CHECK_INT(a.status, rcode ? DNS_NXDOMAIN : DNS_NODATA);
		CHECK_INT(a.ttl, 3);
		CHECK_INT(dns_answer_read(b.m, b.len, DNS_A, 2, &a), 0);
		CHECK_INT(a.ttl, 2);
	}
	/* Without an SOA: not kept. */
	header(&b, 3, 0, 0);
	question(&b, "nope.mail.test", DNS_A);
	CHECK_INT(dns_answer_read(b.m, b.len, DNS_A, 900, &a), 0);
	CHECK_INT(a.status, DNS_NXDOMAIN);
	CHECK_INT(a.ttl, 0);
	/* SERVFAIL and REFUSED */
	header(&b, 2, 0, 0);
	CHECK_INT(dns_answer_read(b.m, b.len, DNS_A, 900, &a), 0);
	CHECK_INT(a.status, DNS_SERVFAIL);
	header(&b, 5, 0, 0);
	CHECK_INT(dns_answer_read(b.m, b.len, DNS_A, 900, &a), 0);
	CHECK_INT(a.status, DNS_SERVFAIL);
}

/* Every cut of a good message is refused or read within its bytes (the
 * sanitizers watch the reads), never read as more than it holds. */
static void
test_cut_and_lies(void)
{
	struct b b;
	struct dns_answer a;

	header(&b, 0, 3, 0);
	question(&b, "mail.test", DNS_MX);
	for (int i = 0; i < 3; i++) {
		rr(&b, DNS_MX, 300, 6);
		put16(&b, (unsigned)i);
		put8(&b, 1);
		put8(&b, 'a' + i);
		put_ptr(&b, 12);
	}
	CHECK_INT(dns_answer_read(b.m, b.len, DNS_MX, 900, &a), 0);
	CHECK_INT(a.n, 3);
	CHECK_STR(a.rec[2].text, "c.mail.test");
	dns_answer_clear(&a);
	for (size_t cut = 0; cut < b.len; cut++) {
		unsigned char *copy = malloc(cut ? cut : 1);

		memcpy(copy, b.m, cut);
		CHECK_INT(dns_answer_read(copy, cut, DNS_MX, 900, &a), -EBADMSG);
		free(copy);
	}
	/* A pointer to itself. */
	header(&b, 0, 1, 0);
	question(&b, "mail.test", DNS_PTR);
	rr(&b, DNS_PTR, 300, 2);
	put_ptr(&b, (unsigned)b.len);
	CHECK_INT(dns_answer_read(b.m, b.len, DNS_PTR, 900, &a), 0);
	CHECK_INT(a.n, 0);
	CHECK_INT(a.dropped, 1);
	/* More records than kept: the rest counted as dropped. */
	header(&b, 0, DNS_RECORDS_MAX + 8, 0);
	question(&b, "many.mail.test", DNS_A);
	for (int i = 0; i < DNS_RECORDS_MAX + 8; i++) {
		rr(&b, DNS_A, 300, 4);
		put32(&b, 0xc6336400u + (uint32_t)i);
	}
	CHECK_INT(dns_answer_read(b.m, b.len, DNS_A, 900, &a), 0);
	CHECK_INT(a.n, DNS_RECORDS_MAX);
	CHECK_INT(a.dropped, 8);
	dns_answer_clear(&a);
	/* A TTL with its top bit set is 0 (RFC 2181): not kept. */
	header(&b, 0, 1, 0);
	question(&b, "mx1.mail.test", DNS_A);
	rr(&b, DNS_A, 0x80000001u, 4);
	put32(&b, 0xc6336419);
	CHECK_INT(dns_answer_read(b.m, b.len, DNS_A, 900, &a), 0);
	CHECK_INT(a.ttl, 0);
}

static void
test_reverse_name(void)
{
	uint8_t addr[16];
	char name[DNS_REVERSE_MAX];

	inet_pton(AF_INET, "198.51.100.25", addr);
	dns_reverse_name(AF_INET, addr, name);
	CHECK_STR(name, "25.100.51.198.in-addr.arpa");
	inet_pton(AF_INET6, "2001:db8::567:89ab", addr);
	dns_reverse_name(AF_INET6, addr, name);
	CHECK_STR(name, "b.a.9.8.7.6.5.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d."
	                "0.1.0.0.2.ip6.arpa");
	CHECK(strlen(name) < DNS_REVERSE_MAX);

	/* the same writer, both orders, for DNS lists and SPF's %{i} */
	inet_pton(AF_INET, "198.51.100.25", addr);
	dns_address_labels(AF_INET, addr, false, name);
	CHECK_STR(name, "198.51.100.25");
	dns_address_labels(AF_INET, addr, true, name);
	CHECK_STR(name, "25.100.51.198");
	inet_pton(AF_INET6, "2001:db8::567:89ab", addr);
	dns_address_labels(AF_INET6, addr, false, name);
	CHECK_STR(name, "2.0.0.1.0.d.b.8.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.5.6."
	                "7.8.9.a.b");
	CHECK(strlen(name) < DNS_LABELS_MAX);
	memset(addr, 0xff, 4);
	dns_address_labels(AF_INET, addr, true, name);
	CHECK_STR(name, "255.255.255.255");
}

static void
test_cache(void)
{
	struct dns_cache *c = dns_cache_new(2, 1 << 20);
	struct dns_answer a = {.status = DNS_OK, .type = DNS_PTR, .ttl = 10,
	                       .n = 1};
	const struct dns_answer *got;

	CHECK(c);
	a.rec[0].text = "mx1.mail.test";
	CHECK_INT(dns_cache_put(c, "25.100.51.198.IN-ADDR.arpa", &a, 86400,
	                        1000), 0);
	got = dns_cache_get(c, DNS_PTR, "25.100.51.198.in-addr.ARPA", 10999);
	CHECK(got && got->n == 1 && !strcmp(got->rec[0].text, "mx1.mail.test"));
	CHECK(got->rec[0].text != a.rec[0].text); /* a copy */
	CHECK(!dns_cache_get(c, DNS_A, "25.100.51.198.in-addr.arpa", 2000));
	/* expired at its TTL */
	CHECK(!dns_cache_get(c, DNS_PTR, "25.100.51.198.in-addr.arpa", 11000));
	CHECK_INT(dns_cache_count(c), 0);
	/* ttl_max bounds it */
	CHECK_INT(dns_cache_put(c, "x.test", &a, 5, 0), 0);
	CHECK(dns_cache_get(c, DNS_PTR, "x.test", 4999));
	CHECK(!dns_cache_get(c, DNS_PTR, "x.test", 5000));
	/* timeouts, failures and TTL 0 are not kept */
	a.ttl = 0;
	CHECK_INT(dns_cache_put(c, "y.test", &a, 86400, 0), 0);
	a.ttl = 60;
	a.status = DNS_TIMEOUT;
	CHECK_INT(dns_cache_put(c, "z.test", &a, 86400, 0), 0);
	CHECK_INT(dns_cache_count(c), 0);
	/* the bound takes the least recently used */
	a.status = DNS_OK;
	CHECK_INT(dns_cache_put(c, "a.test", &a, 86400, 0), 0);
	CHECK_INT(dns_cache_put(c, "b.test", &a, 86400, 0), 0);
	CHECK(dns_cache_get(c, DNS_PTR, "a.test", 1)); /* a used: b oldest */
	CHECK_INT(dns_cache_put(c, "c.test", &a, 86400, 0), 0);
	CHECK_INT(dns_cache_count(c), 2);
	CHECK(dns_cache_get(c, DNS_PTR, "a.test", 1));
	CHECK(!dns_cache_get(c, DNS_PTR, "b.test", 1));
	CHECK(dns_cache_get(c, DNS_PTR, "c.test", 1));
	/* a new answer replaces the old */
	a.status = DNS_NXDOMAIN;
	a.n = 0;
	CHECK_INT(dns_cache_put(c, "a.test", &a, 86400, 0), 0);
	got = dns_cache_get(c, DNS_PTR, "a.test", 1);
	CHECK(got && got->status == DNS_NXDOMAIN);
	CHECK_INT(dns_cache_count(c), 2);
	dns_cache_free(c);
}

/* The bytes held are bounded: answers a client's names fill with long
 * records push the least recently used out, whatever their number (issue
 * 55: 10,000 names of 16 TXT records of 3.7 kB took greygated to 605 MB);
 * one larger than the whole bound is not kept. */
static void
test_cache_bytes(void)
{
	enum { BOUND = 256 * 1024 };
	struct dns_cache *c = dns_cache_new(10000, BOUND);
	struct dns_answer a = {.status = DNS_OK, .type = DNS_TXT, .ttl = 3600,
	                       .n = 16};
	static char text[3700];
	char name[64];

	CHECK(c);
	memset(text, 'x', sizeof(text) - 1);
	memcpy(text, "v=spf1 ", 7);
	for (size_t i = 0; i < a.n; i++)
		a.rec[i].text = text;
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "n%d.big.test", i);
		CHECK_INT(dns_cache_put(c, name, &a, 86400, 0), 0);
		CHECK(dns_cache_bytes(c) <= BOUND);
	}
	/* (16 records of 3.7 kB: four answers fit) */
	CHECK(dns_cache_count(c) >= 3 && dns_cache_count(c) <= 4);
	CHECK(dns_cache_get(c, DNS_TXT, "n999.big.test", 1));
	CHECK(!dns_cache_get(c, DNS_TXT, "n0.big.test", 1));
	/* larger than the whole bound: not kept, and nothing pushed out */
	a.n = DNS_RECORDS_MAX;
	for (size_t i = 0; i < a.n; i++)
		a.rec[i].text = text;
	{
		size_t before = dns_cache_count(c);
		struct dns_cache *small = dns_cache_new(10, 64 * 1024);

		CHECK_INT(dns_cache_put(small, "huge.test", &a, 86400, 0), 0);
		CHECK_INT(dns_cache_count(small), 0);
		CHECK_INT(dns_cache_bytes(small), 0);
		dns_cache_free(small);
		CHECK_INT(dns_cache_count(c), before);
	}
	/* emptied, nothing held */
	dns_cache_free(c);
}

/* Of a TXT answer only SPF records are kept, the others skipped before
 * the record bound: an SPF record after 40 others is found. */
static void
test_txt_keeps_spf(void)
{
	struct b b;
	struct dns_answer a;

	header(&b, 0, 42, 0);
	question(&b, "mail.test", DNS_TXT);
	for (int i = 0; i < 40; i++) {
		rr(&b, DNS_TXT, 300, 9);
		put8(&b, 8);
		memcpy(b.m + b.len, "google-x", 8);
		b.len += 8;
	}
	rr(&b, DNS_TXT, 300, 12);
	put8(&b, 11);
	memcpy(b.m + b.len, "v=spf1 -all", 11);
	b.len += 11;
	rr(&b, DNS_TXT, 300, 8);
	put8(&b, 7);
	memcpy(b.m + b.len, "v=spf10", 7);
	b.len += 7;
	CHECK_INT(dns_answer_read(b.m, b.len, DNS_TXT, 900, &a), 0);
	CHECK_INT(a.status, DNS_OK);
	CHECK_INT(a.n, 1);
	CHECK_INT(a.dropped, 0);
	CHECK_STR(a.rec[0].text, "v=spf1 -all");
	dns_answer_clear(&a);
	CHECK(dns_txt_is_spf("v=spf1", 6));
	CHECK(dns_txt_is_spf("V=SPF1 a", 8));
	CHECK(!dns_txt_is_spf("v=spf10", 7));
	CHECK(!dns_txt_is_spf("v=spf", 5));
}

int
main(void)
{
	RUN(test_a_and_aaaa);
	RUN(test_cache_bytes);
	RUN(test_txt_keeps_spf);
	RUN(test_cname_chain);
	RUN(test_ptr_mx_txt);
	RUN(test_negative);
	RUN(test_cut_and_lies);
	RUN(test_reverse_name);
	RUN(test_cache);
	return 0;
}
