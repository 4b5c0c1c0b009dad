/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inside the shared store's glue only (shared.c, shared_follow.c,
 * list.c, site_report.c). */
#ifndef GREYGATE_SHARED_INT_H
#define GREYGATE_SHARED_INT_H

#include "allow.h"
#include "grey_store.h"
#include "list.h"
#include "loop.h"
#include "redis_loop.h"
#include "shared.h"
#include "shared_passes.h"
#include "shared_waiting.h"
#include "store_redis.h"

#define SHARED_PREFIX SHARED_KEYS

struct shared_write;
struct shared_allow_entry;
struct shared_restore;

/* Run-time allow entries kept while Redis is away, at most. */
#define ALLOWS_WAITING_MAX 1000
/* The settings are agreed again this often (an emptied store refilled by
 * another gateway, a newcomer's settings to put back), and an error
 * reply to them (-LOADING) is asked again this soon; this gateway's name
 * is claimed again this often. */
#define SHARED_AGREE_EVERY_SEC 10
#define SHARED_AGREE_RETRY_MS 500
#define SHARED_CLAIM_EVERY_SEC 30

struct shared {
	struct loop *loop;
	struct shared_settings cfg; /* its own, copied at its start */
	struct shared_allow_source allow;
	struct rconn *c;
	struct rconn_config rcfg; /* for the follower's own connection */
	char password[256];
	bool opening;   /* shared_open waits for the agreement */
	bool agreed;    /* connected, and the keys agreed: decide from it */
	bool disagreed; /* the store holds other settings: not written to */
	bool agreeing;  /* an agreement asked, not yet answered */
	bool answer_said; /* an error reply to the agreement, said */
	int64_t agreed_asked; /* when the last agreement was asked (s) */
	int64_t disagreed_said;
	/* the site's settings this gateway agreed with (the store's clock;
	 * 0: none yet, a newcomer), and when the store's were last written
	 * from nothing (another value: it was emptied meanwhile) */
	int64_t site_since, store_created;
	struct loop_timer agree_again;
	bool closing;
	bool refused_said;
	char instance[17]; /* this gateway's id (store_dir/instance-id) */
	uint64_t writes_named; /* the last write's name (with instance) */
	bool name_clash;   /* another instance holds this gateway's name */
	int64_t claimed_at, clash_said;
	bool report_unsent, report_writing; /* the site's report
					       (site_report.c) */
	char last_error[256];
	int64_t down_since, down_said; /* epoch seconds, 0: up */
	struct loop_timer minute;
	/* fetches under way (close tells each it is cancelled) */
	struct list fetches; /* of struct shared_fetch */
	size_t in_flight;
	/* writes waiting for Redis, or for room in the window, oldest
	 * first; writes sent and not yet answered */
	struct shared_write *waiting_head, *waiting_tail;
	size_t nwaiting, writes_out;
	/* the passes known here, written back into an emptied store */
	struct shared_restore *restore;
	struct store_redis_counters bad;
	/* run-time allow entries made here while Redis was away, oldest
	 * first (shared.c) */
	struct shared_allow_entry *allows_waiting, *allows_waiting_tail;
	size_t nallows_waiting;
	/* every gateway's passes, for decisions while Redis is away */
	struct shared_passes *passes;
	int64_t passes_purged;
	/* the triplets greylisted here lately, for an emptied store */
	struct shared_waiting *greylisted;
	/* the sets' side (shared_follow.c): who follows, the stream */
	struct grey_store_listener listener;
	struct store_redis_follow *follow;
	bool reconciling, reconcile_again;
	int64_t lag_ms;
	struct {
		uint64_t decisions, from_nothing, from_known, busy;
		uint64_t writes, writes_failed, waiting_dropped;
		uint64_t events, own_events, reconciles, reconciled;
		uint64_t scan_bad;
		uint64_t allows_sent, allows_failed, allows_taken;
		uint64_t restored;
	} k;
};

/* One decision's writes: sent, or waiting for Redis. */
struct shared_write {
	struct shared *sh;
	struct shared_write *next;
	struct grey_records before, after;
	uint64_t seq; /* its name with the instance's (0: none): sent again
			 after a lost answer, it adds its counts once */
};

/* A shared store's writes (shared_write.c): shared_send_write sends one
 * decision's changes (or keeps them while Redis is away: it owns wr);
 * shared_pump sends what waits while the window has room;
 * shared_send_waiting, Redis back: what waited goes out;
 * shared_restore_passes, an emptied store: the passes known here and the
 * triplets greylisted here lately go back; shared_restore_free frees what
 * a restore holds (NULL is fine). */
void shared_send_write(struct shared_write *wr);
void shared_pump(struct shared *sh);
void shared_send_waiting(struct shared *sh);
void shared_restore_passes(struct shared *sh);
void shared_restore_free(struct shared_restore *rs);

/* shared_of - the shared store behind the store interface's handle
 * (shared.c). */
struct shared *shared_of(struct grey_store *s);

/* The store interface's walk over Redis (shared_walk.c; grey_store.h
 * says what each does). */
int shared_walk(struct grey_store *s, enum grey_store_table table, int64_t now,
                struct grey_store_walk **out);
int shared_walk_more(struct grey_store_walk *w, size_t max,
                     const struct grey_store_rows *rows,
                     grey_store_wake_fn *wake, void *wake_ctx);
void shared_walk_end(struct grey_store_walk *w);

/* shared_follow - the store interface's follow (shared_follow.c): the
 * listener told of every key now (a rebuild), then of the stream. */
int shared_follow(struct grey_store *s, const struct grey_store_listener *l);

/* The store interface's share_report and reports over Redis
 * (site_report.c; grey_store.h says what each does). */
void shared_share_report(struct grey_store *s, const struct grey *grey,
                         int64_t since, bool changed);
int shared_reports(struct grey_store *s, grey_store_report_fn *fn,
                   grey_store_reports_done_fn *done, void *ctx);

/* The store interface's share_allow over Redis (shared_allow.c; grey_store.h
 * says what it does). */
void shared_share_allow(struct grey_store *s, const struct grey_client *net,
                        int64_t expires, const char *comment);
/* shared_send_waiting_allows - Redis is back: the allow entries kept
 * while it was away are sent, oldest first. */
void shared_send_waiting_allows(struct shared *sh);
/* shared_allows_drop - closing: the entries still waiting are said and
 * freed. */
void shared_allows_drop(struct shared *sh);

/* shared_share_allow_list - this gateway's run-time allow entries the
 * store lacks, written (at every agreement, and at start once the list
 * is read). */
void shared_share_allow_list(struct shared *sh);

/* shared_follow_stop - the stream is no longer read. */
void shared_follow_stop(struct shared *sh);

/* shared_follow_agreed - the decisions' connection is up and agreed: a
 * rebuild cut short starts again. */
void shared_follow_agreed(struct shared *sh);

/* The agreement and the name (shared_agree.c). _instance_id: this
 * gateway's id, kept in dir (a new one if it cannot be read); _claim_name:
 * its hostname claimed in the store for a while; _agree: the settings
 * compared with the store's (its answer acted on when it comes);
 * _on_agree_again: the agree_again timer's callback (ctx: sh);
 * _say_disagreed: the warning that this gateway yields. */
void shared_instance_id(const char *dir, char out[17]);
void shared_claim_name(struct shared *sh);
void shared_agree(struct shared *sh);
void shared_on_agree_again(struct loop *loop, struct loop_timer *t, void *ctx);
void shared_say_disagreed(struct shared *sh);

/* shared_say_down - Redis is away: said once when it goes (shared.c). */
void shared_say_down(struct shared *sh);

#endif
