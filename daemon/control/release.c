// SPDX-License-Identifier: GPL-2.0-or-later
/* greygatectl release (issue 32): the admin on the phone with a sender
 * waiting for a one-time code lets that client pass now, as if its
 * retry had come after the delay. Through the store interface (a shared
 * store tells every gateway, as for any pass) and the decider's
 * listeners (the sets), logged with who asked. With a sender and a
 * recipient, only a client that has such a triplet waiting is released
 * (a typo does not open the gate to anyone): the client's own, or the
 * pool's when the sender's SPF pooled it (issue 31). */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "commands-int.h"
#include "grey_store.h"
#include "log.h"
#include "follow_sets.h"
#include "nftset_commit.h"

struct release {
	const struct command_links *links;
	struct grey_records w;
	/* the sender and recipient asked for, normalized (w's are their
	 * hashes with privacy): for the log */
	char sender[GREY_ADDR_MAX], rcpt[GREY_ADDR_MAX];
	char who[128];
	int r;       /* 0 released, -ENOENT no such triplet waiting, -errno */
	bool on_heap;
	bool asked_pool; /* the pool's triplet looked for too */
	int64_t expires;
};

static void
say(const struct release *rl, const char *key)
{
	const struct grey_records *w = &rl->w;

	if (rl->r == 0)
		log_info("action=pass, reason=released, key=%s%s%s%s%s, "
		         "ttl=%u, by=%s",
		         key, w->want_triplet ? ", sender=" : "",
		         w->want_triplet ? rl->sender : "",
		         w->want_triplet ? ", recipient=" : "",
		         w->want_triplet ? rl->rcpt : "",
		         rl->links->cfg.grey.pass_ttl_sec, rl->who);
	else if (rl->r == -ENOENT)
		log_info("release: %s has no triplet %s -> %s waiting: not "
		         "released (asked by %s)",
		         key, rl->sender, rl->rcpt, rl->who);
	else
		log_warnx("release: %s not released (%s; asked by %s)", key,
		          strerror(-rl->r), rl->who);
}

static void
on_fetched(struct grey_records *w, int r, void *ctx)
{
	struct release *rl = ctx;
	const struct command_links *links = rl->links;
	int64_t now = loop_wall_sec(links->loop);
	char key[64];

	if (r >= 0 && w->want_triplet && w->triplet_found != STORE_FOUND &&
	    !rl->asked_pool) {
		/* Not the client's own: the pool's, if its sender was
		 * pooled. (Asked again whole: the client's pass and trap as
		 * they are now.) */
		rl->asked_pool = true;
		grey_pool_client(&w->triplet_key);
		w->trap_found = w->pass_found = w->triplet_found = 0;
		grey_store_fetch(links->records, w, now, on_fetched, rl);
		return;
	}
	grey_client_format(&w->pass_key, key, sizeof(key));
	if (r < 0) {
		rl->r = r;
	} else if (w->want_triplet && w->triplet_found != STORE_FOUND) {
		rl->r = -ENOENT;
	} else {
		struct grey_records before = *w;
		struct grey_decision d = {.action = GREY_PASS,
		                          .reason = GREY_REASON_RETRY_PASSED,
		                          .client = w->pass_key};
		struct grey_attempt a = {.kind = GREY_ATTEMPT_RCPT,
		                         .now = now,
		                         .sender = rl->sender,
		                         .rcpt = rl->rcpt,
		                         .helo = ""};

		if (w->pass_found != STORE_FOUND) {
			memset(&w->pass, 0, sizeof(w->pass));
			w->pass.since = now;
		}
		rl->expires = now + links->cfg.grey.pass_ttl_sec;
		if (w->pass.expires < rl->expires)
			w->pass.expires = rl->expires;
		w->pass.refreshed = now;
		w->pass_dirty = true;
		w->trap_dirty = false;
		/* (the triplet's delivery is awaited, as after a retry) */
		if (w->triplet_found == STORE_FOUND) {
			w->triplet.awaiting = STORE_AWAITING_DELIVERY;
			w->triplet.last_seen = now;
			w->triplet_dirty = true;
		}
		d.expires = w->pass.expires;
		a.client.family = w->pass_key.family;
		memcpy(a.client.bytes, w->pass_key.bytes, 16);
		rl->r = grey_store_apply(links->records, &before, w, &d);
		if (rl->r == 0)
			decider_decided(links->decider, &a, &d, false);
	}
	say(rl, key);
	if (rl->on_heap)
		free(rl);
}

