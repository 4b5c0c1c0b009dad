/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A connection to Redis on greygate's own event loop: hiredis's async API
 * driven by common/loop, with what hiredis 0.14 lacks: a deadline on
 * connecting and on every reply (timeout_ms from the command's sending or
 * the reply before it, whichever is later: a Redis that stops answering
 * fails the commands waiting, and the connection is made again; a long
 * backlog answered steadily does not), a bound on a reply's size (a bad
 * or on-path Redis cannot grow greygated without end), AUTH after
 * each connect, and reconnection with backoff (1 s doubling to 30 s, or
 * the config's maximum).
 * The loop never blocks on Redis. */
#ifndef GREYGATE_REDIS_LOOP_H
#define GREYGATE_REDIS_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct loop;
struct redisReply;
struct rconn;

struct rconn_config {
	const char *host; /* an address, or NULL with unix_path */
	uint16_t port;
	const char *unix_path; /* a unix socket, or NULL */
	const char *user;      /* an ACL user, or NULL (the default user) */
	const char *password;  /* NULL: no AUTH */
	uint32_t timeout_ms;   /* connecting, and each command */
	unsigned db;           /* the database (SELECT after AUTH), 0 */
	uint32_t backoff_max_ms; /* between reconnections, at most (30 s;
	                            at least 1 s) */
	size_t reply_max; /* a reply's size in memory, at most (0: 64 MiB):
	                     past it the connection is dropped, and said */
};

/* A command's answer: reply NULL when it failed (not connected, timed
 * out, the connection lost); a Redis error is a reply of type
 * REDIS_REPLY_ERROR. The reply is hiredis's, freed after the call. */
typedef void rconn_reply_fn(struct redisReply *reply, void *ctx);

/* The connection came up (authenticated) or went down; why says what
 * happened ("" when up). */
typedef void rconn_state_fn(struct rconn *c, bool up, const char *why,
                            void *ctx);

/*
 * rconn_new - start connecting (and keep the connection) to cfg's Redis.
 * @cfg: copied, strings too
 * @state: told of each change (may be NULL)
 * Return: the connection, or NULL (errno).
 */
struct rconn *rconn_new(struct loop *loop, const struct rconn_config *cfg,
                        rconn_state_fn *state, void *ctx);

/* rconn_free - fail what is waiting (reply NULL) and close. NULL ok. */
void rconn_free(struct rconn *c);

/* rconn_up - connected and authenticated? */
bool rconn_up(const struct rconn *c);

/* rconn_why - why the connection last went down ("" while up, or never
 * down). */
const char *rconn_why(const struct rconn *c);

/*
 * rconn_command - send one command (argv, lens: its words; lens NULL for
 * C strings); fn gets its answer, in the order commands were sent.
 * Return: 0, or -ENOTCONN (down: fn is not called) or -ENOMEM.
 */
int rconn_command(struct rconn *c, rconn_reply_fn *fn, void *ctx, int argc,
                  const char **argv, const size_t *lens);

/* What the connection did, for status and metrics. */
struct rconn_counters {
	uint64_t commands; /* sent */
	uint64_t failed;   /* answered NULL: timed out or lost */
	uint64_t timeouts; /* deadlines passed (each ends the connection) */
	uint64_t connects; /* connections made (authenticated) */
};

const struct rconn_counters *rconn_get_counters(const struct rconn *c);

#endif
