/* SPDX-License-Identifier: GPL-2.0-or-later */
/* DNS block and allow lists (DNSBL, DNSWL), a signal of issue 31, in
 * Postfix postscreen's postscreen_dnsbl_sites syntax, so admins reuse
 * what they know:
 *
 *   zone[=filter]*weight, zone2 ...
 *
 * A client is looked up in each zone (its reversed address, then the
 * zone's name, type A); a zone that answers, with an address the filter
 * takes when there is one, adds its weight (1 if not given; negative
 * for allow lists) to the client's score. A filter is four octets, each
 * a number, or [a..b] or [a;b;c], or those mixed ("127.0.0.[2..11;15]").
 * Asked through the resolver, all zones at once; a zone that does not
 * answer in time adds nothing (never listed on a timeout), and neither
 * does one that answers with a list's error code (127.255.255.0/24,
 * Spamhaus's "query refused" and kin; 127.0.0.255, DNSWL's): it did not
 * answer. An allow list (a negative weight) needs a filter: a list that
 * answers every name (its error codes, a resolver that rewrites NXDOMAIN)
 * would otherwise trust every client. */
#ifndef GREYGATE_DNSBL_H
#define GREYGATE_DNSBL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "resolver.h"

/* Zones in a list, at most. */
#define DNSBL_SITES_MAX 16

struct dnsbl_site {
	char zone[256];
	bool filtered;     /* a filter was given */
	uint8_t lo[4][16]; /* each octet: the ranges it may be in */
	uint8_t hi[4][16];
	uint8_t nranges[4];
	int weight;
};

struct dnsbl_sites {
	struct dnsbl_site site[DNSBL_SITES_MAX];
	size_t n;
};

/*
 * dnsbl_sites_parse - text ("zone[=filter]*weight, ...", blanks or
 * commas between) into out.
 * @why: what is wrong, for the config's refusal
 * Return: 0 or -EINVAL.
 */
int dnsbl_sites_parse(const char *text, struct dnsbl_sites *out, char *why,
                      size_t len);

/* dnsbl_site_takes - whether the site counts an answer of addr. */
bool dnsbl_site_takes(const struct dnsbl_site *s, const uint8_t addr[4]);

struct dnsbl_answer {
	int score;         /* the weights of the zones that listed it */
	bool incomplete;   /* a zone did not answer (timeout, failure, an
	                    * error code) */
	char listed[200];  /* "zone(+3),zone2(-5)" or "" */
	/* a zone that answered with an error code, and the code: "" if
	 * none did */
	char error_zone[256];
	uint8_t error_code[4];
};

/* dnsbl_error_code - whether a list's answer addr is one of its error
 * codes (127.255.255.0/24, 127.0.0.255), never a listing. */
bool dnsbl_error_code(const uint8_t addr[4]);

typedef void dnsbl_fn(const struct dnsbl_answer *a, void *ctx);

struct dnsbl_check;

/*
 * dnsbl_start - the client at ip looked up in every site (sites
 * borrowed: must outlive the check); fn told once, unless cancelled; at
 * once (before this returns, *out NULL) when the cache answers all.
 * Return: 0, or -ENOMEM (fn not told).
 */
int dnsbl_start(struct resolver *r, const struct dnsbl_sites *sites,
                int family, const uint8_t *ip, dnsbl_fn *fn, void *ctx,
                struct dnsbl_check **out);

/* dnsbl_cancel - fn will not be told. NULL is fine. */
void dnsbl_cancel(struct dnsbl_check *c);

#endif
