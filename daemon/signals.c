// SPDX-License-Identifier: GPL-2.0-or-later
/* A tarpit session's DNS signals (signals.h): one FCrDNS lookup a
 * session, a budget timer from its start, and the attempts that wait. */
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcrdns.h"
#include "log.h"
#include "rdns_shape.h"
#include "resolver.h"
#include "signals.h"

struct signals {
	struct loop *loop;
	const struct config *cfg;
	struct resolver *resolver;
	struct rdns_shape *shape;
};

struct waiter {
	struct waiter *next;
	signals_ready_fn *fn;
	void *ctx;
};

struct session_signals {
	struct signals *s;
	int family;
	uint8_t addr[16];
	struct fcrdns *lookup; /* while under way */
	bool known;            /* the lookup answered */
	bool budget_spent;
	struct fcrdns_answer fcrdns;
	bool dynamic;          /* the PTR name looks like an access line's */
	struct loop_timer budget;
	struct waiter *waiting;
};

struct signals *
signals_new(struct loop *loop, const struct config *cfg, char *err, size_t len)
{
	struct signals *s = calloc(1, sizeof(*s));
	struct resolver_config rc = {.servers = cfg->signals.dns_servers};

	if (!s) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	s->loop = loop;
	s->cfg = cfg;
	s->shape = rdns_shape_load(cfg->signals.rdns_patterns[0]
	                                   ? cfg->signals.rdns_patterns
	                                   : NULL,
	                           err, len);
	if (!s->shape) {
		free(s);
		return NULL;
	}
	s->resolver = resolver_new(loop, &rc, err, len);
	if (!s->resolver) {
		rdns_shape_free(s->shape);
		free(s);
		return NULL;
	}
	return s;
}

void
signals_free(struct signals *s)
{
	if (!s)
		return;
	resolver_free(s->resolver);
	rdns_shape_free(s->shape);
	free(s);
}

/* Everyone waiting is told (ss, or NULL: the session ended). */
static void
tell_waiting(struct session_signals *ss, const struct session_signals *told)
{
	struct waiter *w = ss->waiting;

	ss->waiting = NULL;
	while (w) {
		struct waiter *next = w->next;

		w->fn(w->ctx, told);
		free(w);
		w = next;
	}
}

static bool
ready(const struct session_signals *ss)
{
	return ss->known || ss->budget_spent;
}

static void
on_budget(struct loop *loop, struct loop_timer *timer, void *ctx)
{
	struct session_signals *ss = ctx;

	(void)loop;
	(void)timer;
	ss->budget_spent = true;
	tell_waiting(ss, ss);
}

static void
on_fcrdns(const struct fcrdns_answer *a, void *ctx)
{
	struct session_signals *ss = ctx;
	char why[160];

	ss->lookup = NULL;
	ss->fcrdns = *a;
	ss->known = true;
	if (a->name[0]) {
		int r = rdns_shape_dynamic(ss->s->shape, ss->family, ss->addr,
		                           a->name, why, sizeof(why));

		ss->dynamic = r == 1;
		if (r == 1)
			log_debug("signals: %s looks dynamic: %s", a->name, why);
	}
	loop_timer_cancel(ss->s->loop, &ss->budget);
	tell_waiting(ss, ss);
}

struct session_signals *
signals_session_start(struct signals *s, const struct sockaddr_storage *client)
{
	struct session_signals *ss = calloc(1, sizeof(*ss));

	if (!ss)
		return NULL;
	ss->s = s;
	ss->family = client->ss_family;
	if (ss->family == AF_INET)
		memcpy(ss->addr, &((const struct sockaddr_in *)client)->sin_addr,
		       4);
	else
		memcpy(ss->addr,
		       &((const struct sockaddr_in6 *)client)->sin6_addr, 16);
	loop_timer_init(&ss->budget, on_budget, ss);
	loop_timer_arm(s->loop, &ss->budget,
	               loop_now_ms(s->loop) + s->cfg->signals.budget_ms);
	if (fcrdns_start(s->resolver, ss->family, ss->addr, on_fcrdns, ss,
	                 &ss->lookup) < 0) {
		/* (no memory: decided as if nothing were known) */
		ss->fcrdns.result = FCRDNS_TEMPERROR;
		ss->known = true;
		loop_timer_cancel(s->loop, &ss->budget);
	}
	return ss;
}

void
signals_session_end(struct session_signals *ss)
{
	if (!ss)
		return;
	fcrdns_cancel(ss->lookup);
	loop_timer_cancel(ss->s->loop, &ss->budget);
	tell_waiting(ss, NULL);
	free(ss);
}

int
signals_when_ready(struct session_signals *ss, signals_ready_fn *fn, void *ctx)
{
	struct waiter *w;

	if (ready(ss)) {
		fn(ctx, ss);
		return 0;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fn = fn;
	w->ctx = ctx;
	w->next = ss->waiting;
	ss->waiting = w;
	return 0;
}

void
signals_counters(const struct signals *s, struct resolver_counters *out,
                 size_t *held)
{
	resolver_counters(s->resolver, out, held);
}

void
signals_apply(const struct session_signals *ss, struct grey_attempt *a,
              char *buf)
{
	const struct fcrdns_answer *f = &ss->fcrdns;

	if (!ss->known) {
		snprintf(buf, GREY_SIGNALS_MAX, "fcrdns:late");
	} else if (f->result == FCRDNS_CONFIRMED ||
	           f->result == FCRDNS_UNCONFIRMED) {
		snprintf(buf, GREY_SIGNALS_MAX, "fcrdns:%s:%.250s;rdns:%s",
		         fcrdns_result_name(f->result), f->name,
		         ss->dynamic ? "dynamic" : "plain");
	} else {
		snprintf(buf, GREY_SIGNALS_MAX, "fcrdns:%s",
		         fcrdns_result_name(f->result));
	}
	a->signals = buf;
	a->trusted = ss->s->cfg->signals.trust_fcrdns && ss->known &&
	             f->result == FCRDNS_CONFIRMED && !ss->dynamic;
}
