// SPDX-License-Identifier: GPL-2.0-or-later
/* A DNS reply read for the resolver's cache (dns_answer.h). */
#include <ares.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "dns_answer.h"

#define HEADER_LEN 12
#define CLASS_IN 1
#define TYPE_CNAME 5
#define TYPE_SOA 6
#define RCODE_NXDOMAIN 3

/* A reader over the message (len bytes, where compressed names may
 * point) from at up to end (the message, or one record's data): every
 * read is checked against end. */
struct msg {
	const unsigned char *p;
	size_t len, at, end;
	bool nomem; /* a read failed for want of memory */
};

static bool
u16(struct msg *m, uint16_t *out)
{
	if (m->end - m->at < 2)
		return false;
	*out = (uint16_t)(m->p[m->at] << 8 | m->p[m->at + 1]);
	m->at += 2;
	return true;
}

static bool
u32(struct msg *m, uint32_t *out)
{
	if (m->end - m->at < 4)
		return false;
	*out = (uint32_t)m->p[m->at] << 24 | (uint32_t)m->p[m->at + 1] << 16 |
	       (uint32_t)m->p[m->at + 2] << 8 | m->p[m->at + 3];
	m->at += 4;
	return true;
}

/* The name at m's position, expanded (NULL out: only passed over); its
 * own bytes (up to a compression pointer) inside m's end. */
static bool
name(struct msg *m, char **out)
{
	char *s = NULL;
	long enclen = 0;

	if (m->at >= m->end ||
	    ares_expand_name(m->p + m->at, m->p, (int)m->len, &s, &enclen) !=
	            ARES_SUCCESS)
		return false;
	if (enclen <= 0 || (size_t)enclen > m->end - m->at ||
	    strlen(s) >= DNS_NAME_MAX) {
		ares_free_string(s);
		return false;
	}
	m->at += (size_t)enclen;
	if (out) {
		*out = strdup(s);
		if (!*out)
			m->nomem = true;
	}
	ares_free_string(s);
	return !out || *out;
}

/* RFC 2181 section 8: a TTL with its top bit set is taken as 0. */
static uint32_t
ttl_of(uint32_t wire)
{
	return wire & 0x80000000u ? 0 : wire;
}

bool
dns_txt_is_spf(const char *txt, size_t len)
{
	return len >= 6 && !strncasecmp(txt, "v=spf1", 6) &&
	       (len == 6 || txt[6] == ' ');
}

/* Whether the TXT record's data rd[0..len) begins an SPF record: its
 * first character-string's first bytes (a version split across strings
 * is read joined: the strings' first 7 bytes gathered). */
static bool
txt_spf(const unsigned char *rd, size_t len)
{
	char head[7];
	size_t n = 0;

	for (size_t at = 0; at < len && n < sizeof(head); at += 1 + rd[at])
		for (size_t i = 0; i < rd[at] && at + 1 + i < len &&
		                   n < sizeof(head);
		     i++)
			head[n++] = (char)rd[at + 1 + i];
	return dns_txt_is_spf(head, n);
}

/* A TXT record's character-strings joined, or NULL (too long: dropped;
 * out of memory: *nomem). A NUL inside is kept as DNS_TXT_NUL, which no
 * reader takes as text (SPF: a permerror, RFC 7208 section 4.6; issue
 * 56: the record was dropped, none). */
static char *
txt_joined(const unsigned char *rd, size_t len, bool *nomem)
{
	size_t total = 0;
	char *s;

	for (size_t at = 0; at < len; at += 1 + rd[at]) {
		if (rd[at] > len - at - 1)
			return NULL;
		total += rd[at];
	}
	if (total >= DNS_TXT_MAX)
		return NULL;
	s = malloc(total + 1);
	if (!s) {
		*nomem = true;
		return NULL;
	}
	total = 0;
	for (size_t at = 0; at < len; at += 1 + rd[at])
		for (size_t i = 0; i < rd[at]; i++) {
			char c = (char)rd[at + 1 + i];

			s[total++] = c ? c : DNS_TXT_NUL;
		}
	s[total] = 0;
	return s;
}

/* One answer record's data of the type asked, into a->rec[a->n]. Return:
 * 1 kept, 0 dropped (not readable as its type), -ENOMEM. */
static int
keep_record(struct msg *m, size_t rdlen, struct dns_answer *a)
{
	struct dns_record *r = &a->rec[a->n];
	struct msg rd = {m->p, m->len, m->at, m->at + rdlen, false};
	bool nomem = false;

	memset(r, 0, sizeof(*r));
	switch (a->type) {
	case DNS_A:
	case DNS_AAAA:
		if (rdlen != (a->type == DNS_A ? 4u : 16u))
			return 0;
		memcpy(r->addr, m->p + m->at, rdlen);
		return 1;
	case DNS_MX:
		if (!u16(&rd, &r->pref))
			return 0;
		__attribute__((fallthrough)); /* to the exchange's name */
	case DNS_PTR:
		if (!name(&rd, &r->text))
			return rd.nomem ? -ENOMEM : 0;
		return 1;
	case DNS_TXT:
		r->text = txt_joined(m->p + m->at, rdlen, &nomem);
		return r->text ? 1 : nomem ? -ENOMEM : 0;
	}
	return 0;
}

