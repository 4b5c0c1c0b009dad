// SPDX-License-Identifier: GPL-2.0-or-later
/* A shared store's writes: each decision's changes sent to Redis, at
 * most a window of them unanswered at once, kept (oldest first) while
 * Redis is away and sent when it is back; and an emptied store refilled
 * with the passes known here and the triplets greylisted here lately. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grey_store.h"
#include "log.h"
#include "shared-int.h"
#include "store_redis.h"

/* Writes kept while Redis is away (about 1.2 KB each): a day of a small
 * site's first sights; past it the oldest is dropped and counted. */
#define WAITING_MAX 50000
/* Writes sent and not yet answered, at most: a backlog (a long outage's,
 * an emptied store's passes) goes out at the pace Redis answers. */
#define WRITE_WINDOW 256

/* The passes known here, then the triplets greylisted here lately, on
 * their way back into an emptied store. */
struct shared_restore {
	struct shared_pass *list;
	size_t n, next;
	struct shared_waiting_triplet **triplets;
	size_t ntriplets, next_triplet;
};

void
shared_restore_free(struct shared_restore *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->ntriplets; i++)
		free(rs->triplets[i]);
	free(rs->triplets);
	free(rs->list);
	free(rs);
}

/* Kept until Redis answers and there is room (oldest first). */
static void
wait_for_redis(struct shared_write *wr)
{
	struct shared *sh = wr->sh;

	if (sh->closing) {
		sh->k.waiting_dropped++;
		free(wr);
		return;
	}
	if (sh->nwaiting >= WAITING_MAX) {
		struct shared_write *oldest = sh->waiting_head;

		sh->waiting_head = oldest->next;
		if (!sh->waiting_head)
			sh->waiting_tail = NULL;
		sh->nwaiting--;
		sh->k.waiting_dropped++;
		free(oldest);
	}
	wr->next = NULL;
	if (sh->waiting_tail)
		sh->waiting_tail->next = wr;
	else
		sh->waiting_head = wr;
	sh->waiting_tail = wr;
	sh->nwaiting++;
}

static void
on_written(int err, void *ctx)
{
	struct shared_write *wr = ctx;
	struct shared *sh = wr->sh;

	sh->writes_out--;
	if (err == -EIO) {
		/* The connection went: sent again when it is back. */
		sh->k.writes_failed++;
		wait_for_redis(wr);
		return;
	}
	if (err < 0) {
		/* Refused by Redis (the script): kept, it would be refused
		 * again. */
		sh->k.writes_failed++;
		if (!sh->refused_said) {
			sh->refused_said = true;
			log_warnx(
			        "store: Redis refused a decision's write (%s): "
			        "dropped; said once",
			        strerror(-err));
		}
	} else {
		sh->k.writes++;
	}
	free(wr);
	shared_pump(sh);
}

/* Sent now. Return: 0, or -errno (not sent: wr is the caller's). */
static int
send_now(struct shared_write *wr)
{
	struct shared *sh = wr->sh;
	char once[40];
	int r;

	snprintf(once, sizeof(once), "%s:%" PRIu64, sh->instance, wr->seq);
	r = store_redis_apply(sh->c, SHARED_PREFIX, &wr->before, &wr->after,
	                      sh->cfg.grey.retry_window_sec,
	                      sh->cfg.hostname, wr->seq ? once : NULL,
	                      on_written, wr);

	if (r == 0)
		sh->writes_out++;
	return r;
}

/* A decision's writes: sent at once where Redis answers, there is room
 * and nothing older waits; else kept. */
void
shared_send_write(struct shared_write *wr)
{
	struct shared *sh = wr->sh;

	if (!sh->agreed || sh->waiting_head ||
	    sh->writes_out >= WRITE_WINDOW || send_now(wr) < 0)
		wait_for_redis(wr);
}

/* One known pass as a write: merged into what the store holds (the
 * earlier since, the later end), on the stream where the store lacked
 * it. */
