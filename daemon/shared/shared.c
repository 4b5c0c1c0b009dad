// SPDX-License-Identifier: GPL-2.0-or-later
/* greygated on a shared store (see shared.h): the connection, each
 * decision's fetch and apply, forgetting a client. The agreement on the
 * site's settings and this gateway's name are shared_agree.c; the writes
 * (and those that wait while Redis is away) shared_write.c; run-time
 * allow entries shared_allow.c; the sets' side (the stream and the
 * rebuild from the keys) shared_follow.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "allow.h"
#include "grey_store.h"
#include "log.h"
#include "redis_loop.h"
#include "shared-int.h"
#include "store_redis.h"

/* Decisions under way at once: past this a slow Redis would hold more
 * sessions than the tarpit lets in (they get the plain deferral). */
#define IN_FLIGHT_MAX 4096
#define COMMAND_TIMEOUT_MS 1000
#define START_WAIT_MS 3000
#define SAY_AGAIN_SEC 60
/* Reconnections back off from 1 s to at most this: a pass made elsewhere
 * while Redis was away reaches the sets this long after it is back. */
#define RECONNECT_MAX_MS 4000

/* A fetch under way: the decider's records, and whom to tell. */
struct shared_fetch {
	struct shared *sh;
	struct list_node under_way; /* in sh->fetches */
	struct grey_records *w;
	int64_t now;
	grey_store_fetched_fn *done;
	void *ctx;
};

/* The store interface's handle (grey_store.h) over this. */
struct shared_store {
	struct grey_store base; /* (first: the handle is this) */
	struct shared *sh;
};


/* --- what is said --- */

void
shared_say_down(struct shared *sh)
{
	int64_t now = loop_wall_sec(sh->loop);

	if (!sh->down_since) {
		sh->down_since = now;
		sh->down_said = now;
		log_warnx("store: Redis at %s: %s; new clients are greylisted "
		          "meanwhile, passed clients go on (the sets, and "
		          "%zu passes known here for the policy door), and "
		          "what is decided is written when it is back",
		          sh->cfg.store, sh->last_error,
		          shared_passes_count(sh->passes));
	}
}

static void
on_minute(struct loop *loop, struct loop_timer *t, void *ctx)
{
	struct shared *sh = ctx;
	int64_t now = loop_wall_sec(loop);

	if (sh->agreed && now - sh->claimed_at >= SHARED_CLAIM_EVERY_SEC)
		shared_claim_name(sh);
	if ((sh->agreed || sh->disagreed) &&
	    now - sh->agreed_asked >= SHARED_AGREE_EVERY_SEC)
		shared_agree(sh);
	if (sh->disagreed && now - sh->disagreed_said >= SAY_AGAIN_SEC)
		shared_say_disagreed(sh);
	if (now - sh->passes_purged >= 60) {
		sh->passes_purged = now;
		shared_passes_purge(sh->passes, now);
	}
	if (sh->down_since && !sh->disagreed &&
	    now - sh->down_said >= SAY_AGAIN_SEC) {
		sh->down_said = now;
		log_warnx("store: Redis at %s still away for %" PRId64
		          " s (%s); %zu decision(s) wait to be written",
		          sh->cfg.store, now - sh->down_since,
		          sh->last_error, sh->nwaiting);
	}
	loop_timer_arm(loop, t, loop_now_ms(loop) + 1000);
}

/* --- decisions: the store interface's fetch and apply --- */

static void
unlink_fetch(struct shared_fetch *f)
{
	list_remove(&f->under_way);
	f->sh->in_flight--;
}

/* The decider is told, once; the fetch is over. */
static void
finish(struct shared_fetch *f, int r)
{
	grey_store_fetched_fn *done = f->done;
	struct grey_records *w = f->w;
	void *ctx = f->ctx;

	unlink_fetch(f);
	free(f);
	done(w, r, ctx);
}