int
command_release(const struct command_links *links, const char *client,
                const char *sender, const char *rcpt, const char *who,
                char *key_out, size_t key_len)
{
	struct release stack = {0}, *rl = &stack;
	struct grey_client key;
	int r = command_key_of(links, client, NULL, &key);

	if (r < 0)
		return r;
	grey_client_format(&key, key_out, key_len);
	if (!sender != !rcpt)
		return -EDESTADDRREQ;
	if (!links->records->completes_inline) {
		rl = calloc(1, sizeof(*rl));
		if (!rl)
			return -ENOMEM;
		rl->on_heap = true;
	}
	rl->links = links;
	snprintf(rl->who, sizeof(rl->who), "%s", who ? who : "?");
	rl->w.want_pass = true;
	rl->w.pass_key = key;
	rl->w.trap_key = key;
	rl->w.triplet_key = key;
	if (sender) {
		if (grey_normalize_sender(sender, rl->sender,
		                          sizeof(rl->sender)) < 0 ||
		    grey_normalize_rcpt(rcpt, rl->rcpt, sizeof(rl->rcpt)) < 0) {
			if (rl->on_heap)
				free(rl);
			return -ENAMETOOLONG;
		}
		memcpy(rl->w.sender, rl->sender, sizeof(rl->w.sender));
		memcpy(rl->w.rcpt, rl->rcpt, sizeof(rl->w.rcpt));
		grey_records_hide(&links->cfg.grey, &rl->w);
		rl->w.want_triplet = true;
	}
	grey_store_fetch(links->records, &rl->w, loop_wall_sec(links->loop),
	                 on_fetched, rl);
	if (rl != &stack)
		return GREY_STORE_UNDER_WAY;
	return stack.r;
}

/* --- forget --- */

int
command_key_of(const struct command_links *links, const char *client,
               struct grey_client *given_out, struct grey_client *key)
{
	struct grey_client given;
	struct grey_addr a;

	if (grey_cidr_parse(client, &given) < 0)
		return -EINVAL;
	/* A wider network holds many keys: not one at once. */
	if (given.prefix < (given.family == AF_INET ? links->cfg.grey.prefix4
	                                            : links->cfg.grey.prefix6))
		return -ERANGE;
	/* "198.51.100.7" and "198.51.100.0/24" both mean the key /24. */
	a.family = given.family;
	memcpy(a.bytes, given.bytes, 16);
	grey_client_of(&a,
	               given.family == AF_INET ? links->cfg.grey.prefix4
	                                       : links->cfg.grey.prefix6,
	               key);
	if (given_out)
		*given_out = given;
	return 0;
}

int
command_forget(const struct command_links *links, const char *client,
               char *key_out, size_t key_len)
{
	struct grey_client given, key;
	struct nftset_prefix p;
	int r = command_key_of(links, client, &given, &key), d;

	if (r < 0)
		return r;
	grey_client_format(&key, key_out, key_len);
	/* Traps are kept by single address. */
	bool one = given.prefix == (given.family == AF_INET ? 32 : 128);

	/* A store that answers later logs what it deleted then (a shared
	 * one tells every gateway, and drops them from their sets). */
	r = grey_store_forget(links->records, &key, one ? &given : NULL);
	if (r < 0)
		return r;
	if (one) {
		int t;

		sets_prefix_of(&given, &p);
		if (links->nft &&
		    ((t = nftset_del(links->nft, NFTSET_TRAP, &p)) < 0 ||
		     (nftset_pass_kind(links->nft, &p) == NFTSET_TRUST &&
		      (t = nftset_del(links->nft, NFTSET_TRUST, &p)) < 0)))
			nftset_failed(links->nft, "forget", client, t);
	}
	sets_prefix_of(&key, &p);
	if (links->nft && (d = nftset_del(links->nft, NFTSET_PASS, &p)) < 0)
		nftset_failed(links->nft, "forget", key_out, d);
	/* (at once: the answer says it is done) */
	nftset_commit_now(links->nft);
	decider_commit_sync(links->decider);
	if (r != GREY_STORE_UNDER_WAY)
		log_info("action=forget, client=%s, key=%s, records=%d", client,
		         key_out, r);
	return r;
}
