/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The greylist's records in Redis, for a store shared by several
 * gateways ([gateway] store = redis://...): their keys, and
 * one attempt's records fetched in one round trip (three HMGETs
 * pipelined on one connection, common/redis_loop.h) into the records
 * the policy decides from (grey_records).
 *
 * Keys, under a prefix ("gg:"), each a hash an admin can read with
 * redis-cli HGETALL:
 *   PREFIXpass:198.51.100.0/24   since expires refreshed deliveries sessions
 *   PREFIXtrap:198.51.100.7/32   since expires
 *   PREFIXgrey:198.51.100.0/24 SENDER RCPT   first last attempts awaiting
 * Nothing from Redis is trusted: a field that is not a decimal number,
 * or a record that contradicts itself, makes the record absent (and is
 * counted), never a crash. */
#ifndef GREYGATE_STORE_REDIS_H
#define GREYGATE_STORE_REDIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "must_check.h"

#include "policy.h"
#include "store.h"

struct loop;
struct rconn;
struct rconn_config;
struct redisReply;

/* The longest key: prefix, a client, two addresses. */
#define STORE_REDIS_KEY_MAX (64 + 64 + 2 * GREY_ADDR_MAX)

/* store_redis_client_key, store_redis_triplet_key - the key into out
 * (STORE_REDIS_KEY_MAX bytes). Return: its length, or -ENAMETOOLONG. */
int store_redis_client_key(const char *prefix, enum store_table table,
                           const struct grey_client *client, char *out);
int store_redis_triplet_key(const char *prefix,
                            const struct grey_client *client,
                            const char *sender, const char *rcpt, char *out);

/* The fields of a pass or trap, and of a triplet, in that order. */
#define STORE_REDIS_NCLIENT 5
#define STORE_REDIS_NTRIPLET 4
extern const char *const store_redis_client_fields[STORE_REDIS_NCLIENT];
extern const char *const store_redis_triplet_fields[STORE_REDIS_NTRIPLET];

/*
 * store_redis_parse_client, store_redis_parse_triplet - an HMGET reply
 * of the fields above, in that order.
 * Return: STORE_FOUND, 0 (no such record: every field nil), or -EBADMSG
 * (a field missing or not a number, expires before since, ...).
 */
int store_redis_parse_client(const struct redisReply *reply,
                             struct store_client *out);
int store_redis_parse_triplet(const struct redisReply *reply,
                              struct store_triplet *out);

/* What a fetch found unreadable (each such record treated as absent). */
struct store_redis_counters {
	uint64_t fetches, records_bad;
};

/* Told when all of w's records are in: err 0, or -EIO (the connection
 * failed or timed out: w holds nothing). */
typedef void store_redis_fetched_fn(struct grey_records *w, int err, void *ctx);

/*
 * store_redis_fetch - fetch the records w wants (grey_records_prepare)
 * in one round trip; done is called once: at once if w wants nothing,
 * else from the loop.
 * @counters: where bad records are counted (may be NULL)
 * Return: 0 (under way), or -errno (nothing sent; done not called).
 */
MUST_CHECK int store_redis_fetch(struct rconn *c, const char *prefix,
                      struct grey_records *w,
                      struct store_redis_counters *counters,
                      store_redis_fetched_fn *done, void *ctx);

/* Told when the writes are in (err 0) or failed (-EIO: the connection
 * failed or timed out; -EPROTO: Redis refused the script). */
typedef void store_redis_applied_fn(int err, void *ctx);

/*
 * store_redis_apply - write what one decision changed (after: its dirty
 * records; before: the same records as fetched) in one atomic script,
 * merged with what other gateways wrote since the fetch: a triplet
 * keeps the earliest first sight and the latest last one (two gateways
 * seeing the same first attempt record one first sight), a pass or trap
 * the latest end and the earliest start, a pass's deliveries and
 * sessions add up. Each key expires by itself (a triplet retry_window
 * after its last attempt, a pass or trap at its end). A pass or trap
 * whose end moved later is appended to the stream PREFIXstream (MAXLEN
 * ~ 1000000) as
 * "kind pass|trap key CIDR expires SECONDS by GATEWAY", for every other
 * gateway's sets.
 * @once: this write's name, unique to it (NULL: none): the same write
 * sent again under it, after a connection that went before its answer,
 * adds its deliveries and sessions once (Redis keeps the name a day, at
 * PREFIXonce:NAME, for writes that add some).
 * Return: 0 (under way: done is called once, at once if nothing is
 * dirty), or -errno (nothing sent).
 */
MUST_CHECK int store_redis_apply(struct rconn *c, const char *prefix,
                      const struct grey_records *before,
                      const struct grey_records *after,
                      uint32_t retry_window_sec, const char *gateway,
                      const char *once, store_redis_applied_fn *done,
                      void *ctx);

