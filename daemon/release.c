// SPDX-License-Identifier: GPL-2.0-or-later
/* greygatectl release (issue 32): the admin on the phone with a sender
 * waiting for a one-time code lets that client pass now, as if its
 * retry had come after the delay. Through the store interface (a shared
 * store tells every gateway, as for any pass) and the decider's
 * listeners (the sets), logged with who asked. With a sender and a
 * recipient, only a client that has such a triplet waiting is released
 * (a typo does not open the gate to anyone): the client's own, or the
 * pool's when the sender's SPF pooled it (issue 31). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "gateway-int.h"
#include "grey_store.h"
#include "log.h"

struct release {
	struct gateway *gw;
	struct grey_records w;
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
		         w->want_triplet ? w->sender : "",
		         w->want_triplet ? ", recipient=" : "",
		         w->want_triplet ? w->rcpt : "",
		         rl->gw->cfg->grey.pass_ttl_sec, rl->who);
	else if (rl->r == -ENOENT)
		log_info("release: %s has no triplet %s -> %s waiting: not "
		         "released (asked by %s)",
		         key, w->sender, w->rcpt, rl->who);
	else
		log_warnx("release: %s not released (%s; asked by %s)", key,
		          strerror(-rl->r), rl->who);
}

static void
on_fetched(struct grey_records *w, int r, void *ctx)
{
	struct release *rl = ctx;
	struct gateway *gw = rl->gw;
	int64_t now = loop_wall_sec(gw->loop);
	char key[64];

	if (r >= 0 && w->want_triplet && w->triplet_found != STORE_FOUND &&
	    !rl->asked_pool) {
		/* Not the client's own: the pool's, if its sender was
		 * pooled. (Asked again whole: the client's pass and trap as
		 * they are now.) */
		rl->asked_pool = true;
		grey_pool_client(&w->triplet_key);
		w->trap_found = w->pass_found = w->triplet_found = 0;
		grey_store_fetch(gw->records, w, now, on_fetched, rl);
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
		                         .sender = w->sender,
		                         .rcpt = w->rcpt,
		                         .helo = ""};

		if (w->pass_found != STORE_FOUND) {
			memset(&w->pass, 0, sizeof(w->pass));
			w->pass.since = now;
		}
		rl->expires = now + gw->cfg->grey.pass_ttl_sec;
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
		rl->r = grey_store_apply(gw->records, &before, w, &d);
		if (rl->r == 0)
			decider_decided(gw->decider, &a, &d, false);
	}
	say(rl, key);
	if (rl->on_heap)
		free(rl);
}

int
gateway_release(struct gateway *gw, const char *client, const char *sender,
                const char *rcpt, const char *who, char *key_out,
                size_t key_len)
{
	struct release stack = {0}, *rl = &stack;
	struct grey_client key;
	int r = gateway_key_of(gw, client, NULL, &key);

	if (r < 0)
		return r;
	grey_client_format(&key, key_out, key_len);
	if (!sender != !rcpt)
		return -EDESTADDRREQ;
	if (!gw->records->completes_inline) {
		rl = calloc(1, sizeof(*rl));
		if (!rl)
			return -ENOMEM;
		rl->on_heap = true;
	}
	rl->gw = gw;
	snprintf(rl->who, sizeof(rl->who), "%s", who ? who : "?");
	rl->w.want_pass = true;
	rl->w.pass_key = key;
	rl->w.trap_key = key;
	rl->w.triplet_key = key;
	if (sender) {
		if (grey_normalize_sender(sender, rl->w.sender,
		                          sizeof(rl->w.sender)) < 0 ||
		    grey_normalize_rcpt(rcpt, rl->w.rcpt, sizeof(rl->w.rcpt)) <
		            0) {
			if (rl->on_heap)
				free(rl);
			return -ENAMETOOLONG;
		}
		rl->w.want_triplet = true;
	}
	grey_store_fetch(gw->records, &rl->w, loop_wall_sec(gw->loop),
	                 on_fetched, rl);
	if (rl != &stack)
		return GREY_STORE_UNDER_WAY;
	return stack.r;
}