/* The authority section's SOA: how long "no such" may be kept. */
static bool
negative_ttl(struct msg *m, uint16_t nscount, uint32_t *ttl)
{
	for (uint16_t i = 0; i < nscount; i++) {
		uint16_t type, class, rdlen;
		uint32_t wire_ttl, minimum, skip;
		size_t end;

		if (!name(m, NULL) || !u16(m, &type) || !u16(m, &class) ||
		    !u32(m, &wire_ttl) || !u16(m, &rdlen) ||
		    rdlen > m->end - m->at)
			return false;
		end = m->at + rdlen;
		if (type == TYPE_SOA && class == CLASS_IN) {
			struct msg rd = {m->p, m->len, m->at, end, false};

			/* mname, rname, serial, refresh, retry, expire */
			if (!name(&rd, NULL) || !name(&rd, NULL) ||
			    !u32(&rd, &skip) || !u32(&rd, &skip) ||
			    !u32(&rd, &skip) || !u32(&rd, &skip) ||
			    !u32(&rd, &minimum))
				return false;
			*ttl = ttl_of(wire_ttl) < ttl_of(minimum)
			               ? ttl_of(wire_ttl)
			               : ttl_of(minimum);
			return true;
		}
		m->at = end;
	}
	return false;
}

int
dns_answer_read(const unsigned char *msg, size_t len, enum dns_type type,
                uint32_t negative_ttl_max, struct dns_answer *out)
{
	struct msg m = {msg, len, 0, len, false};
	uint16_t id, flags, qdcount, ancount, nscount, arcount;
	uint32_t least = UINT32_MAX;
	int r;

	memset(out, 0, sizeof(*out));
	out->type = type;
	out->status = DNS_BAD;
	if (!u16(&m, &id) || !u16(&m, &flags) || !u16(&m, &qdcount) ||
	    !u16(&m, &ancount) || !u16(&m, &nscount) || !u16(&m, &arcount))
		return -EBADMSG;
	if ((flags & 0xf) != 0 && (flags & 0xf) != RCODE_NXDOMAIN) {
		out->status = DNS_SERVFAIL;
		return 0;
	}
	for (uint16_t i = 0; i < qdcount; i++) {
		uint32_t type_class;

		if (!name(&m, NULL) || !u32(&m, &type_class))
			return -EBADMSG;
	}
	for (uint16_t i = 0; i < ancount; i++) {
		uint16_t rtype, class, rdlen;
		uint32_t wire_ttl;

		if (!name(&m, NULL) || !u16(&m, &rtype) || !u16(&m, &class) ||
		    !u32(&m, &wire_ttl) || !u16(&m, &rdlen) ||
		    rdlen > m.end - m.at) {
			dns_answer_clear(out);
			out->status = DNS_BAD;
			return -EBADMSG;
		}
		if (class == CLASS_IN && (rtype == type || rtype == TYPE_CNAME) &&
		    ttl_of(wire_ttl) < least)
			least = ttl_of(wire_ttl);
		if (class == CLASS_IN && rtype == type && type == DNS_TXT &&
		    !txt_spf(m.p + m.at, rdlen)) {
			/* not SPF: not greygate's (skipped, not dropped) */
		} else if (class == CLASS_IN && rtype == type) {
			if (out->n == DNS_RECORDS_MAX) {
				out->dropped++;
			} else if ((r = keep_record(&m, rdlen, out)) < 0) {
				dns_answer_clear(out);
				out->status = DNS_BAD;
				return r;
			} else if (r == 0) {
				out->dropped++;
			} else {
				out->n++;
			}
		}
		m.at += rdlen;
	}
	if (out->n) {
		out->status = DNS_OK;
		out->ttl = least;
		return 0;
	}
	out->status = (flags & 0xf) == RCODE_NXDOMAIN ? DNS_NXDOMAIN
	                                              : DNS_NODATA;
	/* Kept only as long as the zone says (no SOA: not kept). */
	if (negative_ttl(&m, nscount, &out->ttl) &&
	    out->ttl > negative_ttl_max)
		out->ttl = negative_ttl_max;
	if (least < out->ttl) /* a CNAME to nothing lasts no longer */
		out->ttl = least;
	return 0;
}

void
dns_answer_clear(struct dns_answer *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->rec[i].text);
	a->n = 0;
}

int
dns_answer_copy(struct dns_answer *to, const struct dns_answer *from)
{
	*to = *from;
	for (size_t i = 0; i < from->n; i++) {
		if (!from->rec[i].text)
			continue;
		to->rec[i].text = strdup(from->rec[i].text);
		if (!to->rec[i].text) {
			to->n = i;
			dns_answer_clear(to);
			return -ENOMEM;
		}
	}
	return 0;
}

const char *
dns_status_name(enum dns_status s)
{
	static const char *const names[] = {"ok",       "nodata",  "nxdomain",
	                                    "servfail", "timeout", "bad"};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

void
dns_address_labels(int family, const uint8_t *addr, bool reversed, char *out)
{
	static const char hex[] = "0123456789abcdef";
	int n = family == AF_INET ? 4 : 16;

	if (family == AF_INET) {
		for (int i = 0; i < n; i++) {
			int at = reversed ? n - 1 - i : i;

			out += sprintf(out, i ? ".%u" : "%u", addr[at]);
		}
		return;
	}
	for (int i = 0; i < 2 * n; i++) {
		int nibble = reversed ? 2 * n - 1 - i : i;
		uint8_t byte = addr[nibble / 2];

		if (i)
			*out++ = '.';
		*out++ = hex[nibble % 2 ? byte & 15 : byte >> 4];
	}
	*out = 0;
}

void
dns_reverse_name(int family, const uint8_t *addr, char *out)
{
	dns_address_labels(family, addr, true, out);
	strcat(out, family == AF_INET ? ".in-addr.arpa" : ".ip6.arpa");
}

size_t
dns_question_key(enum dns_type type, const char *name,
                 char key[DNS_NAME_MAX + 1])
{
	size_t n = 0;

	key[n++] = (char)type;
	for (; *name && n < DNS_NAME_MAX + 1; name++)
		key[n++] = *name >= 'A' && *name <= 'Z' ? (char)(*name + 32)
		                                        : *name;
	return n;
}