static void
on_fetched(struct grey_records *w, int err, void *ctx)
{
	struct shared_fetch *f = ctx;
	struct shared *sh = f->sh;
	uint32_t pass_ttl_sec = sh->cfg.grey.pass_ttl_sec;

	if (err < 0) {
		if (sh->closing) {
			finish(f, -ECANCELED);
			return;
		}
		/* Redis away: decided from nothing but the passes known
		 * here (see shared.h). */
		w->trap_found = w->pass_found = w->triplet_found = 0;
		w->own_found = 0;
		sh->k.from_nothing++;
		if (w->want_pass &&
		    shared_passes_find(sh->passes, &w->pass_key, f->now,
		                       pass_ttl_sec, &w->pass)) {
			w->pass_found = STORE_FOUND;
			sh->k.from_known++;
		}
		if (w->want_own &&
		    shared_passes_find(sh->passes, &w->trap_key, f->now,
		                       pass_ttl_sec, &w->own))
			w->own_found = STORE_FOUND;
		/* ... and the triplets greylisted here: a retry that
		 * comes back here passes (issue 57) */
		if (w->want_triplet &&
		    shared_waiting_find(sh->greylisted, &w->triplet_key,
		                        w->sender, w->rcpt, &w->triplet))
			w->triplet_found = STORE_FOUND;
	} else if (w->want_pass &&
	           (w->pass_found != STORE_FOUND || w->pass.expires <= f->now)) {
		/* A pass known here that the store lacks (emptied, or not
		 * written back yet) is still a pass, and is written back. */
		struct store_client known;

		if (shared_passes_find(sh->passes, &w->pass_key, f->now,
		                       pass_ttl_sec, &known)) {
			w->pass = known;
			w->pass_found = STORE_FOUND;
			w->pass_dirty = true;
			sh->k.restored++;
		}
	}
	finish(f, 0);
}

static void
redis_fetch(struct grey_store *s, struct grey_records *w, int64_t now,
            grey_store_fetched_fn *done, void *ctx)
{
	struct shared *sh = ((struct shared_store *)s)->sh;
	struct shared_fetch *f;
	int r;

	if (sh->in_flight >= IN_FLIGHT_MAX || !(f = calloc(1, sizeof(*f)))) {
		sh->k.busy++;
		done(w, -EBUSY, ctx);
		return;
	}
	f->sh = sh;
	f->w = w;
	f->now = now;
	f->done = done;
	f->ctx = ctx;
	list_push_back(&sh->fetches, &f->under_way);
	sh->in_flight++;
	/* Not agreed yet (or away): from nothing, at once. */
	r = sh->agreed ? store_redis_fetch(sh->c, SHARED_PREFIX, w, &sh->bad,
	                                   on_fetched, f)
	               : -ENOTCONN;
	if (r < 0)
		on_fetched(w, r, f);
}

static int
redis_apply(struct grey_store *s, const struct grey_records *before,
            const struct grey_records *after, const struct grey_decision *d)
{
	struct shared *sh = ((struct shared_store *)s)->sh;
	struct shared_write *wr;

	sh->k.decisions++;
	if (d->action == GREY_PASS || d->action == GREY_REFRESH)
		shared_passes_put(sh->passes, &d->client, after->pass.since,
		                  d->expires);
	/* (out of memory: that sender waits once more if Redis is emptied) */
	if (d->action == GREY_GREYLIST && after->triplet_dirty)
		(void)shared_waiting_put(sh->greylisted, &after->triplet_key,
		                         after->sender, after->rcpt,
		                         &after->triplet);
	if (!after->trap_dirty && !after->pass_dirty && !after->triplet_dirty)
		return 0;
	wr = malloc(sizeof(*wr));
	if (!wr)
		return -ENOMEM;
	wr->sh = sh;
	wr->before = *before;
	wr->after = *after;
	wr->seq = ++sh->writes_named;
	shared_send_write(wr);
	return 0;
}

static void
redis_free(struct grey_store *s)
{
	shared_close(shared_of(s));
	free(s);
}

/* --- forgetting a client --- */

struct forgetting {
	struct shared *sh;
	char key[64];
	int err;           /* the pass's and trap's deletion */
	int deleted;       /* ... what it deleted */
	bool walk_started; /* the triplets' walk frees it; else on_forgot */
};

/* The last of the two (one connection answers in order). */
static void
on_triplets_deleted(int err, const struct store_redis_scan_counts *n, void *ctx)
{
	struct forgetting *f = ctx;

	if (f->err < 0 || err < 0)
		log_warnx("forget: %s: not all deleted from the shared store "
		          "(%s): %d pass or trap and %" PRIu64 " triplets were",
		          f->key, strerror(f->err < 0 ? -f->err : -err),
		          f->deleted, n->records);
	else
		log_info("action=forget, key=%s, records=%" PRIu64
		         " (the shared store's; every gateway told)",
		         f->key, (uint64_t)f->deleted + n->records);
	free(f);
}

