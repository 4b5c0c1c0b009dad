// SPDX-License-Identifier: GPL-2.0-or-later
/* The sets follow the shared store (see shared.h): every pass and trap
 * any gateway decides comes on the stream, on a connection of its own,
 * and goes into the kernel's sets with the time it has left; when the
 * stream cannot tell what was missed (this gateway's start, a Redis
 * emptied or trimmed past where it was), the sets are rebuilt from the
 * keys, on the decisions' connection, and the stream read on from
 * there. Elements are only ever added: the sets' own timeouts end them. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "allow.h"
#include "log.h"
#include "shared-int.h"

static int64_t
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A pass keyed as this gateway keys clients (another length is no pass
 * it could find, nor one to write back). */
static bool
our_key(const struct shared *sh, const struct grey_client *key)
{
	const struct grey_config *g = &sh->cfg.grey;

	return key->prefix == (key->family == AF_INET ? g->prefix4 : g->prefix6);
}

static void
on_event(const struct store_redis_event *ev, void *ctx)
{
	struct shared *sh = ctx;
	long long ms = strtoll(ev->id, NULL, 10);

	if (ms > 0)
		sh->lag_ms = wall_ms() - ms;
	if (log_is_shown(LOG_LEVEL_DEBUG)) {
		char key[64];

		log_debug("store: stream %s: %s %s until %" PRId64 " by %s",
		          ev->id,
		          ev->forget  ? "forget"
		          : ev->allow ? "allow"
		          : ev->trap  ? "trap"
		                      : "pass",
		          grey_client_format(&ev->key, key, sizeof(key)),
		          ev->expires, ev->by);
	}
	/* Its own come back too: already in the sets, added again (a
	 * gateway's name alone cannot tell it: two may share one). */
	if (!strcmp(ev->by, sh->cfg.hostname))
		sh->k.own_events++;
	else
		sh->k.events++;
	if (ev->forget && !ev->trap)
		shared_passes_forget(sh->passes, &ev->key);
	else if (!ev->forget && !ev->trap && !ev->allow &&
	         our_key(sh, &ev->key))
		shared_passes_put(sh->passes, &ev->key, 0, ev->expires);
	if (ev->forget) {
		sh->listener.forgot(sh->listener.ctx, ev->trap, &ev->key);
		return;
	}
	if (ev->allow) {
		int r = sh->listener.allowed(sh->listener.ctx, &ev->key,
		                             ev->expires, ev->comment, true);

		if (r < 0)
			sh->k.scan_bad++;
		else if (r > 0)
			sh->k.allows_taken++;
		return;
	}
	if (sh->listener.hold(sh->listener.ctx, ev->trap, &ev->key,
	                      ev->expires))
		sh->listener.commit(sh->listener.ctx); /* within the second */
}

/* --- the rebuild from the keys --- */

struct rebuild {
	struct shared *sh;
	int walk; /* passes, traps, allow entries */
	unsigned queued;
	uint64_t passes, traps_added, allows;
};

static void start_rebuild(struct shared *sh);

static int
on_client(const struct grey_client *key, const struct store_client *rec,
          void *ctx)
{
	struct rebuild *rb = ctx;

	if (rb->walk == 0 && our_key(rb->sh, key))
		shared_passes_put(rb->sh->passes, key, rec->since,
		                  rec->expires);
	const struct grey_store_listener *l = &rb->sh->listener;

	if (l->hold(l->ctx, rb->walk == 1, key, rec->expires)) {
		if (rb->walk == 1)
			rb->traps_added++;
		else
			rb->passes++;
	}
	if (++rb->queued % GREY_STORE_REBUILD_COMMIT_EVERY == 0)
		l->commit(l->ctx);
	return 0;
}

static void
on_allow_entry(const struct grey_client *net, int64_t expires,
               const char *comment, void *ctx)
{
	struct rebuild *rb = ctx;
	const struct grey_store_listener *l = &rb->sh->listener;
	int r = l->allowed(l->ctx, net, expires, comment, false);

	if (r < 0)
		rb->sh->k.scan_bad++;
	else if (r > 0)
		rb->sh->k.allows_taken++, rb->allows++;
}

static void
on_walked(int err, const struct store_redis_scan_counts *n, void *ctx)
{
	struct rebuild *rb = ctx;
	struct shared *sh = rb->sh;

	sh->k.scan_bad += n->bad;
	sh->listener.commit(sh->listener.ctx);
	if (err == 0 && rb->walk < 2) {
		rb->walk++;
		if ((rb->walk == 1
		             ? store_redis_scan_clients(sh->c, SHARED_PREFIX,
		                                        STORE_TRAP, on_client,
		                                        on_walked, rb)
		             : store_redis_scan_allows(sh->c, SHARED_PREFIX,
		                                       on_allow_entry,
		                                       on_walked, rb)) == 0)
			return;
		err = -EIO;
	}
	sh->reconciling = false;
	if (err < 0)
		sh->reconcile_again = true; /* once the connection is back */
	else
		sh->k.reconciled += rb->passes + rb->traps_added;
	sh->listener.rebuilt(sh->listener.ctx, err, rb->passes,
	                     rb->traps_added, rb->allows);
	free(rb);
	if (sh->reconcile_again && sh->agreed && !sh->closing)
		start_rebuild(sh);
}

static void
start_rebuild(struct shared *sh)
{
	struct rebuild *rb = calloc(1, sizeof(*rb));

	sh->reconcile_again = true; /* until it is under way */
	if (!rb || !sh->agreed)
		goto later;
	rb->sh = sh;
	if (store_redis_scan_clients(sh->c, SHARED_PREFIX, STORE_PASS,
	                             on_client, on_walked, rb) < 0)
		goto later;
	sh->reconcile_again = false;
	sh->reconciling = true;
	sh->k.reconciles++;
	return;
later:
	free(rb);
}

static void
on_gap(const char *why, void *ctx)
{
	struct shared *sh = ctx;

	log_info("store: %s: the sets are rebuilt from the keys", why);
	if (sh->reconciling)
		sh->reconcile_again = true; /* after the one under way */
	else
		start_rebuild(sh);
}

void
shared_follow_agreed(struct shared *sh)
{
	if (sh->follow && sh->reconcile_again && !sh->reconciling)
		start_rebuild(sh);
}

int
shared_follow(struct grey_store *s, const struct grey_store_listener *l)
{
	struct shared *sh = shared_of(s);
	sh->listener = *l;
	/* (agreed before the run-time allow list was read: shared now) */
	if (sh->agreed)
		shared_share_allow_list(sh);
	sh->follow = store_redis_follow_new(sh->loop, &sh->rcfg, SHARED_PREFIX,
	                                    "", on_event, on_gap, sh);
	return sh->follow ? 0 : -errno;
}

void
shared_follow_stop(struct shared *sh)
{
	store_redis_follow_free(sh->follow);
	sh->follow = NULL;
}
