// SPDX-License-Identifier: GPL-2.0-or-later
/* hiredis's async API on common/loop (see redis_loop.h). Replies come in
 * the order commands were sent, so the commands waiting are a queue and
 * one timer watches the oldest, from its sending or the reply before it,
 * whichever is later: when it is late the connection is dropped, which
 * fails every command waiting, and made again. */
#include <errno.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "loop.h"
#include "redis_bound.h"
#include "redis_loop.h"

#define BACKOFF_FIRST_MS 1000
#define BACKOFF_MAX_MS 30000 /* unless the config says less */
#define REPLY_MAX (64u << 20) /* unless the config says otherwise */

struct pending {
	struct pending *next;
	rconn_reply_fn *fn; /* NULL: the connection's own (AUTH, SELECT) */
	void *ctx;
	const char *own; /* the connection's own: its name, for errors */
	uint64_t deadline_ms;
};

struct rconn {
	struct loop *loop;
	struct rconn_config cfg; /* strings: the copies below */
	char *host, *unix_path, *user, *password;
	rconn_state_fn *state;
	void *state_ctx;
	redisAsyncContext *ac; /* NULL while down */
	int fd;
	uint32_t events;    /* what hiredis wants watched */
	bool watching;      /* fd is on the loop */
	bool connected, up; /* the socket; the socket and AUTH */
	bool freeing;
	uint64_t connect_deadline_ms;
	struct pending *head, *tail;
	struct loop_timer deadline, retry;
	uint32_t backoff_ms;
	struct rconn_counters k;
	struct redis_bound bound; /* on each reply's size */
	char why[192];
};

static void connect_now(struct rconn *c);
static void drop(struct rconn *c);

static void
say_too_big(struct rconn *c)
{
	snprintf(c->why, sizeof(c->why),
	         "a reply over %zu bytes (what greygate never asks for): "
	         "the connection dropped",
	         c->cfg.reply_max);
}

/* --- hiredis's event hooks --- */