static void
on_forgot(int err, int deleted, void *ctx)
{
	struct forgetting *f = ctx;

	f->err = err;
	f->deleted = deleted;
	if (f->walk_started)
		return;
	log_warnx("forget: %s: its triplets not deleted from the shared store "
	          "(the walk did not start)",
	          f->key);
	free(f);
}

static int
redis_forget(struct grey_store *s, const struct grey_client *key,
             const struct grey_client *trap)
{
	struct shared *sh = ((struct shared_store *)s)->sh;
	struct forgetting *f;
	int r;

	if (!sh->agreed)
		return -ENOTCONN;
	/* Not known here from now on: a decision before the stream tells
	 * this gateway too would find it here and write it back. */
	shared_passes_forget(sh->passes, key);
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->sh = sh;
	grey_client_format(key, f->key, sizeof(f->key));
	r = store_redis_forget(sh->c, SHARED_PREFIX, key, trap,
	                       sh->cfg.hostname, on_forgot, f);
	if (r < 0) {
		free(f);
		return r;
	}
	f->walk_started =
	        store_redis_delete_triplets(sh->c, SHARED_PREFIX, key,
	                                    on_triplets_deleted, f) == 0;
	return GREY_STORE_UNDER_WAY;
}

static void redis_status(const struct grey_store *s,
                         struct grey_store_status *out);

struct shared *
shared_of(struct grey_store *s)
{
	return ((struct shared_store *)s)->sh;
}

static const struct grey_store_ops redis_ops = {
	.name = "redis",
	.where = "the shared store",
	.fetch = redis_fetch,
	.apply = redis_apply,
	.forget = redis_forget,
	.share_allow = shared_share_allow,
	.walk = shared_walk,
	.walk_more = shared_walk_more,
	.walk_end = shared_walk_end,
	.follow = shared_follow,
	.share_report = shared_share_report,
	.reports = shared_reports,
	.status = redis_status,
	.free = redis_free,
};

/* --- the connection --- */

static void
on_state(struct rconn *c, bool up, const char *why, void *ctx)
{
	struct shared *sh = ctx;

	if (!up) {
		sh->agreed = false;
		sh->agreeing = false; /* (its answer came back NULL) */
		loop_timer_cancel(sh->loop, &sh->agree_again);
		snprintf(sh->last_error, sizeof(sh->last_error), "%s", why);
		if (!sh->opening && !sh->disagreed)
			shared_say_down(sh);
		return;
	}
	shared_agree(sh);
}

