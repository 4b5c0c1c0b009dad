// SPDX-License-Identifier: GPL-2.0-or-later
/* The passes a dead greygated's persistent table still held go back
 * into the store when the store lacks them (issue 29 R7): a greygated
 * that could not save its last writes (a full disk) or whose store was
 * emptied meanwhile (a shared Redis) left them in the kernel's pass
 * sets, and nothing else knows of them. The sets follow the store
 * (follow_sets.c); here, once at the start, the store follows the kept
 * sets: each kept pass is fetched, and one the store lacks (or holds
 * for less time) is written with the time the kernel had left for it,
 * and put back in the set. A few fetches at a time: a shared store
 * answers later, and refuses too many at once. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "follow_sets.h"
#include "grey_store.h"
#include "log.h"
#include "nftset_commit.h"
#include "nftset.h"

/* Fetches under way at once (a shared store's own bound is higher). */
#define ADOPT_IN_FLIGHT 32
/* A stored pass that ends this much before the kernel's is the same
 * pass (the kernel counts milliseconds, the store seconds, and the
 * seconds moved on since). */
#define ADOPT_SLACK_SEC 5

struct adoption {
	struct set_links links;
	const struct nftset_elem *kept;
	size_t n, next, in_flight;
	size_t adopted, held, failed;
	bool pumping, cancelled;
};

struct adopt_one {
	struct adoption *a;
	struct grey_records w;
	const struct nftset_elem *e;
};

static void pump(struct adoption *a);

static void
finish(struct adoption *a)
{
	const struct set_links *l = &a->links;

	if (!a->cancelled) {
		/* (the sets, and the store at once) */
		nftset_commit_now(l->nft);
		decider_commit(l->decider);
		log_info("nft: %zu passed client(s) the kept table held and "
		         "%s lacked were written back into it (their last "
		         "writes were lost: a full disk, or an emptied "
		         "store), %zu it held already, %zu could not be "
		         "written (kept in the set until their time ends)",
		         a->adopted, grey_store_where(l->records), a->held,
		         a->failed);
	}
	nftset_kept_passes_done(l->nft);
	free(a);
}

/* The pass e's key, in the set for the time the kernel had left. */
static void
hold(struct adoption *a, const struct nftset_elem *e)
{
	struct nftset_prefix p = e->prefix;
	char text[64];
	int r = nftset_add(a->links.nft, NFTSET_PASS, &p, e->expires_ms,
	                   "greygate pass");

	if (r < 0) {
		struct grey_client c = {.family = p.family, .prefix = p.prefix};

		memcpy(c.bytes, p.bytes, sizeof(c.bytes));
		nftset_failed(a->links.nft, "pass",
		            grey_client_format(&c, text, sizeof(text)), r);
	}
}

static void
on_fetched(struct grey_records *w, int r, void *ctx)
{
	struct adopt_one *one = ctx;
	struct adoption *a = one->a;
	const struct nftset_elem *e = one->e;
	int64_t now = loop_wall_sec(a->links.loop);
	int64_t expires = now + (int64_t)(e->expires_ms / 1000);

	a->in_flight--;
	if (r == -ECANCELED) {
		a->cancelled = true;
	} else if (r < 0) {
		a->failed++;
		hold(a, e);
	} else if (w->pass_found == STORE_FOUND &&
	           w->pass.expires + ADOPT_SLACK_SEC >= expires) {
		a->held++; /* (the store's rebuild put it in the set) */
	} else {
		struct grey_records after = *w;
		/* When it was last made or refreshed: its whole timeout
		 * less what is left. */
		int64_t refreshed =
		        now - (e->timeout_ms > e->expires_ms
		                       ? (int64_t)((e->timeout_ms -
		                                    e->expires_ms) / 1000)
		                       : 0);
		struct grey_decision d = {.action = GREY_PASS,
		                          .reason = GREY_REASON_PASSED,
		                          .client = w->pass_key,
		                          .expires = expires};
		char text[64];

		if (w->pass_found != STORE_FOUND) {
			memset(&after.pass, 0, sizeof(after.pass));
			after.pass.since = refreshed;
		}
		after.pass.expires = expires;
		after.pass.refreshed = refreshed;
		after.pass_dirty = true;
		after.trap_dirty = after.triplet_dirty = false;
		if (grey_store_apply(a->links.records, w, &after, &d) < 0) {
			a->failed++;
		} else {
			a->adopted++;
			log_debug("nft: %s's pass, kept in the table, written "
			          "back into %s (ends in %lld s)",
			          grey_client_format(&w->pass_key, text,
			                             sizeof(text)),
			          grey_store_where(a->links.records),
			          (long long)(expires - now));
		}
		hold(a, e);
	}
	free(one);
	if (!a->pumping)
		pump(a);
}

static void
pump(struct adoption *a)
{
	a->pumping = true;
	while (!a->cancelled && a->next < a->n &&
	       a->in_flight < ADOPT_IN_FLIGHT) {
		struct adopt_one *one = calloc(1, sizeof(*one));
		const struct nftset_elem *e = &a->kept[a->next];

		if (!one)
			break; /* (again when one in flight ends) */
		a->next++;
		one->a = a;
		one->e = e;
		one->w.want_pass = true;
		one->w.pass_key.family = e->prefix.family;
		one->w.pass_key.prefix = e->prefix.prefix;
		memcpy(one->w.pass_key.bytes, e->prefix.bytes,
		       sizeof(one->w.pass_key.bytes));
		one->w.triplet_key = one->w.pass_key;
		a->in_flight++;
		grey_store_fetch(a->links.records, &one->w,
		                 loop_wall_sec(a->links.loop), on_fetched, one);
	}
	a->pumping = false;
	/* (all told, cancelled, or out of memory with none in flight) */
	if (a->in_flight == 0)
		finish(a);
}

int
sets_adopt_kept(const struct set_links *l)
{
	const struct nftset_elem *kept;
	size_t n = l->nft ? nftset_kept_passes(l->nft, &kept) : 0;
	struct adoption *a;

	if (!n)
		return 0;
	a = calloc(1, sizeof(*a));
	if (!a) {
		log_warnx("nft: no memory to write the %zu passes the kept "
		          "table held back into %s: they last in the set "
		          "until greygated stops",
		          n, grey_store_where(l->records));
		return -ENOMEM;
	}
	a->links = *l;
	a->kept = kept;
	a->n = n;
	log_info("nft: the table kept from before (persist) held %zu "
	         "passed client(s): those %s lacks are written back into "
	         "it",
	         n, grey_store_where(l->records));
	pump(a);
	return 0;
}
