// SPDX-License-Identifier: GPL-2.0-or-later
/* Forward-confirmed reverse DNS (fcrdns.h): the PTR, then A or AAAA of
 * each name it gives, all in flight at once; the first name that
 * resolves back to the address ends it. Answers may come inside the
 * calls that ask (from the cache): the lookup is told only once nothing
 * of it is on the stack. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fcrdns.h"

struct forward {
	struct fcrdns *f;
	struct resolver_query *q; /* while asked */
	char *name;
};

struct fcrdns {
	struct resolver *r;
	int family;
	uint8_t addr[16];
	fcrdns_fn *fn;
	void *ctx;
	struct resolver_query *ptr_q;
	struct forward fwd[FCRDNS_NAMES_MAX];
	size_t nfwd, waiting;
	bool temperror; /* a forward lookup failed */
	int depth;      /* calls of ours on the stack */
	bool done;      /* answer holds the result */
	struct fcrdns_answer answer;
};

static void
release(struct fcrdns *f)
{
	resolver_cancel(f->ptr_q);
	for (size_t i = 0; i < f->nfwd; i++) {
		resolver_cancel(f->fwd[i].q);
		free(f->fwd[i].name);
	}
	free(f);
}

static void
finish(struct fcrdns *f, enum fcrdns_result result, const char *name)
{
	if (f->done)
		return;
	f->done = true;
	f->answer.result = result;
	strncpy(f->answer.name, name ? name : "", sizeof(f->answer.name) - 1);
}

/* Told once done and nothing of ours is on the stack. */
static void
settle(struct fcrdns *f)
{
	if (!f->done || f->depth)
		return;
	f->fn(&f->answer, f->ctx);
	release(f);
}

static void
on_forward(const struct dns_answer *a, bool cached, void *ctx)
{
	struct forward *fw = ctx;
	struct fcrdns *f = fw->f;
	size_t len = f->family == AF_INET ? 4 : 16;

	(void)cached;
	fw->q = NULL;
	f->waiting--;
	if (a->status == DNS_OK) {
		for (size_t i = 0; i < a->n; i++)
			if (!memcmp(a->rec[i].addr, f->addr, len))
				finish(f, FCRDNS_CONFIRMED, fw->name);
	} else if (a->status != DNS_NXDOMAIN && a->status != DNS_NODATA) {
		f->temperror = true;
	}
	/* Unconfirmed only when every name answered: a name that timed
	 * out might have confirmed it. */
	if (!f->waiting)
		finish(f, f->temperror ? FCRDNS_TEMPERROR : FCRDNS_UNCONFIRMED,
		       f->temperror ? NULL : f->fwd[0].name);
	settle(f);
}

static void
on_ptr(const struct dns_answer *a, bool cached, void *ctx)
{
	struct fcrdns *f = ctx;
	enum dns_type type = f->family == AF_INET ? DNS_A : DNS_AAAA;

	(void)cached;
	f->ptr_q = NULL;
	if (a->status == DNS_NXDOMAIN || a->status == DNS_NODATA) {
		finish(f, FCRDNS_NO_PTR, NULL);
		settle(f);
		return;
	}
	if (a->status != DNS_OK) {
		finish(f, FCRDNS_TEMPERROR, NULL);
		settle(f);
		return;
	}
	for (size_t i = 0; i < a->n && f->nfwd < FCRDNS_NAMES_MAX; i++) {
		struct forward *fw = &f->fwd[f->nfwd];

		fw->f = f;
		fw->name = strdup(a->rec[i].text);
		if (!fw->name) {
			f->temperror = true;
			continue;
		}
		f->nfwd++;
	}
	if (!f->nfwd) {
		finish(f, FCRDNS_TEMPERROR, NULL);
		settle(f);
		return;
	}
	/* Every name asked before any answer is judged (answers from the
	 * cache come inside resolver_ask). */
	f->waiting = f->nfwd;
	f->depth++;
	for (size_t i = 0; i < f->nfwd && !f->done; i++) {
		struct forward *fw = &f->fwd[i];

		if (resolver_ask(f->r, fw->name, type, on_forward, fw, &fw->q) <
		    0) {
			f->waiting--;
			f->temperror = true;
			if (!f->waiting)
				finish(f, FCRDNS_TEMPERROR, NULL);
		}
	}
	f->depth--;
	settle(f);
}

int
fcrdns_start(struct resolver *r, int family, const uint8_t *addr,
             fcrdns_fn *fn, void *ctx, struct fcrdns **out)
{
	char reverse[DNS_REVERSE_MAX];
	struct fcrdns *f;
	int rc;

	*out = NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->r = r;
	f->family = family;
	memcpy(f->addr, addr, family == AF_INET ? 4 : 16);
	f->fn = fn;
	f->ctx = ctx;
	dns_reverse_name(family, addr, reverse);
	f->depth++;
	rc = resolver_ask(r, reverse, DNS_PTR, on_ptr, f, &f->ptr_q);
	f->depth--;
	if (rc < 0) {
		release(f);
		return rc;
	}
	if (f->done) {
		settle(f);
		return 0;
	}
	*out = f;
	return 0;
}

void
fcrdns_cancel(struct fcrdns *f)
{
	if (f)
		release(f);
}

const char *
fcrdns_result_name(enum fcrdns_result r)
{
	static const char *const names[] = {"confirmed", "no-ptr",
	                                    "unconfirmed", "temperror"};

	return (unsigned)r < sizeof(names) / sizeof(names[0]) ? names[r] : "?";
}