static void
on_fd(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct rconn *c = ctx;

	if (c->ac && (events & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
		redisAsyncHandleRead(c->ac); /* may end the connection */
		if (c->ac && redis_bound_passed(c->ac->c.reader, &c->bound)) {
			say_too_big(c);
			drop(c);
			return;
		}
	}
	if (c->ac && (events & EPOLLOUT))
		redisAsyncHandleWrite(c->ac);
}

static void
watch(struct rconn *c)
{
	if (!c->events) {
		if (c->watching)
			loop_del_fd(c->loop, c->fd);
		c->watching = false;
	} else if (c->watching) {
		loop_mod_fd(c->loop, c->fd, c->events);
	} else if (loop_add_fd(c->loop, c->fd, c->events, on_fd, c) == 0) {
		c->watching = true;
	}
}

static void
set_event(void *p, uint32_t event, bool on)
{
	struct rconn *c = p;

	c->events = on ? c->events | event : c->events & ~event;
	watch(c);
}

static void
ev_add_read(void *p)
{
	set_event(p, EPOLLIN, true);
}

static void
ev_del_read(void *p)
{
	set_event(p, EPOLLIN, false);
}

static void
ev_add_write(void *p)
{
	set_event(p, EPOLLOUT, true);
}

static void
ev_del_write(void *p)
{
	set_event(p, EPOLLOUT, false);
}

static void
ev_cleanup(void *p)
{
	struct rconn *c = p;

	c->events = 0;
	watch(c);
}

/* --- deadlines, going down, coming back --- */

static void
arm_deadline(struct rconn *c)
{
	uint64_t at = 0;

	if (c->ac && !c->connected)
		at = c->connect_deadline_ms;
	else if (c->head)
		at = c->head->deadline_ms;
	if (at)
		loop_timer_arm(c->loop, &c->deadline, at);
	else
		loop_timer_cancel(c->loop, &c->deadline);
}

/* Down: said, and tried again after the backoff. */
static void
went_down(struct rconn *c)
{
	c->ac = NULL;
	c->connected = c->up = false;
	c->events = 0;
	watch(c); /* off the loop before hiredis closes the socket */
	if (c->freeing)
		return;
	loop_timer_cancel(c->loop, &c->deadline);
	if (c->state)
		c->state(c, false, c->why, c->state_ctx);
	loop_timer_arm(c->loop, &c->retry,
	               loop_now_ms(c->loop) + c->backoff_ms);
	c->backoff_ms = c->backoff_ms * 2 > c->cfg.backoff_max_ms
	                        ? c->cfg.backoff_max_ms
	                        : c->backoff_ms * 2;
}

/* End the connection now, from outside hiredis's callbacks: every
 * command waiting is answered NULL. */
static void
drop(struct rconn *c)
{
	redisAsyncContext *ac = c->ac;
	bool told_by_hiredis;

	if (!ac)
		return;
	/* hiredis tells of the disconnect only once connected. */
	told_by_hiredis = c->connected;
	redisAsyncFree(ac);
	if (!told_by_hiredis && c->ac)
		went_down(c);
}

static void
on_deadline(struct loop *loop, struct loop_timer *t, void *ctx)
{
	struct rconn *c = ctx;
	uint64_t now = loop_now_ms(loop);

	if (c->ac && !c->connected && now >= c->connect_deadline_ms) {
		snprintf(c->why, sizeof(c->why), "no connection within %u ms",
		         c->cfg.timeout_ms);
		drop(c);
		return;
	}
	if (c->head && now >= c->head->deadline_ms) {
		c->k.timeouts++;
		snprintf(c->why, sizeof(c->why), "no answer within %u ms",
		         c->cfg.timeout_ms);
		drop(c);
		return;
	}
	arm_deadline(c);
}

static void
on_retry(struct loop *loop, struct loop_timer *t, void *ctx)
{
	connect_now(ctx);
}

/* --- replies --- */

static void
became_up(struct rconn *c)
{
	c->up = true;
	c->backoff_ms = BACKOFF_FIRST_MS;
	c->k.connects++;
	c->why[0] = 0;
	if (c->state)
		c->state(c, true, "", c->state_ctx);
}

static void
on_reply(redisAsyncContext *ac, void *r, void *privdata)
{
	struct rconn *c = ac->data;
	struct pending *p = privdata;
	redisReply *reply = r;

	redis_bound_next(&c->bound);
	/* In order: it is the oldest. The next has its timeout from now
	 * on: a backlog answered at Redis's pace is not a Redis that
	 * stopped answering. */
	c->head = p->next;
	if (!c->head) {
		c->tail = NULL;
	} else {
		uint64_t from_now = loop_now_ms(c->loop) + c->cfg.timeout_ms;

		if (c->head->deadline_ms < from_now)
			c->head->deadline_ms = from_now;
	}
	if (!reply && p->fn)
		c->k.failed++;
	if (p->fn) {
		p->fn(reply, p->ctx);
	} else if (!reply) {
		/* lost with the connection: went_down says why. */
	} else if (reply->type == REDIS_REPLY_ERROR) {
		snprintf(c->why, sizeof(c->why), "%s refused: %s", p->own,
		         reply->str);
		redisAsyncDisconnect(ac);
	} else if (!c->head || c->head->fn) {
		became_up(c); /* the last of the connection's own */
	}
	free(p);
	if (!c->freeing && c->ac)
		arm_deadline(c);
}

/* Queue one command (fn NULL: the connection's own). */
static int
send_command(struct rconn *c, rconn_reply_fn *fn, void *ctx, int argc,
             const char **argv, const size_t *lens)
{
	struct pending *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->fn = fn;
	p->ctx = ctx;
	p->own = fn ? NULL : argv[0];
	p->deadline_ms = loop_now_ms(c->loop) + c->cfg.timeout_ms;
	if (redisAsyncCommandArgv(c->ac, on_reply, p, argc, argv, lens) !=
	    REDIS_OK) {
		free(p);
		return -ENOTCONN;
	}
	if (c->tail)
		c->tail->next = p;
	else
		c->head = p;
	c->tail = p;
	if (fn)
		c->k.commands++;
	if (c->head == p)
		arm_deadline(c);
	return 0;
}

/* --- connecting --- */

static void
on_connect(const redisAsyncContext *ac, int status)
{
	struct rconn *c = ac->data;

	if (status != REDIS_OK) {
		/* hiredis frees ac once this returns. */
		snprintf(c->why, sizeof(c->why), "cannot connect: %s",
		         ac->errstr);
		went_down(c);
		return;
	}
	c->connected = true;
	if (!c->password && !c->cfg.db) {
		became_up(c);
		arm_deadline(c);
		return;
	}
	/* Up once the last of these is answered (on_reply). */
	if (c->password) {
		const char *argv[3] = {"AUTH", c->user ? c->user : c->password,
		                       c->password};

		if (send_command(c, NULL, NULL, c->user ? 3 : 2, argv, NULL) <
		    0)
			goto fail;
	}
	if (c->cfg.db) {
		char db[16];
		const char *argv[2] = {"SELECT", db};

		snprintf(db, sizeof(db), "%u", c->cfg.db);
		if (send_command(c, NULL, NULL, 2, argv, NULL) < 0)
			goto fail;
	}
	return;
fail:
	snprintf(c->why, sizeof(c->why), "cannot send AUTH or SELECT");
	redisAsyncDisconnect(c->ac);
}

static void
on_disconnect(const redisAsyncContext *ac, int status)
{
	struct rconn *c = ac->data;

	if (c->bound.over)
		say_too_big(c); /* (the reader refused to build it) */
	else if (!c->why[0])
		snprintf(c->why, sizeof(c->why), "%s",
		         status == REDIS_OK ? "the connection was closed"
		                            : ac->errstr);
	went_down(c);
}

static void
connect_now(struct rconn *c)
{
	redisAsyncContext *ac =
	        c->unix_path ? redisAsyncConnectUnix(c->unix_path)
	                     : redisAsyncConnect(c->host, c->cfg.port);

	if (!ac || ac->err) {
		snprintf(c->why, sizeof(c->why), "cannot connect: %s",
		         ac ? ac->errstr : "out of memory");
		if (ac)
			redisAsyncFree(ac);
		went_down(c);
		return;
	}
	c->bound.max = c->cfg.reply_max;
	redis_bound_attach(ac->c.reader, &c->bound);
	ac->data = c;
	ac->ev.data = c;
	ac->ev.addRead = ev_add_read;
	ac->ev.delRead = ev_del_read;
	ac->ev.addWrite = ev_add_write;
	ac->ev.delWrite = ev_del_write;
	ac->ev.cleanup = ev_cleanup;
	c->ac = ac;
	c->fd = ac->c.fd;
	c->why[0] = 0;
	redisAsyncSetConnectCallback(ac, on_connect);
	redisAsyncSetDisconnectCallback(ac, on_disconnect);
	/* hiredis waits for the socket to be writable: that is the
	 * connect's end. */
	ev_add_write(c);
	c->connect_deadline_ms = loop_now_ms(c->loop) + c->cfg.timeout_ms;
	arm_deadline(c);
}

/* --- the interface --- */

static char *
copy(const char *s)
{
	return s ? strdup(s) : NULL;
}

struct rconn *
rconn_new(struct loop *loop, const struct rconn_config *cfg,
          rconn_state_fn *state, void *ctx)
{
	struct rconn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->loop = loop;
	c->cfg = *cfg;
	c->host = copy(cfg->host);
	c->unix_path = copy(cfg->unix_path);
	c->user = copy(cfg->user);
	c->password = copy(cfg->password);
	if ((cfg->host && !c->host) || (cfg->unix_path && !c->unix_path) ||
	    (cfg->user && !c->user) || (cfg->password && !c->password) ||
	    (!c->host && !c->unix_path)) {
		rconn_free(c);
		errno = ENOMEM;
		return NULL;
	}
	if (!c->cfg.timeout_ms)
		c->cfg.timeout_ms = 1000;
	if (!c->cfg.reply_max)
		c->cfg.reply_max = REPLY_MAX;
	if (!c->cfg.backoff_max_ms)
		c->cfg.backoff_max_ms = BACKOFF_MAX_MS;
	if (c->cfg.backoff_max_ms < BACKOFF_FIRST_MS)
		c->cfg.backoff_max_ms = BACKOFF_FIRST_MS;
	c->state = state;
	c->state_ctx = ctx;
	c->backoff_ms = BACKOFF_FIRST_MS;
	loop_timer_init(&c->deadline, on_deadline, c);
	loop_timer_init(&c->retry, on_retry, c);
	connect_now(c);
	return c;
}

void
rconn_free(struct rconn *c)
{
	if (!c)
		return;
	c->freeing = true;
	loop_timer_cancel(c->loop, &c->deadline);
	loop_timer_cancel(c->loop, &c->retry);
	if (c->ac)
		redisAsyncFree(c->ac);
	if (c->watching)
		loop_del_fd(c->loop, c->fd);
	free(c->host);
	free(c->unix_path);
	free(c->user);
	if (c->password) {
		explicit_bzero(c->password, strlen(c->password));
		free(c->password);
	}
	free(c);
}

bool
rconn_up(const struct rconn *c)
{
	return c->up;
}

const char *
rconn_why(const struct rconn *c)
{
	return c->why;
}

int
rconn_command(struct rconn *c, rconn_reply_fn *fn, void *ctx, int argc,
              const char **argv, const size_t *lens)
{
	if (!c->up || !c->ac)
		return -ENOTCONN;
	return send_command(c, fn, ctx, argc, argv, lens);
}

const struct rconn_counters *
rconn_get_counters(const struct rconn *c)
{
	return &c->k;
}