/* What the store's settings say against this gateway's. */
struct store_redis_agreement {
	/* 0 (agreed), -EINVAL (they differ: why names the first key and
	 * both values), -EAGAIN (Redis answered an error, -LOADING while it
	 * reads its data: ask again), -EIO (the connection failed) */
	int err;
	char why[256];
	bool created;   /* they were absent: ours written (a new or emptied
	                   store) */
	bool took_over; /* ours replaced those of a gateway that agreed later */
	int64_t since;      /* when the site's settings were first agreed
	                       (microseconds, the store's clock) */
	int64_t created_at; /* when the store's settings were written from
	                       nothing: another value later means it was
	                       emptied meanwhile */
	char by[64];        /* the gateway that wrote them */
};

typedef void store_redis_agreed_fn(const struct store_redis_agreement *a,
                                   void *ctx);

/* The settings agreed on: client_prefix4, client_prefix6, delay,
 * retry_window, pass_ttl, privacy ("off", or the key's fingerprint), in
 * that order. */
#define STORE_REDIS_AGREED 6

/* store_redis_read_agreement - the agreement script's reply (any reply:
 * what is not its shape is -EAGAIN) against ours, the values as text. */
void store_redis_read_agreement(const struct redisReply *reply,
                                const char ours[STORE_REDIS_AGREED][24],
                                struct store_redis_agreement *out);

/*
 * store_redis_agree - every gateway sharing a store must key and time
 * the greylist alike: client_prefix4, client_prefix6, delay,
 * retry_window, pass_ttl and privacy are kept in the hash PREFIXconfig with
 * "since" (when the site agreed on them), "created" and "by",
 * atomically compared and, where absent, written. A gateway never stops
 * another: one that agreed earlier than whoever wrote the settings puts
 * its own back (an emptied store refilled by a newcomer), and a newcomer
 * (since 0) never replaces them: it is the one that yields.
 * @since: the since of the settings this gateway agreed with (0: none
 *         yet)
 * Return: 0 (under way: done is called once), or -errno.
 */
MUST_CHECK int store_redis_agree(struct rconn *c, const char *prefix,
                      const struct grey_config *cfg, const char *gateway,
                      int64_t since, store_redis_agreed_fn *done, void *ctx);

/*
 * store_redis_allow - a run-time allow entry (greygatectl allow) for
 * every gateway: the hash PREFIXallow:CIDR (expires, comment, by),
 * ending by itself at expires (0: never), and an entry "kind allow key
 * CIDR expires SECONDS comment TEXT by GATEWAY" on the stream, in one
 * atomic script.
 * Return: 0 (under way: done is called once), or -errno.
 */
MUST_CHECK int store_redis_allow(struct rconn *c, const char *prefix,
                      const struct grey_client *net, int64_t expires,
                      const char *comment, const char *gateway,
                      store_redis_applied_fn *done, void *ctx);

/* Told whether a write was made: err 0 with written (false: the store
 * had it already), or -EIO or -EPROTO. */
typedef void store_redis_written_fn(int err, bool written, void *ctx);

/* store_redis_allow_if_absent - the same, only if the store lacks an
 * entry for that network (a gateway sharing its list with a new or
 * emptied Redis, or one that missed what it made). */
MUST_CHECK int store_redis_allow_if_absent(struct rconn *c, const char *prefix,
                                const struct grey_client *net,
                                int64_t expires, const char *comment,
                                const char *gateway,
                                store_redis_written_fn *done, void *ctx);

/* Told when a forget is done: err 0 with the keys deleted, or -EIO or
 * -EPROTO. */
typedef void store_redis_forgot_fn(int err, int deleted, void *ctx);

/*
 * store_redis_forget - delete a client's pass (pass_key, its network)
 * and, if trap_key is given, its trap (an address), and tell every
 * gateway on the stream ("kind forget" or "forget-trap", "key ..."), in
 * one atomic script. Its triplets are store_redis_delete_triplets's.
 * Return: 0 (under way: done is called once), or -errno.
 */
MUST_CHECK int store_redis_forget(struct rconn *c, const char *prefix,
                       const struct grey_client *pass_key,
                       const struct grey_client *trap_key,
                       const char *gateway, store_redis_forgot_fn *done,
                       void *ctx);

/* One run-time allow entry in the store, for a walk. */
typedef void store_redis_allow_fn(const struct grey_client *net,
                                  int64_t expires, const char *comment,
                                  void *ctx);

/* What a walk of the keys found. */
struct store_redis_scan_counts {
	uint64_t records; /* told to fn */
	uint64_t bad;     /* keys or records that did not parse: skipped */
};

/* Told once the walk is over: err 0, or -EIO (the connection failed:
 * what was told so far stands, the rest was not seen). */
typedef void store_redis_scanned_fn(int err,
                                    const struct store_redis_scan_counts *n,
                                    void *ctx);

/*
 * store_redis_scan_clients - every pass (or trap) record in the store,
 * each told to fn (its return value is ignored) as it comes: SCAN a
 * batch at a time, each batch's records read in one round trip. For a
 * gateway rebuilding its sets; the expired are the caller's to skip.
 * Return: 0 (under way: done is called once), or -errno (nothing sent).
 */
int store_redis_scan_clients(struct rconn *c, const char *prefix,
                             enum store_table table, store_client_fn *fn,
                             store_redis_scanned_fn *done, void *ctx);

