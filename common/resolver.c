// SPDX-License-Identifier: GPL-2.0-or-later
/* greygated's DNS resolver (resolver.h): c-ares's channel driven by the
 * loop, the cache in front of it, and a question in flight per
 * (type, name) with everyone who waits for it. */
#include <ares.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>

#include "dns_cache.h"
#include "hash_table.h"
#include "log.h"
#include "resolver.h"

/* One question in flight, and who waits for its answer. */
struct pending {
	struct hash_node node; /* (first) in r->pending, by its question */
	struct resolver *r;
	struct resolver_query *waiters;
	enum dns_type type;
	bool asking;   /* inside ares_query: an answer now waits in early */
	bool answered; /* early holds it */
	bool delivering;
	struct dns_answer early;
	char name[];
};

struct resolver_query {
	struct pending *p;
	struct resolver_query *next;
	resolver_fn *fn; /* NULL: cancelled while its answer is told */
	void *ctx;
};

struct resolver {
	struct loop *loop;
	ares_channel channel;
	struct dns_cache *cache;
	struct resolver_config cfg;
	struct loop_timer timer;
	struct hash_table pending; /* the questions in flight: one each,
	                              keyed (names are what clients
	                              invent, issue 58) */
	struct resolver_counters n;
	unsigned timeouts_in_row; /* questions no server answered, in a row */
	bool said_unwatched; /* a socket the loop could not watch, said once */
};

static void
arm_timer(struct resolver *r)
{
	struct timeval tv;

	if (!ares_timeout(r->channel, NULL, &tv)) {
		loop_timer_cancel(r->loop, &r->timer);
		return;
	}
	loop_timer_arm(r->loop, &r->timer,
	               loop_now_ms(r->loop) + (uint64_t)tv.tv_sec * 1000 +
	                       (uint64_t)(tv.tv_usec + 999) / 1000);
}

static void
on_socket(struct loop *loop, int fd, uint32_t events, void *ctx)
{
	struct resolver *r = ctx;

	(void)loop;
	ares_process_fd(r->channel,
	                events & (EPOLLIN | EPOLLERR | EPOLLHUP) ? fd
	                                                         : ARES_SOCKET_BAD,
	                events & EPOLLOUT ? fd : ARES_SOCKET_BAD);
	arm_timer(r);
}

