// SPDX-License-Identifier: GPL-2.0-or-later
/* The nft sets follow the greylist's store (grey_store.h's listener)
 * and the decider (its listener): what the store holds goes into the
 * pass and trap sets with the time each has left (at the start, and
 * again after a shared store's gap), and so does what this gateway's
 * decider decides and what other gateways decide, forget or allow.
 * Elements are only ever added here, or deleted when forgotten: the
 * sets' own timeouts end the rest. Without sets (the policy door alone)
 * nothing is held. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allow.h"
#include "follow_sets.h"
#include "grey_store.h"
#include "log.h"
#include "nftset_commit.h"

struct sets_follower {
	struct set_links links;
};

void
sets_prefix_of(const struct grey_client *c, struct nftset_prefix *p)
{
	p->family = c->family;
	p->prefix = c->prefix;
	memcpy(p->bytes, c->bytes, 16);
}

static int64_t
now_of(void *ctx)
{
	struct sets_follower *f = ctx;

	return loop_wall_sec(f->links.loop);
}

/* key's pass (or trap) in the kernel's set until expires, counted from
 * now. Return: 1 if held, 0 if not (ended, no sets, or refused:
 * counted). */
static int
hold_from(struct sets_follower *f, bool trap, const struct grey_client *key,
          int64_t expires, int64_t now)
{
	struct nftset_prefix p;
	int r;

	if (expires <= now || !f->links.nft)
		return 0;
	sets_prefix_of(key, &p);
	r = nftset_add(f->links.nft,
	               trap ? NFTSET_TRAP : nftset_pass_kind(f->links.nft, &p), &p,
	               (uint64_t)(expires - now) * 1000,
	               trap ? "greygate trap" : "greygate pass");
	if (r < 0) {
		/* (a key of another length than the sets': stored under
		 * another client_prefix, or another gateway's settings) */
		char text[64];

		nftset_failed(f->links.nft, trap ? "trap" : "pass",
		            grey_client_format(key, text, sizeof(text)), r);
		return 0;
	}
	return 1;
}

static int
hold(void *ctx, bool trap, const struct grey_client *key, int64_t expires)
{
	struct sets_follower *f = ctx;

	return hold_from(f, trap, key, expires, loop_wall_sec(f->links.loop));
}

/* The decider's listener: a pass, a refresh (or one already passed,
 * yet here: the kernel lost it, its timeout ran out first, or a race)
 * or a trap goes to the kernel with the time it has left at the
 * attempt's clock, at once: in the set before the client hears its
 * verdict (the rest of a turn's changes go before the loop waits). */
static void
decided(void *ctx, const struct grey_attempt *a, const struct grey_decision *d)
{
	struct sets_follower *f = ctx;
	int held = 0;

	if (d->action == GREY_PASS || d->action == GREY_REFRESH)
		held = hold_from(f, false, &d->client, d->expires, a->now);
	else if (d->action == GREY_TRAP)
		held = hold_from(f, true, &d->client, d->expires, a->now);
	if (held)
		nftset_commit_now(f->links.nft);
}

static void
forgot(void *ctx, bool trap, const struct grey_client *key)
{
	struct sets_follower *f = ctx;
	struct nftset_prefix p;
	char text[64];
	int r;

	if (!f->links.nft)
		return;
	/* (deleting what is not there is not an error) */
	sets_prefix_of(key, &p);
	r = nftset_del(f->links.nft,
	               trap ? NFTSET_TRAP : nftset_pass_kind(f->links.nft, &p),
	               &p);
	/* (an address forgotten: its own pass too, a trusted client's) */
	if (r >= 0 && trap &&
	    nftset_pass_kind(f->links.nft, &p) == NFTSET_TRUST)
		r = nftset_del(f->links.nft, NFTSET_TRUST, &p);
	if (r < 0)
		nftset_failed(f->links.nft, "forget",
		            grey_client_format(key, text, sizeof(text)), r);
}

/* As greygatectl allow would have made it here. */
static int
allowed(void *ctx, const struct grey_client *net, int64_t expires,
        const char *comment, bool apply)
{
	struct sets_follower *f = ctx;
	struct allow_runtime e = {0};
	int r;

	if (expires == GREY_ALLOW_REMOVED) {
		r = allow_lists_remove(f->links.allow, net, apply);
		if (r > 0) {
			char cidr[64];

			log_info("action=disallow, client=%s (from the shared "
			         "store)",
			         grey_client_format(net, cidr, sizeof(cidr)));
		}
		return r < 0 ? -1 : r;
	}
	if (expires && expires <= loop_wall_sec(f->links.loop))
		return 0;
	if (!allow_text_ok(comment) || strlen(comment) >= sizeof(e.comment))
		return -1;
	grey_client_format(net, e.cidr, sizeof(e.cidr));
	snprintf(e.comment, sizeof(e.comment), "%s", comment);
	e.expires = expires;
	r = allow_lists_put(f->links.allow, &e, apply);
	if (r > 0 && apply)
		log_info("action=allow, client=%s, expires=%lld, comment=%s "
		         "(from the shared store)",
		         e.cidr, (long long)e.expires, e.comment);
	return r < 0 ? -1 : r;
}

static void
commit(void *ctx)
{
	struct sets_follower *f = ctx;

	nftset_commit_now(f->links.nft);
}

static void
rebuilt(void *ctx, int err, uint64_t passes, uint64_t traps, uint64_t allows)
{
	struct sets_follower *f = ctx;

	/* The allow entries taken, in the sets in one batch. */
	if (allows && allow_lists_apply(f->links.allow) < 0)
		log_warnx("allow: %s's entries not applied",
		          grey_store_where(f->links.records));
	if (err < 0)
		log_warnx("store: the sets' rebuild from %s was cut short "
		          "(%" PRIu64 " passes restored so far): it starts "
		          "again when the store answers",
		          grey_store_where(f->links.records), passes);
	else
		log_info("nft: rebuilt from %s: %" PRIu64 " passed and "
		         "%" PRIu64 " trapped clients, %" PRIu64
		         " new allow entries",
		         grey_store_where(f->links.records), passes, traps,
		         allows);
}

int
sets_follow_store(const struct set_links *links, struct sets_follower **out)
{
	struct sets_follower *f = calloc(1, sizeof(*f));
	int r;

	*out = f;
	if (!f)
		return -ENOMEM;
	f->links = *links;

	const struct grey_store_listener l = {
	        .now = now_of,
	        .hold = hold,
	        .forgot = forgot,
	        .allowed = allowed,
	        .commit = commit,
	        .rebuilt = rebuilt,
	        .ctx = f,
	};
	const struct decider_listener sets = {.decided = decided, .ctx = f};

	r = decider_listen(f->links.decider, &sets);
	return r < 0 ? r : grey_store_follow(f->links.records, &l);
}

void
sets_follower_free(struct sets_follower *f)
{
	free(f);
}
