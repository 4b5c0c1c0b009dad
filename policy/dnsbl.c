// SPDX-License-Identifier: GPL-2.0-or-later
/* DNS block and allow lists in postscreen's syntax (dnsbl.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "dns_answer.h"
#include "dnsbl.h"
#include "strbuf.h"

/* A number of at most max, digits only. */
static bool
number(const char **p, unsigned max, unsigned *out)
{
	unsigned v = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return false;
	while (*s >= '0' && *s <= '9') {
		v = v * 10 + (unsigned)(*s++ - '0');
		if (v > max)
			return false;
	}
	*p = s;
	*out = v;
	return true;
}

/* One octet of a filter: "127", "[2..11]", "[2;5;7..9]". */
static bool
octet(const char **p, struct dnsbl_site *s, int i)
{
	unsigned lo, hi;

	if (**p != '[') {
		if (!number(p, 255, &lo))
			return false;
		s->lo[i][0] = s->hi[i][0] = (uint8_t)lo;
		s->nranges[i] = 1;
		return true;
	}
	(*p)++;
	for (;;) {
		if (s->nranges[i] == 16 || !number(p, 255, &lo))
			return false;
		hi = lo;
		if ((*p)[0] == '.' && (*p)[1] == '.') {
			*p += 2;
			if (!number(p, 255, &hi) || hi < lo)
				return false;
		}
		s->lo[i][s->nranges[i]] = (uint8_t)lo;
		s->hi[i][s->nranges[i]++] = (uint8_t)hi;
		if (**p == ']') {
			(*p)++;
			return true;
		}
		if (**p != ';')
			return false;
		(*p)++;
	}
}

static int
site(const char *text, size_t n, struct dnsbl_site *s, char *why, size_t len)
{
	char buf[300];
	char *star, *eq;
	const char *p;

	if (n >= sizeof(buf)) {
		snprintf(why, len, "a site too long: \"%.40s...\"", text);
		return -EINVAL;
	}
	memcpy(buf, text, n);
	buf[n] = 0;
	memset(s, 0, sizeof(*s));
	s->weight = 1;
	star = strchr(buf, '*');
	if (star) {
		char *end;
		long w;

		*star = 0;
		w = strtol(star + 1, &end, 10);
		if (end == star + 1 || *end || w < -1000 || w > 1000) {
			snprintf(why, len, "%s: a weight from -1000 to 1000 "
			         "after *", text);
			return -EINVAL;
		}
		s->weight = (int)w;
	}
	eq = strchr(buf, '=');
	if (eq) {
		*eq = 0;
		p = eq + 1;
		for (int i = 0; i < 4; i++) {
			if ((i && *p++ != '.') || !octet(&p, s, i)) {
				snprintf(why, len, "%.100s: a filter is four "
				         "octets, each N, [N..M] or [N;M]",
				         eq + 1);
				return -EINVAL;
			}
		}
		if (*p) {
			snprintf(why, len, "%.100s: a filter is four octets",
			         eq + 1);
			return -EINVAL;
		}
		s->filtered = true;
	}
	if (s->weight < 0 && !s->filtered) {
		snprintf(why, len, "%.100s: an allow list (a negative weight) "
		         "needs a reply filter (zone=127.0.[0..255].[1..3]*%d): "
		         "a list that answers every name (its error codes, a "
		         "resolver that rewrites NXDOMAIN) would trust every "
		         "client", buf, s->weight);
		return -EINVAL;
	}
	if (!buf[0] || strlen(buf) > 200 || !strchr(buf, '.') ||
	    strspn(buf, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                "0123456789.-_") != strlen(buf)) {
		snprintf(why, len, "\"%.100s\": not a zone's name", buf);
		return -EINVAL;
	}
	strcpy(s->zone, buf);
	return 0;
}

int
dnsbl_sites_parse(const char *text, struct dnsbl_sites *out, char *why,
                  size_t len)
{
	memset(out, 0, sizeof(*out));
	for (const char *p = text;;) {
		size_t n;
		int r;

		p += strspn(p, " \t,");
		if (!*p)
			return 0;
		n = strcspn(p, " \t,");
		if (out->n == DNSBL_SITES_MAX) {
			snprintf(why, len, "more than %d sites", DNSBL_SITES_MAX);
			return -EINVAL;
		}
		r = site(p, n, &out->site[out->n], why, len);
		if (r < 0)
			return r;
		out->n++;
		p += n;
	}
}

