/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SPF's check_host() (RFC 7208 section 4) over greygated's resolver:
 * whether a client may send mail for the MAIL FROM's domain (or, for the
 * null sender, the HELO name's), asked without blocking, one DNS
 * question at a time, every answer cached by the resolver. The limits
 * of section 4.6.4 hold: 10 mechanisms and modifiers that ask DNS, 2
 * void lookups, 10 MX and 10 PTR names; include and redirect loops end
 * at the first. The exp= explanation is never fetched (greygate does not
 * refuse with the domain's text). */
#ifndef GREYGATE_SPF_CHECK_H
#define GREYGATE_SPF_CHECK_H

#include <stdint.h>

#include "resolver.h"
#include "spf_record.h"

/* Mechanisms and modifiers that ask DNS, at most (section 4.6.4). */
#define SPF_LOOKUPS_MAX 10
/* Lookups that find nothing, at most. */
#define SPF_VOID_LOOKUPS_MAX 2

struct spf_answer {
	enum spf_result result;
	char domain[256]; /* the domain checked ("" if none could be) */
	/* what decided: the term that matched ("ip4:192.0.2.0/24",
	 * "include:_spf.example.net" for a match inside it), or why there
	 * is no answer ("no SPF record", "more than 10 DNS lookups") */
	char why[200];
	unsigned lookups; /* mechanisms and modifiers that asked DNS */
	/* The term that decided, when one matched (issue 56: trust asks
	 * how wide it is and whose record holds it): its mechanism, the
	 * domain whose record holds it (an include's own), and the address
	 * bits it leaves free: all's 32 or 128; ip4:x/24's 8; a and mx:
	 * what their cidr leaves; exists: every bit, unless its name
	 * carries the client's address (%{i}); ptr: 0 */
	bool matched;
	enum spf_mechanism match_mechanism;
	uint8_t match_free_bits;
	char match_domain[256];
};

typedef void spf_fn(const struct spf_answer *a, void *ctx);

struct spf_check;

/*
 * spf_check_start - check the client at ip (family AF_INET or AF_INET6)
 * sending as sender ("local@domain", or "" for the null sender: then
 * "postmaster@" the HELO name). fn is told once, unless cancelled; when
 * the cache answers it all, before this returns (*out NULL).
 * Return: 0, or -ENOMEM (fn not told).
 */
int spf_check_start(struct resolver *r, int family, const uint8_t *ip,
                    const char *sender, const char *helo, spf_fn *fn,
                    void *ctx, struct spf_check **out);

/* spf_check_cancel - fn will not be told. NULL is fine. */
void spf_check_cancel(struct spf_check *c);

#endif
