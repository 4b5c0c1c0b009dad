// SPDX-License-Identifier: GPL-2.0-or-later
/* Does the MAIL FROM domain take mail (sender_domain.h): MX first; only
 * when the name has none, A and AAAA, both in flight at once. Answers
 * may come inside the calls that ask (from the cache): the lookup is
 * told only once nothing of it is on the stack. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sender_domain.h"

/* The longest domain name as text (RFC 1035: 253 characters). */
#define DOMAIN_MAX 253

struct sender_domain {
	struct resolver *r;
	char *domain;
	sender_domain_fn *fn;
	void *ctx;
	struct resolver_query *mx_q, *a_q, *aaaa_q;
	unsigned waiting; /* address questions not yet answered */
	bool temperror;   /* an address question failed */
	int depth;        /* calls of ours on the stack */
	bool done;        /* result holds the answer */
	enum sender_domain_result result;
};

bool
sender_domain_of(const char *sender, char *out, size_t len)
{
	const char *at = sender ? strrchr(sender, '@') : NULL;
	size_t n;

	if (len)
		out[0] = 0;
	if (!at || !at[1] || at[1] == '[')
		return false;
	n = strlen(at + 1);
	if (at[n] == '.') /* (at[n] is the domain's last character) */
		n--;
	if (!n || n > DOMAIN_MAX || n >= len)
		return false;
	memcpy(out, at + 1, n);
	out[n] = 0;
	return true;
}

static void
release(struct sender_domain *d)
{
	resolver_cancel(d->mx_q);
	resolver_cancel(d->a_q);
	resolver_cancel(d->aaaa_q);
	free(d->domain);
	free(d);
}

static void
finish(struct sender_domain *d, enum sender_domain_result r)
{
	if (d->done)
		return;
	d->done = true;
	d->result = r;
}

/* Told once done and nothing of ours is on the stack. */
static void
settle(struct sender_domain *d)
{
	if (!d->done || d->depth)
		return;
	d->fn(d->result, d->ctx);
	release(d);
}

static void
on_address(const struct dns_answer *a, bool cached, void *ctx,
           struct resolver_query **q)
{
	struct sender_domain *d = ctx;

	(void)cached;
	*q = NULL;
	d->waiting--;
	if (a->status == DNS_OK)
		finish(d, SENDER_DOMAIN_MAIL);
	else if (a->status != DNS_NXDOMAIN && a->status != DNS_NODATA)
		d->temperror = true;
	/* None only when both answered: the other may have an address. */
	if (!d->waiting)
		finish(d, d->temperror ? SENDER_DOMAIN_TEMPERROR
		                       : SENDER_DOMAIN_NONE);
	settle(d);
}

static void
on_a(const struct dns_answer *a, bool cached, void *ctx)
{
	struct sender_domain *d = ctx;

	on_address(a, cached, ctx, &d->a_q);
}

static void
on_aaaa(const struct dns_answer *a, bool cached, void *ctx)
{
	struct sender_domain *d = ctx;

	on_address(a, cached, ctx, &d->aaaa_q);
}

/* Is this MX record RFC 7505's null MX (the root as its host)? */
static bool
null_mx(const struct dns_record *rec)
{
	return !rec->text || !rec->text[0] || !strcmp(rec->text, ".");
}

static void
on_mx(const struct dns_answer *a, bool cached, void *ctx)
{
	struct sender_domain *d = ctx;

	(void)cached;
	d->mx_q = NULL;
	switch (a->status) {
	case DNS_OK: {
		bool host = false;

		for (size_t i = 0; i < a->n; i++)
			host |= !null_mx(&a->rec[i]);
		/* (records past the answer's room were hosts: no null MX
		 * comes with others) */
		finish(d, host || a->dropped || !a->n ? SENDER_DOMAIN_MAIL
		                                      : SENDER_DOMAIN_NULL_MX);
		break;
	}
	case DNS_NXDOMAIN:
		finish(d, SENDER_DOMAIN_NONE);
		break;
	case DNS_NODATA:
		/* No MX: the domain's own address is its implicit MX. Both
		 * asked before either answer is judged. */
		d->waiting = 2;
		d->depth++;
		if (resolver_ask(d->r, d->domain, DNS_A, on_a, d, &d->a_q) <
		    0) {
			d->waiting--;
			d->temperror = true;
		}
		if (!d->done && resolver_ask(d->r, d->domain, DNS_AAAA, on_aaaa,
		                             d, &d->aaaa_q) < 0) {
			d->waiting--;
			d->temperror = true;
		}
		if (!d->waiting)
			finish(d, d->temperror ? SENDER_DOMAIN_TEMPERROR
			                       : SENDER_DOMAIN_NONE);
		d->depth--;
		break;
	default:
		finish(d, SENDER_DOMAIN_TEMPERROR);
		break;
	}
	settle(d);
}

int
sender_domain_start(struct resolver *r, const char *domain,
                    sender_domain_fn *fn, void *ctx, struct sender_domain **out)
{
	struct sender_domain *d;
	int rc;

	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->domain = strdup(domain);
	if (!d->domain) {
		free(d);
		return -ENOMEM;
	}
	d->r = r;
	d->fn = fn;
	d->ctx = ctx;
	d->depth++;
	rc = resolver_ask(r, d->domain, DNS_MX, on_mx, d, &d->mx_q);
	d->depth--;
	if (rc < 0) {
		release(d);
		return rc;
	}
	if (d->done) {
		settle(d);
		return 0;
	}
	*out = d;
	return 0;
}

void
sender_domain_cancel(struct sender_domain *d)
{
	if (d)
		release(d);
}

const char *
sender_domain_result_name(enum sender_domain_result r)
{
	static const char *const names[] = {"mail", "none", "null-mx",
	                                    "temperror"};

	return (unsigned)r < sizeof(names) / sizeof(names[0]) ? names[r] : "?";
}