/* store_redis_scan_allows - the same for every run-time allow entry
 * (PREFIXallow:CIDR; expires 0 is never). */
int store_redis_scan_allows(struct rconn *c, const char *prefix,
                            store_redis_allow_fn *fn,
                            store_redis_scanned_fn *done, void *ctx);

/* Told whether the name is this instance's: err 0, -EEXIST (another
 * instance holds it: other), -EIO (no answer) or -EPROTO. */
typedef void store_redis_claimed_fn(int err, const char *other, void *ctx);

/*
 * store_redis_claim_name - claim PREFIXgateway:GATEWAY for instance (an
 * id this gateway keeps across restarts) for ttl_sec, unless another
 * instance holds it: two gateways under one name cannot be told apart
 * (the report's shares, the stream's own events).
 * Return: 0 (under way: done is called once), or -errno.
 */
int store_redis_claim_name(struct rconn *c, const char *prefix,
                           const char *gateway, const char *instance,
                           unsigned ttl_sec, store_redis_claimed_fn *done,
                           void *ctx);

/* The longest gateway name in a key (a host name's). */
#define STORE_REDIS_GATEWAY_MAX 255

/*
 * store_redis_put_report - this gateway's report figures (a record
 * grey_stats_encode made) for the site's report: the hash
 * PREFIXreport:GATEWAY (figures, updated: epoch seconds), kept without
 * end (a gateway gone keeps its share until an admin deletes the key).
 * Return: 0 (under way: done is called once), or -errno.
 */
MUST_CHECK int store_redis_put_report(struct rconn *c, const char *prefix,
                           const char *gateway, const void *figures,
                           size_t len, int64_t updated,
                           store_redis_applied_fn *done, void *ctx);

/* One gateway's report figures from the store (figures: len bytes, not
 * yet trusted). */
typedef void store_redis_report_fn(const char *gateway, const void *figures,
                                   size_t len, int64_t updated, void *ctx);

/* store_redis_scan_reports - the same walk for every gateway's report
 * figures (PREFIXreport:GATEWAY). */
int store_redis_scan_reports(struct rconn *c, const char *prefix,
                             store_redis_report_fn *fn,
                             store_redis_scanned_fn *done, void *ctx);

/* store_redis_delete_triplets - delete every triplet of the client key
 * (SCAN for "PREFIXgrey:CIDR *" a batch at a time, one DEL a batch);
 * n->records is the number deleted. */
int store_redis_delete_triplets(struct rconn *c, const char *prefix,
                                const struct grey_client *key,
                                store_redis_scanned_fn *done, void *ctx);

/* store_redis_scan_triplets - the same for every triplet record (each
 * key "PREFIXgrey:CIDR SENDER RCPT" taken apart for fn). */
int store_redis_scan_triplets(struct rconn *c, const char *prefix,
                              store_triplet_fn *fn,
                              store_redis_scanned_fn *done, void *ctx);

/* One pass, trap or run-time allow entry from the stream. */
struct store_redis_event {
	const char *id;         /* the stream's id: where to go on from */
	bool trap;              /* a trap */
	bool allow;             /* a run-time allow entry (neither: a pass) */
	bool forget;            /* the pass (trap: the trap) was forgotten */
	struct grey_client key; /* its network, or address */
	int64_t expires;        /* (an allow entry: 0 is never) */
	const char *comment;    /* an allow entry's ("" for the others) */
	const char *by;         /* the gateway that wrote it */
};


/*
 * store_redis_parse_event - one stream entry, [id, [field, value, ...]],
 * as the follower reads it (ev's strings point into e).
 * Return: 0, -EINVAL (an id, but not an entry greygate wrote: skipped),
 * -EBADMSG (not an entry at all).
 */
int store_redis_parse_event(const struct redisReply *e,
                            struct store_redis_event *ev);

typedef void store_redis_event_fn(const struct store_redis_event *ev,
                                  void *ctx);
/* The stream cannot tell everything since the last id (trimmed past it,
 * a new Redis, or no id yet): reconcile from the keys. The events that
 * follow are those after the call. */
typedef void store_redis_gap_fn(const char *why, void *ctx);

struct store_redis_follow;

/*
 * store_redis_follow_new - read PREFIXstream as it grows, on a
 * connection of its own to cfg's Redis (a blocking XREAD, a second at a
 * time), from after last_id ("" or NULL: none yet), and again after
 * every reconnection. An entry that does not parse is skipped.
 * Return: the follower, or NULL (errno).
 */
struct store_redis_follow *
store_redis_follow_new(struct loop *loop, const struct rconn_config *cfg,
                       const char *prefix, const char *last_id,
                       store_redis_event_fn *fn, store_redis_gap_fn *gap,
                       void *ctx);

/* store_redis_follow_free - stop. NULL ok. */
void store_redis_follow_free(struct store_redis_follow *f);

/* store_redis_follow_last_id - the last id applied ("" if none). */
const char *store_redis_follow_last_id(const struct store_redis_follow *f);

#endif