int
shared_open(struct loop *loop, const struct shared_settings *cfg,
            const struct shared_allow_source *allow, struct grey_store **out,
            char *err)
{
	const struct store_url *u;
	struct shared *sh = calloc(1, sizeof(*sh));
	struct shared_store *ss;
	uint64_t end;
	int r;

	if (!sh || !(ss = calloc(1, sizeof(*ss)))) {
		free(sh);
		return -ENOMEM;
	}
	sh->loop = loop;
	sh->cfg = *cfg;
	/* (its own copy: the connection's settings point into it) */
	u = &sh->cfg.store_url;
	sh->allow = *allow;
	list_init(&sh->fetches);
	ss->base.ops = &redis_ops;
	ss->base.settings_agreed = true;
	ss->sh = sh;
	*out = &ss->base;
	loop_timer_init(&sh->minute, on_minute, sh);
	loop_timer_init(&sh->agree_again, shared_on_agree_again, sh);
	sh->passes = shared_passes_new();
	sh->greylisted = shared_waiting_new(0);
	if (!sh->passes || !sh->greylisted)
		return -ENOMEM;
	sh->passes_purged = loop_wall_sec(loop);
	shared_instance_id(sh->cfg.store_dir, sh->instance);
	/* Names start anywhere: a name of the run before, remembered by
	 * Redis for a day, must not silence a write of this one. */
	if (getrandom(&sh->writes_named, sizeof(sh->writes_named), 0) !=
	    (ssize_t)sizeof(sh->writes_named))
		sh->writes_named = (uint64_t)loop_now_ms(loop) << 20;
	sh->writes_named >>= 1; /* (never near the wrap to 0: none) */
	if (sh->cfg.password_file[0]) {
		r = store_password_read(sh->cfg.password_file, sh->password,
		                        sizeof(sh->password), err);
		if (r < 0)
			return r;
	}
	store_url_connection(u, sh->password, COMMAND_TIMEOUT_MS, &sh->rcfg);
	sh->rcfg.backoff_max_ms = RECONNECT_MAX_MS;
	sh->opening = true;
	sh->c = rconn_new(loop, &sh->rcfg, on_state, sh);
	if (!sh->c) {
		snprintf(err, 512, "store %s: %s", cfg->store, strerror(errno));
		return -errno;
	}
	/* The keys agreed before anything is decided, where Redis answers. */
	end = loop_now_ms(loop) + START_WAIT_MS;
	while (!sh->agreed && !sh->disagreed && loop_now_ms(loop) < end)
		loop_run_once(loop, 50);
	sh->opening = false;
	if (sh->disagreed) {
		snprintf(err, 512, "store %.200s: %.300s", cfg->store,
		         sh->last_error);
		return -EINVAL;
	}
	if (sh->agreed) {
		log_info("store: shared in Redis at %s (keys agreed)",
		         cfg->store);
	} else {
		if (!sh->last_error[0])
			snprintf(sh->last_error, sizeof(sh->last_error),
			         "no answer within %u ms", START_WAIT_MS);
		shared_say_down(sh);
	}
	loop_timer_arm(loop, &sh->minute, loop_now_ms(loop) + 1000);
	return 0;
}

void
shared_close(struct shared *sh)
{
	struct shared_write *wr;

	if (!sh)
		return;
	sh->closing = true;
	shared_follow_stop(sh);
	loop_timer_cancel(sh->loop, &sh->minute);
	loop_timer_cancel(sh->loop, &sh->agree_again);
	/* What waits fails (-ECANCELED to its caller) as the connection
	 * goes. */
	rconn_free(sh->c);
	while (!list_empty(&sh->fetches))
		finish(LIST_ENTRY(list_front(&sh->fetches), struct shared_fetch,
		                  under_way),
		       -ECANCELED);
	if (sh->nwaiting)
		log_warnx("store: %zu decision(s) not written: Redis was away "
		          "(their senders are greylisted again, nothing is "
		          "lost)",
		          sh->nwaiting);
	while ((wr = sh->waiting_head)) {
		sh->waiting_head = wr->next;
		free(wr);
	}
	shared_allows_drop(sh);
	shared_restore_free(sh->restore);
	explicit_bzero(sh->password, sizeof(sh->password));
	shared_passes_free(sh->passes);
	shared_waiting_free(sh->greylisted);
	free(sh);
}

static void
redis_status(const struct grey_store *s, struct grey_store_status *out)
{
	const struct shared *sh = ((const struct shared_store *)s)->sh;

	out->remote = true;
	out->where = sh->cfg.store;
	out->up = sh->agreed;
	out->disagreed = sh->disagreed;
	out->restored = sh->k.restored;
	out->following = sh->follow != NULL;
	out->last_error = sh->last_error;
	out->down_since = sh->down_since;
	out->decisions = sh->k.decisions;
	out->from_nothing = sh->k.from_nothing;
	out->from_known = sh->k.from_known;
	out->passes_known = shared_passes_count(sh->passes);
	out->name_clash = sh->name_clash;
	out->busy = sh->k.busy;
	out->writes = sh->k.writes;
	out->writes_failed = sh->k.writes_failed;
	out->waiting = sh->nwaiting;
	out->waiting_dropped = sh->k.waiting_dropped;
	out->records_bad = sh->bad.records_bad + sh->k.scan_bad;
	out->events = sh->k.events;
	out->own_events = sh->k.own_events;
	out->reconciles = sh->k.reconciles;
	out->reconciled = sh->k.reconciled;
	out->allows_sent = sh->k.allows_sent;
	out->allows_failed = sh->k.allows_failed;
	out->allows_taken = sh->k.allows_taken;
	out->lag_ms = sh->lag_ms;
}
