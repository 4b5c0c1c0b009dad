/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Does the MAIL FROM domain take mail? A signal of issue 31, the
 * article's "invalid sender hostnames": a domain that can take no mail
 * can take no bounce, and a real sender's domain always can. RFC 5321
 * section 5.1: its MX hosts, or without MX records its own address (A
 * or AAAA, the implicit MX); RFC 7505: a null MX ("0 .") says it takes
 * none. Asked through greygated's resolver (one MX question, and A and
 * AAAA only when there is no MX), so nothing blocks and a domain seen
 * again is answered from the cache. A lookup that times out or fails is
 * said as such: never taken for "no such domain". */
#ifndef GREYGATE_SENDER_DOMAIN_H
#define GREYGATE_SENDER_DOMAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "resolver.h"

enum sender_domain_result {
	SENDER_DOMAIN_MAIL,      /* an MX host, or an address: takes mail */
	SENDER_DOMAIN_NONE,      /* no such name, or no MX, A nor AAAA */
	SENDER_DOMAIN_NULL_MX,   /* a null MX: takes no mail (RFC 7505) */
	SENDER_DOMAIN_TEMPERROR, /* a lookup timed out or failed */
};

typedef void sender_domain_fn(enum sender_domain_result r, void *ctx);

struct sender_domain;

/*
 * sender_domain_of - the domain of sender ("local@domain") to ask about,
 * into out (len bytes; a trailing dot dropped).
 * Return: true when there is one to ask; false for the null sender, no
 * '@', an address literal ("local@[192.0.2.1]": nothing to ask), or a
 * domain longer than a name can be (out then "").
 */
bool sender_domain_of(const char *sender, char *out, size_t len);

/*
 * sender_domain_start - ask whether domain takes mail; fn is told once,
 * unless cancelled. When the cache answers it all, fn is told before
 * this returns and *out is NULL.
 * Return: 0, or -ENOMEM (fn not told).
 */
int sender_domain_start(struct resolver *r, const char *domain,
                        sender_domain_fn *fn, void *ctx,
                        struct sender_domain **out);

/* sender_domain_cancel - fn will not be told. NULL is fine. */
void sender_domain_cancel(struct sender_domain *d);

/* sender_domain_result_name - "mail", "none", "null-mx", "temperror":
 * as logged. */
const char *sender_domain_result_name(enum sender_domain_result r);

#endif
