/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A DNS reply (RFC 1035 section 4) read for what the resolver caches:
 * the answer section's records of the type asked, each with its data in
 * the form greygate uses, and how long the answer may be kept (the
 * records' least TTL; for "no such name" or "no such record", the
 * authority SOA's, RFC 2308 section 5). Names are expanded by c-ares
 * (ares_expand_name: compression pointers and their loops); everything
 * else is read here, bounded by the message. Bytes from the network: a
 * fuzz target (tests/fuzz/fuzz-dns.c) reads them too. */
#ifndef GREYGATE_DNS_ANSWER_H
#define GREYGATE_DNS_ANSWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The record types greygate asks for (their numbers, RFC 1035, 3596). */
enum dns_type {
	DNS_A = 1,
	DNS_PTR = 12,
	DNS_MX = 15,
	DNS_TXT = 16,
	DNS_AAAA = 28,
};

/* What an answer says, whatever the records. */
enum dns_status {
	DNS_OK = 0,       /* records of the type asked */
	DNS_NODATA = 1,   /* the name exists, without such records */
	DNS_NXDOMAIN = 2, /* no such name */
	DNS_SERVFAIL = 3, /* the server failed (or refused): ask later */
	DNS_TIMEOUT = 4,  /* no answer in time */
	DNS_BAD = 5,      /* an answer that cannot be read */
};

/* Records kept per answer, at most (more are dropped: a name with 64
 * PTRs or MX hosts is not a mail server's; SPF's limits are lower). */
#define DNS_RECORDS_MAX 32
/* The longest name (RFC 1035: 255 bytes on the wire; as text, at most
 * 253 characters plus escapes: c-ares escapes odd bytes as \DDD). */
#define DNS_NAME_MAX 1024
/* A TXT record's strings joined, at most (longer: dropped, said as
 * truncated; SPF records are under 512 in practice). Of a TXT answer
 * only SPF records are kept (dns_txt_is_spf: greygate asks TXT for SPF
 * alone), the others skipped before the record bound, so that a name a
 * client chose cannot fill the cache with its other records (issue 55)
 * nor hide its SPF record behind 32 others. */
#define DNS_TXT_MAX 4096
/* What a NUL inside a TXT record's text reads as (a C string ends at a
 * NUL): a control byte no record's syntax takes. */
#define DNS_TXT_NUL '\x01'

struct dns_record {
	uint8_t addr[16]; /* A (4 bytes), AAAA (16) */
	uint16_t pref;    /* MX */
	char *text;       /* PTR and MX: the name; TXT: its strings joined;
			     NULL for A and AAAA */
};

struct dns_answer {
	enum dns_status status;
	enum dns_type type;
	uint32_t ttl;  /* seconds it may be kept (0: not to be kept) */
	size_t n;      /* records */
	size_t dropped; /* records past DNS_RECORDS_MAX or too long */
	struct dns_record rec[DNS_RECORDS_MAX];
};

/*
 * dns_answer_read - the reply msg (len bytes) to a question of type.
 * @out: filled (free its texts with dns_answer_clear)
 * @negative_ttl_max: the longest a "no such" answer is kept
 * Return: 0, or -EBADMSG (out->status DNS_BAD: not kept), -ENOMEM.
 */
int dns_answer_read(const unsigned char *msg, size_t len, enum dns_type type,
                    uint32_t negative_ttl_max, struct dns_answer *out);

/* dns_txt_is_spf - whether the TXT record txt[0..len) is an SPF (version
 * 1) record: "v=spf1" in any case, then a space or its end (RFC 7208
 * 4.5). */
bool dns_txt_is_spf(const char *txt, size_t len);

/* dns_question_key - a question's key for a hash table: its type, then
 * the name in lower case (cut at DNS_NAME_MAX). Return: its length. */
size_t dns_question_key(enum dns_type type, const char *name,
                        char key[DNS_NAME_MAX + 1]);

/* dns_answer_clear - the texts freed; out holds nothing after. */
void dns_answer_clear(struct dns_answer *a);

/* dns_answer_copy - to, a deep copy of from. Return: 0 or -ENOMEM. */
int dns_answer_copy(struct dns_answer *to, const struct dns_answer *from);

/* dns_status_name - "ok", "nodata", "nxdomain", "servfail", "timeout",
 * "bad". */
const char *dns_status_name(enum dns_status s);

/*
 * dns_reverse_name - the name a PTR is asked at for an address:
 * "7.100.51.198.in-addr.arpa", or the 32 nibbles under ip6.arpa.
 * @out: at least DNS_REVERSE_MAX bytes
 */
#define DNS_REVERSE_MAX 74
void dns_reverse_name(int family, const uint8_t *addr, char *out);

/*
 * dns_address_labels - an address as DNS labels, one per octet (IPv4) or
 * per nibble (IPv6), in its order ("198.51.100.7") or reversed
 * ("7.100.51.198"): the one writer of the reversed form for PTR, DNS lists
 * and SPF's %{i}.
 * @out: at least DNS_LABELS_MAX bytes
 */
#define DNS_LABELS_MAX 64
void dns_address_labels(int family, const uint8_t *addr, bool reversed,
                        char *out);

#endif