static void
on_timer(struct loop *loop, struct loop_timer *timer, void *ctx)
{
	struct resolver *r = ctx;

	(void)loop;
	(void)timer;
	ares_process_fd(r->channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	arm_timer(r);
}

/* c-ares opens, changes and closes its sockets: the loop follows. */
static void
on_socket_state(void *ctx, ares_socket_t fd, int readable, int writable)
{
	struct resolver *r = ctx;
	uint32_t events = (readable ? EPOLLIN : 0) | (writable ? EPOLLOUT : 0);

	if (!events) {
		loop_del_fd(r->loop, fd);
		return;
	}
	int err = loop_mod_fd(r->loop, fd, events);

	if (err == -ENOENT)
		err = loop_add_fd(r->loop, fd, events, on_socket, r);
	/* Its questions still end, as timeouts: say why, once. */
	if (err < 0 && !r->said_unwatched) {
		r->said_unwatched = true;
		log_warnx("DNS: cannot watch a resolver socket (%s): its "
		          "questions will time out",
		          strerror(-err));
	}
}

static void
unlink_pending(struct pending *p)
{
	hash_table_remove(&p->r->pending, &p->node);
}

/* Everyone waiting is told (a waiter may cancel another meanwhile: it is
 * marked, not freed, until all are told). */
static void
deliver(struct pending *p, const struct dns_answer *a)
{
	struct resolver_query *q, *next;

	unlink_pending(p);
	p->delivering = true;
	for (q = p->waiters; q; q = q->next)
		if (q->fn)
			q->fn(a, false, q->ctx);
	for (q = p->waiters; q; q = next) {
		next = q->next;
		free(q);
	}
	free(p);
}

/* A server answered (or none did, timed_out): a resolver that stopped
 * answering is noticed after RESOLVER_SILENT_AFTER timeouts in a row, so
 * that its callers decide at once rather than each waiting out its
 * budget (issue 57: 1.5 s a decision for as long as it stayed dead);
 * the first answer since ends it. Both are said. */
static void
note_server(struct resolver *r, bool timed_out)
{
	if (!timed_out) {
		if (r->n.silent)
			log_info("DNS answers again (silent for %lld s): "
			         "decisions wait for it again",
			         (long long)(loop_wall_sec(r->loop) -
			                     r->n.silent_since));
		r->n.silent = false;
		r->timeouts_in_row = 0;
		return;
	}
	if (++r->timeouts_in_row < RESOLVER_SILENT_AFTER || r->n.silent)
		return;
	r->n.silent = true;
	r->n.silent_since = loop_wall_sec(r->loop);
	r->n.silences++;
	log_warnx("DNS does not answer (%u questions in a row timed out): "
	          "decisions go on at once without it (greylisted as "
	          "without lookups, nobody trusted) while questions are "
	          "still asked, until one is answered",
	          r->timeouts_in_row);
}

static void
read_answer(struct resolver *r, struct pending *p, int status,
            unsigned char *abuf, int alen, struct dns_answer *a)
{
	memset(a, 0, sizeof(*a));
	a->type = p->type;
	switch (status) {
	case ARES_SUCCESS:
	case ARES_ENODATA:
	case ARES_ENOTFOUND:
		if (abuf && alen > 0 &&
		    dns_answer_read(abuf, (size_t)alen, p->type,
		                    r->cfg.negative_ttl_max, a) == 0)
			break;
		a->status = abuf ? DNS_BAD : status == ARES_ENOTFOUND
		                                     ? DNS_NXDOMAIN
		                                     : DNS_NODATA;
		break;
	case ARES_ETIMEOUT:
		a->status = DNS_TIMEOUT;
		break;
	case ARES_EBADNAME:
	case ARES_EBADRESP:
	case ARES_EFORMERR:
		a->status = DNS_BAD;
		break;
	default: /* SERVFAIL, refused, connection refused, ... */
		a->status = DNS_SERVFAIL;
		break;
	}
	if (a->status == DNS_TIMEOUT)
		r->n.timeouts++;
	else if (a->status == DNS_SERVFAIL || a->status == DNS_BAD)
		r->n.failures++;
	note_server(r, a->status == DNS_TIMEOUT);
}

static void
on_answer(void *ctx, int status, int timeouts, unsigned char *abuf, int alen)
{
	struct pending *p = ctx;
	struct resolver *r = p->r;
	struct dns_answer a;

	(void)timeouts;
	if (status == ARES_EDESTRUCTION || status == ARES_ECANCELLED) {
		/* resolver_free: nobody is told */
		struct resolver_query *q, *next;

		for (q = p->waiters; q; q = next) {
			next = q->next;
			free(q);
		}
		unlink_pending(p);
		free(p);
		return;
	}
	read_answer(r, p, status, abuf, alen, &a);
	if (dns_cache_put(r->cache, p->name, &a, r->cfg.ttl_max,
	                  loop_now_ms(r->loop)) < 0) {
		/* not kept: asked again next time */
	}
	if (p->asking) { /* answered inside ares_query: told after it */
		p->early = a;
		p->answered = true;
		return;
	}
	deliver(p, &a);
	dns_answer_clear(&a);
}

static uint64_t
question_hash(const struct resolver *r, enum dns_type type, const char *name)
{
	char key[DNS_NAME_MAX + 1];

	return hash_table_hash(&r->pending, key,
	                       dns_question_key(type, name, key));
}

static struct pending *
in_flight(struct resolver *r, enum dns_type type, const char *name,
          uint64_t h)
{
	for (struct hash_node *n = hash_table_chain(&r->pending, h); n;
	     n = n->next) {
		struct pending *p = (struct pending *)n;

		if (n->hash == h && p->type == type && !p->delivering &&
		    !strcasecmp(p->name, name))
			return p;
	}
	return NULL;
}

int
resolver_ask(struct resolver *r, const char *name, enum dns_type type,
             resolver_fn *fn, void *ctx, struct resolver_query **out)
{
	const struct dns_answer *kept;
	struct resolver_query *q;
	struct pending *p;
	uint64_t h;

	*out = NULL;
	kept = dns_cache_get(r->cache, type, name, loop_now_ms(r->loop));
	if (kept) {
		r->n.cached++;
		fn(kept, true, ctx);
		return 0;
	}
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->fn = fn;
	q->ctx = ctx;
	h = question_hash(r, type, name);
	p = in_flight(r, type, name, h);
	if (p) {
		r->n.joined++;
		q->p = p;
		q->next = p->waiters;
		p->waiters = q;
		*out = q;
		return 0;
	}
	p = calloc(1, sizeof(*p) + strlen(name) + 1);
	if (!p) {
		free(q);
		return -ENOMEM;
	}
	strcpy(p->name, name);
	p->r = r;
	p->type = type;
	p->waiters = q;
	q->p = p;
	hash_table_add(&r->pending, &p->node, h);
	r->n.asked++;
	p->asking = true;
	ares_query(r->channel, name, 1 /* IN */, (int)type, on_answer, p);
	p->asking = false;
	if (p->answered) {
		struct dns_answer a = p->early;

		deliver(p, &a);
		dns_answer_clear(&a);
		return 0;
	}
	*out = q;
	arm_timer(r);
	return 0;
}

void
resolver_cancel(struct resolver_query *q)
{
	struct pending *p;
	struct resolver_query **at;

	if (!q)
		return;
	p = q->p;
	if (p->delivering) {
		q->fn = NULL;
		return;
	}
	for (at = &p->waiters; *at != q; at = &(*at)->next)
		;
	*at = q->next;
	free(q);
	/* The question stays asked: its answer is cached for the next. */
}

struct resolver *
resolver_new(struct loop *loop, const struct resolver_config *cfg, char *err,
             size_t len)
{
	struct ares_options opts;
	struct resolver *r;
	int rc;

	rc = ares_library_init(ARES_LIB_INIT_ALL);
	if (rc != ARES_SUCCESS) {
		snprintf(err, len, "c-ares: %s", ares_strerror(rc));
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	r->loop = loop;
	r->cfg = *cfg;
	r->cfg.servers = NULL; /* (given to c-ares: not kept) */
	if (!r->cfg.timeout_ms)
		r->cfg.timeout_ms = 1000;
	if (!r->cfg.tries)
		r->cfg.tries = 2;
	if (!r->cfg.cache_max)
		r->cfg.cache_max = 10000;
	if (!r->cfg.ttl_max)
		r->cfg.ttl_max = 3600;
	if (!r->cfg.cache_bytes_max)
		r->cfg.cache_bytes_max = DNS_CACHE_BYTES;
	if (!r->cfg.negative_ttl_max)
		r->cfg.negative_ttl_max = 900;
	loop_timer_init(&r->timer, on_timer, r);
	r->cache = dns_cache_new(r->cfg.cache_max, r->cfg.cache_bytes_max);
	if (!r->cache || hash_table_init(&r->pending, 64) < 0) {
		snprintf(err, len, "out of memory");
		dns_cache_free(r->cache);
		free(r);
		return NULL;
	}
	memset(&opts, 0, sizeof(opts));
	opts.timeout = (int)r->cfg.timeout_ms;
	opts.tries = (int)r->cfg.tries;
	opts.sock_state_cb = on_socket_state;
	opts.sock_state_cb_data = r;
	opts.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES | ARES_FLAG_EDNS;
	opts.ednspsz = 1232; /* (DNS flag day 2020: no fragments) */
	rc = ares_init_options(&r->channel, &opts,
	                       ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES |
	                               ARES_OPT_SOCK_STATE_CB | ARES_OPT_FLAGS |
	                               ARES_OPT_EDNSPSZ);
	if (rc != ARES_SUCCESS) {
		snprintf(err, len, "c-ares: %s", ares_strerror(rc));
		dns_cache_free(r->cache);
		hash_table_free(&r->pending);
		free(r);
		return NULL;
	}
	if (cfg->servers && cfg->servers[0] &&
	    (rc = ares_set_servers_ports_csv(r->channel, cfg->servers)) !=
	            ARES_SUCCESS) {
		snprintf(err, len, "DNS servers \"%s\": %s", cfg->servers,
		         ares_strerror(rc));
		resolver_free(r);
		return NULL;
	}
	return r;
}

void
resolver_free(struct resolver *r)
{
	if (!r)
		return;
	ares_destroy(r->channel); /* each question in flight: EDESTRUCTION */
	loop_timer_cancel(r->loop, &r->timer);
	dns_cache_free(r->cache);
	hash_table_free(&r->pending);
	free(r);
}

bool
resolver_silent(const struct resolver *r)
{
	return r && r->n.silent;
}

void
resolver_counters(const struct resolver *r, struct resolver_counters *out,
                  size_t *cached_now)
{
	*out = r->n;
	if (cached_now)
		*cached_now = dns_cache_count(r->cache);
}