static struct shared_write *
restore_write(struct shared *sh, const struct shared_pass *p)
{
	struct shared_write *wr = calloc(1, sizeof(*wr));
	uint32_t ttl = sh->cfg.grey.pass_ttl_sec;

	if (!wr)
		return NULL;
	wr->sh = sh;
	wr->before.pass_key = p->key;
	wr->before.trap_key = p->key;
	wr->before.triplet_key = p->key;
	wr->before.pass_found = STORE_FOUND;
	wr->before.pass.expires = p->expires;
	wr->before.pass.since = p->since ? p->since : p->expires - ttl;
	wr->before.pass.refreshed = p->expires - ttl;
	wr->after = wr->before;
	wr->after.pass_dirty = true;
	return wr;
}

/* One triplet greylisted here as a write: merged into what the store
 * holds (the earlier first sight, the later last). */
static struct shared_write *
restore_triplet_write(struct shared *sh, const struct shared_waiting_triplet *t)
{
	struct shared_write *wr = calloc(1, sizeof(*wr));

	if (!wr)
		return NULL;
	wr->sh = sh;
	/* (a pooled triplet's key is no client's: only the triplet is
	 * written) */
	wr->after.pass_key = t->key;
	wr->after.trap_key = t->key;
	wr->after.triplet_key = t->key;
	snprintf(wr->after.sender, sizeof(wr->after.sender), "%s", t->sender);
	snprintf(wr->after.rcpt, sizeof(wr->after.rcpt), "%s", t->rcpt);
	wr->after.triplet = t->t;
	wr->before = wr->after;
	wr->after.triplet_dirty = true;
	return wr;
}

static void
restore_done(struct shared *sh)
{
	struct shared_restore *rs = sh->restore;

	log_info("store: %zu pass(es) known here and %zu triplet(s) "
	         "greylisted here lately written back into the shared store",
	         rs->next, rs->next_triplet);
	shared_restore_free(rs);
	sh->restore = NULL;
}

/* What waits goes, oldest first, then an emptied store's passes, while
 * there is room in the window. */
void
shared_pump(struct shared *sh)
{
	while (sh->agreed && !sh->closing && sh->writes_out < WRITE_WINDOW) {
		struct shared_write *wr = sh->waiting_head;

		if (wr) {
			if (send_now(wr) < 0)
				return; /* (the connection is going) */
			sh->waiting_head = wr->next;
			if (!sh->waiting_head)
				sh->waiting_tail = NULL;
			sh->nwaiting--;
			continue;
		}
		if (!sh->restore)
			return;
		if (sh->restore->next < sh->restore->n) {
			wr = restore_write(
			        sh, &sh->restore->list[sh->restore->next]);
			if (!wr || send_now(wr) < 0) {
				free(wr);
				return; /* (again at the next agreement) */
			}
			sh->restore->next++;
			sh->k.restored++;
			continue;
		}
		if (sh->restore->next_triplet == sh->restore->ntriplets) {
			restore_done(sh);
			return;
		}
		wr = restore_triplet_write(
		        sh, sh->restore->triplets[sh->restore->next_triplet]);
		if (!wr || send_now(wr) < 0) {
			free(wr);
			return; /* (again at the next agreement) */
		}
		sh->restore->next_triplet++;
	}
}

/* The store was emptied (or is another): every pass known here goes
 * back into it, paced with the other writes. */
void
shared_restore_passes(struct shared *sh)
{
	struct shared_restore *rs = sh->restore;

	int64_t now = loop_wall_sec(sh->loop);

	if (rs) {
		/* (emptied again: from the first) */
		rs->next = rs->next_triplet = 0;
		return;
	}
	rs = calloc(1, sizeof(*rs));
	if (!rs || shared_passes_list(sh->passes, now, &rs->list, &rs->n) < 0 ||
	    shared_waiting_list(sh->greylisted,
	                        now - (int64_t)sh->cfg.grey.retry_window_sec,
	                        &rs->triplets, &rs->ntriplets) < 0) {
		shared_restore_free(rs);
		log_warnx("store: no memory to write the passes known here "
		          "back into the shared store");
		return;
	}
	sh->restore = rs;
}

/* Redis is back and agreed: what waited goes, oldest first. */
void
shared_send_waiting(struct shared *sh)
{
	if (sh->nwaiting)
		log_info("store: writing %zu decision(s) made while Redis was "
		         "away, %u at a time",
		         sh->nwaiting, WRITE_WINDOW);
	shared_pump(sh);
}