bool
dnsbl_error_code(const uint8_t addr[4])
{
	return (addr[0] == 127 && addr[1] == 255 && addr[2] == 255) ||
	       (addr[0] == 127 && addr[1] == 0 && addr[2] == 0 &&
	        addr[3] == 255);
}

bool
dnsbl_site_takes(const struct dnsbl_site *s, const uint8_t addr[4])
{
	if (!s->filtered)
		return true;
	for (int i = 0; i < 4; i++) {
		bool in = false;

		for (int k = 0; k < s->nranges[i] && !in; k++)
			in = addr[i] >= s->lo[i][k] && addr[i] <= s->hi[i][k];
		if (!in)
			return false;
	}
	return true;
}

/* --- the lookups --- */

struct zone_query {
	struct dnsbl_check *c;
	size_t site;
	struct resolver_query *q; /* while asked */
};

struct dnsbl_check {
	const struct dnsbl_sites *sites;
	struct zone_query zq[DNSBL_SITES_MAX];
	size_t waiting;
	int depth; /* calls of ours on the stack */
	bool done;
	dnsbl_fn *fn;
	void *ctx;
	struct dnsbl_answer answer;
};

static void
release(struct dnsbl_check *c)
{
	for (size_t i = 0; i < c->sites->n; i++)
		resolver_cancel(c->zq[i].q);
	free(c);
}

static void
on_zone(const struct dns_answer *a, bool cached, void *ctx)
{
	struct zone_query *zq = ctx;
	struct dnsbl_check *c = zq->c;
	const struct dnsbl_site *s = &c->sites->site[zq->site];

	(void)cached;
	zq->q = NULL;
	c->waiting--;
	for (size_t i = 0; a->status == DNS_OK && i < a->n; i++)
		if (dnsbl_error_code(a->rec[i].addr)) {
			/* (whatever else it says: it did not answer) */
			c->answer.incomplete = true;
			snprintf(c->answer.error_zone,
			         sizeof(c->answer.error_zone), "%s", s->zone);
			memcpy(c->answer.error_code, a->rec[i].addr, 4);
			goto told;
		}
	if (a->status == DNS_OK) {
		for (size_t i = 0; i < a->n; i++) {
			struct strbuf b;

			if (!dnsbl_site_takes(s, a->rec[i].addr))
				continue;
			c->answer.score += s->weight;
			strbuf_continue(&b, c->answer.listed,
			                sizeof(c->answer.listed));
			strbuf_add(&b, "%s%s(%+d)", b.len ? "," : "", s->zone,
			           s->weight);
			break; /* a zone counts once */
		}
	} else if (a->status != DNS_NXDOMAIN && a->status != DNS_NODATA) {
		c->answer.incomplete = true;
	}
told:
	if (!c->waiting && !c->depth) {
		c->fn(&c->answer, c->ctx);
		release(c);
	}
}

int
dnsbl_start(struct resolver *r, const struct dnsbl_sites *sites, int family,
            const uint8_t *ip, dnsbl_fn *fn, void *ctx,
            struct dnsbl_check **out)
{
	struct dnsbl_check *c = calloc(1, sizeof(*c));
	char reversed[DNS_LABELS_MAX], name[400];

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->sites = sites;
	c->fn = fn;
	c->ctx = ctx;
	dns_address_labels(family, ip, true, reversed);
	c->waiting = sites->n;
	c->depth++;
	for (size_t i = 0; i < sites->n; i++) {
		struct zone_query *zq = &c->zq[i];

		zq->c = c;
		zq->site = i;
		snprintf(name, sizeof(name), "%s.%s", reversed,
		         sites->site[i].zone);
		if (resolver_ask(r, name, DNS_A, on_zone, zq, &zq->q) < 0) {
			c->waiting--;
			c->answer.incomplete = true;
		}
	}
	c->depth--;
	if (!c->waiting) {
		fn(&c->answer, ctx);
		release(c);
		return 0;
	}
	*out = c;
	return 0;
}

void
dnsbl_cancel(struct dnsbl_check *c)
{
	if (c)
		release(c);
}
