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
#include "gateway-int.h"
#include "log.h"
#include "shared-int.h"

/* Set changes go to the kernel at least this often during a rebuild. */
#define REBUILD_COMMIT_EVERY 512

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
	const struct grey_config *g = &sh->gw->cfg->grey;

	return key->prefix == (key->family == AF_INET ? g->prefix4 : g->prefix6);
}

/* Into the kind's set with the time it has left. Return: 1 if added. */
static int
add_to_set(struct shared *sh, bool trap, const struct grey_client *key,
           int64_t expires)
{
	struct gateway *gw = sh->gw;
	int64_t now = loop_wall_sec(gw->loop);
	struct nftset_prefix p;

	int r;

	if (expires <= now || !gw->nft)
		return 0; /* (the policy door alone has no sets) */
	gateway_prefix_of(key, &p);
	r = nftset_add(gw->nft, trap ? NFTSET_TRAP : NFTSET_PASS, &p,
	               (uint64_t)(expires - now) * 1000,
	               trap ? "greygate trap" : "greygate pass");
	if (r < 0) {
		/* (another gateway's key of another length: a newcomer with
		 * other settings, say) */
		char text[64];

		gateway_set_failed(gw, trap ? "trap" : "pass",
		                   grey_client_format(key, text, sizeof(text)),
		                   r);
		return 0;
	}
	return 1;
}

/* A run-time allow entry from the store, as greygatectl allow would
 * have made it here. Return: 1 (changed), 0 (had it, or ended), -1
 * (refused: its comment holds what greygatectl would refuse). */
static int
take_allow(struct shared *sh, const struct grey_client *net, int64_t expires,
           const char *comment, bool apply)
{
	struct allow_runtime e = {0};
	int r;

	if (expires && expires <= loop_wall_sec(sh->gw->loop))
		return 0;
	if (!allow_text_ok(comment) || strlen(comment) >= sizeof(e.comment))
		return -1;
	grey_client_format(net, e.cidr, sizeof(e.cidr));
	snprintf(e.comment, sizeof(e.comment), "%s", comment);
	e.expires = expires;
	r = gateway_allow_put(sh->gw, &e, apply);
	if (r > 0) {
		sh->k.allows_taken++;
		if (apply)
			log_info("action=allow, client=%s, expires=%lld, "
			         "comment=%s (from the shared store)",
			         e.cidr, (long long)e.expires, e.comment);
	}
	return r < 0 ? -1 : r;
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
	if (!strcmp(ev->by, sh->gw->cfg->hostname))
		sh->k.own_events++;
	else
		sh->k.events++;
	if (ev->forget && !ev->trap)
		shared_passes_forget(sh->passes, &ev->key);
	else if (!ev->forget && !ev->trap && !ev->allow &&
	         our_key(sh, &ev->key))
		shared_passes_put(sh->passes, &ev->key, 0, ev->expires);
	if (ev->forget) {
		struct nftset_prefix p;

		/* (deleting what is not there is not an error) */
		gateway_prefix_of(&ev->key, &p);
		if (sh->gw->nft) {
			int r = nftset_del(sh->gw->nft,
			                   ev->trap ? NFTSET_TRAP : NFTSET_PASS,
			                   &p);
			char text[64];

			if (r < 0)
				gateway_set_failed(
				        sh->gw, "forget",
				        grey_client_format(&ev->key, text,
				                           sizeof(text)),
				        r);
			gateway_commit_turn(sh->gw);
		}
		return;
	}
	if (ev->allow) {
		if (take_allow(sh, &ev->key, ev->expires, ev->comment, true) <
		    0)
			sh->k.scan_bad++;
		return;
	}
	if (add_to_set(sh, ev->trap, &ev->key, ev->expires))
		gateway_commit_turn(sh->gw); /* within the second */
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
	if (!add_to_set(rb->sh, rb->walk == 1, key, rec->expires))
		return 0;
	if (rb->walk == 1)
		rb->traps_added++;
	else
		rb->passes++;
	if (++rb->queued % REBUILD_COMMIT_EVERY == 0)
		gateway_commit_turn(rb->sh->gw);
	return 0;
}

static void
on_allow_entry(const struct grey_client *net, int64_t expires,
               const char *comment, void *ctx)
{
	struct rebuild *rb = ctx;
	int r = take_allow(rb->sh, net, expires, comment, false);

	if (r < 0)
		rb->sh->k.scan_bad++;
	else
		rb->allows += (uint64_t)r;
}

static void
on_walked(int err, const struct store_redis_scan_counts *n, void *ctx)
{
	struct rebuild *rb = ctx;
	struct shared *sh = rb->sh;

	sh->k.scan_bad += n->bad;
	gateway_commit_turn(sh->gw);
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
	/* The allow entries taken, in the sets in one batch. */
	if (rb->allows && gateway_allow_apply(sh->gw) < 0)
		log_warnx("allow: the shared store's entries not applied");
	sh->reconciling = false;
	if (err < 0) {
		/* Again once the connection is back (shared.c). */
		log_warnx("store: the sets' rebuild from Redis was cut short "
		          "(%" PRIu64 " passes restored so far); it starts "
		          "again when Redis answers",
		          rb->passes);
		sh->reconcile_again = true;
	} else {
		sh->k.reconciled += rb->passes + rb->traps_added;
		log_info("nft: rebuilt from the shared store: %" PRIu64
		         " passed and %" PRIu64 " trapped clients, %" PRIu64
		         " new allow entries",
		         rb->passes, rb->traps_added, rb->allows);
	}
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
shared_follow_start(struct gateway *gw)
{
	struct shared *sh = gw->shared;

	/* (agreed before the run-time allow list was read: shared now) */
	if (sh->agreed)
		shared_share_allow_list(sh);
	sh->follow = store_redis_follow_new(gw->loop, &sh->rcfg, SHARED_PREFIX,
	                                    "", on_event, on_gap, sh);
	return sh->follow ? 0 : -errno;
}

void
shared_follow_stop(struct shared *sh)
{
	store_redis_follow_free(sh->follow);
	sh->follow = NULL;
}
