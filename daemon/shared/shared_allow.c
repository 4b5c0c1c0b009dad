// SPDX-License-Identifier: GPL-2.0-or-later
/* Run-time allow entries on a shared store: each one made here written
 * to Redis (kept, oldest first, while Redis is away, and sent when it is
 * back), and this gateway's list offered to the store at every
 * agreement, so every gateway holds it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allow.h"
#include "grey_store.h"
#include "log.h"
#include "shared-int.h"
#include "store_redis.h"

/* One made here, on its way to the store (or waiting for Redis). */
struct shared_allow_entry {
	struct shared *sh;
	struct shared_allow_entry *next;
	struct grey_client net;
	int64_t expires;
	char comment[ALLOW_COMMENT_MAX];
};

static void send_allow(struct shared_allow_entry *a);

/* Redis away: kept, oldest first, sent when it is back (at most
 * ALLOWS_WAITING_MAX: then the oldest is said and dropped; it holds
 * here still). */
static void
allow_waits(struct shared_allow_entry *a)
{
	struct shared *sh = a->sh;
	bool removal = a->expires == GREY_ALLOW_REMOVED;
	char cidr[64];

	grey_client_format(&a->net, cidr, sizeof(cidr));
	if (sh->closing && removal) {
		/* (no list here holds it any more to write back: the others
		 * keep it until it is disallowed again there) */
		log_warnx("disallow %s: not written to the shared store "
		          "(greygated stopped): the other gateways still "
		          "allow it",
		          cidr);
		free(a);
		return;
	}
	if (sh->closing) {
		log_warnx("allow %s: not written to the shared store yet "
		          "(greygated stopped): written at its next start if "
		          "the store lacks it",
		          cidr);
		free(a);
		return;
	}
	if (sh->nallows_waiting == ALLOWS_WAITING_MAX) {
		struct shared_allow_entry *old = sh->allows_waiting;
		char old_cidr[64];

		sh->allows_waiting = old->next;
		if (!sh->allows_waiting)
			sh->allows_waiting_tail = NULL;
		sh->nallows_waiting--;
		sh->k.allows_failed++;
		log_warnx("allow %s: too many entries wait for Redis: the "
		          "other gateways will not have this one",
		          grey_client_format(&old->net, old_cidr,
		                             sizeof(old_cidr)));
		free(old);
	}
	log_info("%s %s: Redis is away: %s here now, at the other gateways "
	         "once it is back",
	         removal ? "disallow" : "allow", cidr,
	         removal ? "removed" : "allowed");
	a->next = NULL;
	if (sh->allows_waiting_tail)
		sh->allows_waiting_tail->next = a;
	else
		sh->allows_waiting = a;
	sh->allows_waiting_tail = a;
	sh->nallows_waiting++;
}

static void
on_allow_written(int err, void *ctx)
{
	struct shared_allow_entry *a = ctx;

	if (err == -EIO) {
		allow_waits(a);
		return;
	}
	if (err < 0) {
		char cidr[64];

		a->sh->k.allows_failed++;
		log_warnx("allow %s: the shared store refused it (%s): the "
		          "other gateways do not have it",
		          grey_client_format(&a->net, cidr, sizeof(cidr)),
		          strerror(-err));
	} else {
		a->sh->k.allows_sent++;
	}
	free(a);
}

static void
send_allow(struct shared_allow_entry *a)
{
	struct shared *sh = a->sh;
	int r = sh->agreed ? store_redis_allow(sh->c, SHARED_PREFIX, &a->net,
	                                       a->expires, a->comment,
	                                       sh->cfg.hostname,
	                                       on_allow_written, a)
	                   : -ENOTCONN;

	if (r == -ENOTCONN)
		allow_waits(a);
	else if (r < 0)
		on_allow_written(r, a);
}

/* Redis is back and agreed: the entries made meanwhile go (the ones
 * that ended meanwhile too: the store ends them at once). */
void
shared_send_waiting_allows(struct shared *sh)
{
	struct shared_allow_entry *a = sh->allows_waiting;

	sh->allows_waiting = sh->allows_waiting_tail = NULL;
	if (sh->nallows_waiting)
		log_info("allow: writing %zu entr%s made while Redis was away",
		         sh->nallows_waiting,
		         sh->nallows_waiting == 1 ? "y" : "ies");
	sh->nallows_waiting = 0;
	while (a) {
		struct shared_allow_entry *next = a->next;

		a->next = NULL;
		send_allow(a);
		a = next;
	}
}

/* This gateway's run-time list into a store that lacks some of it (a
 * new or emptied Redis, entries made while it was away and kept over a
 * restart): at every agreement, each entry written only if absent. */
struct allow_share {
	struct shared *sh;
	unsigned waiting, written;
};

static void
on_allow_shared(int err, bool written, void *ctx)
{
	struct allow_share *as = ctx;

	if (err == 0 && written) {
		as->written++;
		as->sh->k.allows_sent++;
	}
	if (--as->waiting)
		return;
	if (as->written)
		log_info("allow: %u run-time entr%s the shared store lacked "
		         "written from this gateway's list",
		         as->written, as->written == 1 ? "y" : "ies");
	free(as);
}

void
shared_share_allow_list(struct shared *sh)
{
	int64_t now = loop_wall_sec(sh->loop);
	struct allow_share *as;
	size_t n = 0;
	const struct allow_runtime *list =
	        sh->allow.entries ? sh->allow.entries(sh->allow.ctx, &n) : NULL;

	if (!n || !(as = calloc(1, sizeof(*as))))
		return;
	as->sh = sh;
	as->waiting = 1; /* held until every entry is sent */
	for (size_t i = 0; i < n; i++) {
		const struct allow_runtime *e = &list[i];
		struct grey_client net;

		if ((e->expires && e->expires <= now) ||
		    grey_cidr_parse(e->cidr, &net) < 0 ||
		    store_redis_allow_if_absent(sh->c, SHARED_PREFIX, &net,
		                                e->expires, e->comment,
		                                sh->cfg.hostname,
		                                on_allow_shared, as) < 0)
			continue;
		as->waiting++;
	}
	on_allow_shared(-EAGAIN, false, as); /* (the hold let go) */
}

void
shared_share_allow(struct grey_store *s, const struct grey_client *net,
                  int64_t expires, const char *comment)
{
	struct shared *sh = shared_of(s);
	struct shared_allow_entry *a = calloc(1, sizeof(*a));

	if (!a) {
		sh->k.allows_failed++;
		log_warnx("allow: no memory to share it: the other gateways "
		          "do not have it");
		return;
	}
	a->sh = sh;
	a->net = *net;
	a->expires = expires;
	snprintf(a->comment, sizeof(a->comment), "%s", comment);
	send_allow(a);
}

void
shared_allows_drop(struct shared *sh)
{
	while (sh->allows_waiting) {
		struct shared_allow_entry *a = sh->allows_waiting;

		sh->allows_waiting = a->next;
		allow_waits(a); /* (closing: said, freed) */
	}
}
