// SPDX-License-Identifier: GPL-2.0-or-later
/* Segments to SMTP flows (frames are decoded in decode.c): the flow
 * table with its caps and LRU eviction, and per-direction TCP reassembly
 * (in order; out-of-order segments held in a bounded buffer;
 * retransmissions trimmed; a gap skipped when the buffer is full). Events
 * from the parser leave here with the flow's addresses, time and path. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "flow-int.h"

struct seg {
	struct seg *next;
	uint32_t seq;
	uint32_t len;
	uint8_t data[];
};

struct dir {
	uint32_t next_seq;
	bool seq_known;
	bool fin;
	struct seg *held; /* out-of-order segments, sorted by seq */
	size_t held_bytes;
};

/* The table grows with the flows open (one bucket a flow), not with
 * max_flows: a table sized for the cap is megabytes that every packet's
 * lookup misses the cache on. */
#define FLOW_BUCKETS_MIN 256

struct flow {
	struct hash_node node; /* (first) in sensor->flows */
	struct list_node lru; /* in sensor->lru */
	struct sensor *sensor;
	uint8_t family;
	uint8_t client[16], server[16];
	uint16_t client_port, server_port;
	struct dir dir[2]; /* 0: client to server, 1: server to client */
	/* Its parser, made with the first bytes to parse (a tarpit flow,
	 * known by the banner, never has one). */
	struct smtp_conv *conv;
	struct timeval last;
	enum sensor_path path;
	bool path_known;
	bool path_rechecked; /* asked again at its first event */
	bool from_start; /* it began with the client's SYN */
	bool skip; /* the tarpit's: it speaks for its sessions itself */
};

void
sensor_config_defaults(struct sensor_config *cfg)
{
	cfg->smtp_port = 25;
	cfg->tarpit_port = 0;
	cfg->max_flows = 100000;
	cfg->max_reorder_bytes = 64 * 1024;
	cfg->max_total_bytes = 64 * 1024 * 1024;
	cfg->idle_timeout_sec = 300;
}

struct sensor *
sensor_new(const struct sensor_config *cfg, sensor_event_fn *fn, void *ctx)
{
	struct sensor *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cfg = *cfg;
	s->fn = fn;
	s->ctx = ctx;
	if (hash_table_init(&s->flows, FLOW_BUCKETS_MIN) < 0) {
		free(s);
		return NULL;
	}
	list_init(&s->lru);
	return s;
}

void
sensor_set_tarpit_hook(struct sensor *s, sensor_tarpit_fn *fn, void *ctx)
{
	s->tarpit = fn;
	s->tarpit_ctx = ctx;
}

const struct sensor_counters *
sensor_get_counters(const struct sensor *s)
{
	return &s->counters;
}

static size_t
addr_len(uint8_t family)
{
	return family == AF_INET ? 4 : 16;
}

/* Keyed: this runs for every packet, and a flood from chosen addresses
 * and ports must not be able to aim at one bucket. */
static uint64_t
flow_hash(const struct sensor *s, uint8_t family, const uint8_t *client,
	  uint16_t cport, const uint8_t *server, uint16_t sport)
{
	uint8_t key[1 + 16 + 16 + 2 + 2];
	size_t n = addr_len(family), at = 0;

	key[at++] = family;
	memcpy(key + at, client, n);
	at += n;
	memcpy(key + at, server, n);
	at += n;
	memcpy(key + at, &cport, 2);
	memcpy(key + at + 2, &sport, 2);
	return hash_table_hash(&s->flows, key, at + 4);
}

/* Same address? With the length known at compile time, no call. */
static inline bool
addr_eq(uint8_t family, const uint8_t *a, const uint8_t *b)
{
	return family == AF_INET ? memcmp(a, b, 4) == 0 : memcmp(a, b, 16) == 0;
}

/* --- events --- */

static enum sensor_path
flow_path(struct flow *f)
{
	if (!f->sensor->tarpit)
		return SENSOR_PATH_UNKNOWN;
	if (!f->path_known) {
		f->path = f->sensor->tarpit(f->family, f->client, f->client_port,
					    f->sensor->tarpit_ctx)
				  ? SENSOR_PATH_TARPIT
				  : SENSOR_PATH_FAST;
		f->path_known = true;
	}
	return f->path;
}

static void
flow_emit(struct flow *f, enum sensor_event_type type, int reply,
	  const char *helo, const char *from, const char *to)
{
	struct sensor_event ev = {
		.type = type,
		.ts = f->last,
		.family = f->family,
		.client_port = f->client_port,
		.server_port = f->server_port,
		.reply = reply,
		.helo = helo,
		.from = from,
		.to = to,
	};

	if (f->sensor->quiet)
		return;
	memcpy(ev.client, f->client, 16);
	memcpy(ev.server, f->server, 16);
	if (type == SENSOR_EV_RCPT || type == SENSOR_EV_STARTTLS ||
	    type == SENSOR_EV_AUTH || type == SENSOR_EV_HELO) {
		ev.path = flow_path(f);
		/* The MTA's banner made it the fast path, but it may be
		 * greygate's own: the transparent hand-off's connection
		 * leaves from the client's address, and greygated reads its
		 * banner before the tarpit holds it; the tarpit does from
		 * the replay on, before any reply that makes an event. So
		 * asked again, once, at the first event. (Its packets are
		 * skipped from here: reassemble's caller sees the path.) */
		if (ev.path == SENSOR_PATH_FAST && !f->path_rechecked) {
			f->path_rechecked = true;
			f->path_known = false;
			ev.path = flow_path(f);
		}
		if (ev.path == SENSOR_PATH_TARPIT)
			return;
	}
	f->sensor->fn(&ev, f->sensor->ctx);
}

static void
on_conv_event(enum sensor_event_type type, int reply, const char *helo,
	      const char *from, const char *to, void *ctx)
{
	flow_emit(ctx, type, reply, helo, from, to);
}

/* --- the flow table --- */

/* The flow seen longest ago, NULL if none. */
static struct flow *
lru_first(const struct sensor *s)
{
	struct list_node *n = list_front(&s->lru);

	return n ? LIST_ENTRY(n, struct flow, lru) : NULL;
}

/* The flow seen after f, NULL if none. */
static struct flow *
lru_after(const struct sensor *s, const struct flow *f)
{
	struct list_node *n = list_next(&s->lru, &f->lru);

	return n ? LIST_ENTRY(n, struct flow, lru) : NULL;
}

static void
dir_release(struct sensor *s, struct dir *d)
{
	while (d->held) {
		struct seg *next = d->held->next;

		s->held_total -= d->held->len;
		free(d->held);
		d->held = next;
	}
	d->held_bytes = 0;
}

static void
flow_end(struct sensor *s, struct flow *f, bool report)
{
	hash_table_remove(&s->flows, &f->node);
	list_remove(&f->lru);
	/* Pending RCPTs are reported (reply 0) before the close. */
	s->quiet = !report || f->skip;
	if (f->conv)
		smtp_conv_end(f->conv);
	free(f->conv);
	flow_emit(f, SENSOR_EV_CLOSE, 0, "", "", "");
	s->quiet = false;
	dir_release(s, &f->dir[0]);
	dir_release(s, &f->dir[1]);
	s->nflows--;
	s->counters.flows_open = s->nflows;
	free(f);
}

static struct flow *
flow_find(struct sensor *s, const struct segment *seg, bool to_server)
{
	const uint8_t *client = to_server ? seg->src : seg->dst;
	const uint8_t *server = to_server ? seg->dst : seg->src;
	uint16_t cport = to_server ? seg->sport : seg->dport;
	uint16_t sport = to_server ? seg->dport : seg->sport;
	size_t n = addr_len(seg->family);
	uint64_t h = flow_hash(s, seg->family, client, cport, server, sport);
	struct flow *f;

	for (f = (struct flow *)hash_table_chain(&s->flows, h); f;
	     f = (struct flow *)f->node.next)
		if (f->node.hash == h && f->family == seg->family &&
		    f->client_port == cport &&
		    f->server_port == sport &&
		    addr_eq(f->family, f->client, client) &&
		    addr_eq(f->family, f->server, server))
			return f;
	/* A flow starts on a SYN or on data: a capture may begin
	 * mid-session, or see only one direction. A bare ACK, RST or FIN
	 * (the tail of a flow that just ended) starts nothing. */
	if ((seg->flags & (TCP_RST | TCP_FIN)) ||
	    (!(seg->flags & TCP_SYN) && seg->len == 0))
		return NULL;
	if (s->nflows >= s->cfg.max_flows && lru_first(s)) {
		s->counters.flows_evicted++;
		flow_end(s, lru_first(s), true);
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->sensor = s;
	f->family = seg->family;
	memcpy(f->client, client, n);
	memcpy(f->server, server, n);
	f->client_port = cport;
	f->server_port = sport;
	f->from_start = (seg->flags & TCP_SYN) && to_server;
	hash_table_add(&s->flows, &f->node, h);
	list_push_back(&s->lru, &f->lru);
	s->nflows++;
	s->counters.flows_open = s->nflows;
	s->counters.flows++;
	return f;
}

/* A tarpit flow: the tarpit tells its sessions itself, so the flow keeps
 * only what it takes to know its packets until it ends: its parser (if
 * the client spoke first) and buffers go. */
static void
flow_skip(struct sensor *s, struct flow *f)
{
	if (f->conv) {
		s->quiet = true;
		smtp_conv_end(f->conv);
		s->quiet = false;
		free(f->conv);
		f->conv = NULL;
	}
	f->skip = true;
	dir_release(s, &f->dir[0]);
	dir_release(s, &f->dir[1]);
	s->counters.tarpit_flows++;
}

/* --- reassembly --- */

static void
deliver(struct flow *f, int d, const uint8_t *data, size_t len)
{
	if (len == 0)
		return;
	/* The server's first bytes (the banner): whoever sent them holds the
	 * connection now, so the path is known for sure, and sensor_expire
	 * can tell a tarpit flow that outlived its connection. A tarpit's
	 * flow is skipped (on_segment), never parsed. */
	if (d == 1 && !f->path_known)
		flow_path(f);
	if (f->path_known && f->path == SENSOR_PATH_TARPIT)
		return;
	if (!f->conv) {
		f->conv = malloc(smtp_conv_size());
		if (!f->conv)
			return;
		smtp_conv_init(f->conv, &f->sensor->counters, f->from_start,
			       on_conv_event, f);
	}
	if (smtp_conv_is_done(f->conv))
		return;
	if (d == 0)
		smtp_conv_client(f->conv, data, len);
	else
		smtp_conv_server(f->conv, data, len);
}

/* A gap in one direction: the parser (if there is one yet) resyncs. */
static void
gap(struct flow *f, int d)
{
	if (f->conv)
		smtp_conv_gap(f->conv, d == 0);
}

/* In-order bytes from seq on: trims what was already delivered. */
static void
deliver_from(struct flow *f, int d, uint32_t seq, const uint8_t *data,
	     size_t len)
{
	struct dir *dr = &f->dir[d];
	int32_t behind = (int32_t)(dr->next_seq - seq);

	if (behind > 0) {
		if ((size_t)behind >= len)
			return; /* a retransmission */
		data += behind;
		len -= (size_t)behind;
	}
	dr->next_seq += (uint32_t)len;
	deliver(f, d, data, len);
}

static void
drain_held(struct flow *f, int d)
{
	struct sensor *s = f->sensor;
	struct dir *dr = &f->dir[d];

	while (dr->held && (int32_t)(dr->held->seq - dr->next_seq) <= 0) {
		struct seg *g = dr->held;

		dr->held = g->next;
		dr->held_bytes -= g->len;
		s->held_total -= g->len;
		deliver_from(f, d, g->seq, g->data, g->len);
		free(g);
	}
}

static bool
hold(struct flow *f, int d, uint32_t seq, const uint8_t *data, size_t len)
{
	struct sensor *s = f->sensor;
	struct dir *dr = &f->dir[d];
	struct seg **pp = &dr->held, *g;

	if (dr->held_bytes + len > s->cfg.max_reorder_bytes ||
	    s->held_total + len > s->cfg.max_total_bytes)
		return false;
	while (*pp && (int32_t)((*pp)->seq - seq) < 0)
		pp = &(*pp)->next;
	if (*pp && (*pp)->seq == seq && (*pp)->len >= len)
		return true; /* already held */
	g = malloc(sizeof(*g) + len);
	if (!g)
		return false;
	g->seq = seq;
	g->len = (uint32_t)len;
	memcpy(g->data, data, len);
	g->next = *pp;
	*pp = g;
	dr->held_bytes += len;
	s->held_total += len;
	return true;
}

static void
reassemble(struct flow *f, int d, const struct segment *seg)
{
	struct dir *dr = &f->dir[d];
	int32_t ahead;

	if (seg->flags & TCP_SYN) {
		dr->next_seq = seg->seq + 1;
		dr->seq_known = true;
		return;
	}
	if (!dr->seq_known) {
		dr->next_seq = seg->seq;
		dr->seq_known = true;
	}
	if (seg->len == 0)
		return;
	ahead = (int32_t)(seg->seq - dr->next_seq);
	if (ahead > 0) {
		if (hold(f, d, seg->seq, seg->payload, seg->len))
			return;
		/* No room to wait for the missing bytes: skip them, and
		 * let the parser find the next line. */
		gap(f, d);
		dr->next_seq = dr->held ? dr->held->seq : seg->seq;
		drain_held(f, d);
		if ((int32_t)(seg->seq - dr->next_seq) > 0) {
			gap(f, d);
			dr->next_seq = seg->seq;
		}
	}
	deliver_from(f, d, seg->seq, seg->payload, seg->len);
	drain_held(f, d);
}

void
sensor_on_segment(struct sensor *s, const struct timeval *ts,
	   const struct segment *seg)
{
	bool to_server;
	struct flow *f;
	int d;

	if (seg->dport == s->cfg.smtp_port ||
	    (s->cfg.tarpit_port && seg->dport == s->cfg.tarpit_port))
		to_server = true;
	else if (seg->sport == s->cfg.smtp_port ||
		 (s->cfg.tarpit_port && seg->sport == s->cfg.tarpit_port))
		to_server = false;
	else
		return;
	s->counters.tcp_segments++;
	f = flow_find(s, seg, to_server);
	if (!f)
		return;
	/* The LRU order only needs whole seconds (expiry and eviction read
	 * last.tv_sec): moving a flow once a second, not for every packet,
	 * spares touching its two neighbours' cache lines each time. */
	if (ts->tv_sec != f->last.tv_sec) {
		list_remove(&f->lru);
		list_push_back(&s->lru, &f->lru);
	}
	f->last = *ts;
	d = to_server ? 0 : 1;
	if (!f->skip) {
		reassemble(f, d, seg);
		if (f->path_known && f->path == SENSOR_PATH_TARPIT)
			flow_skip(s, f);
	}
	if (seg->flags & TCP_RST) {
		flow_end(s, f, true);
		return;
	}
	if (seg->flags & TCP_FIN)
		f->dir[d].fin = true;
	if (f->dir[0].fin && f->dir[1].fin) {
		flow_end(s, f, true);
		return;
	}
	/* Over the global cap: give back the oldest flows' buffers. */
	while (s->held_total > s->cfg.max_total_bytes && lru_first(s) &&
	       lru_first(s) != f) {
		s->counters.flows_evicted++;
		flow_end(s, lru_first(s), true);
	}
}

void
sensor_expire(struct sensor *s, int64_t now_sec)
{
	struct flow *f, *next;

	while (lru_first(s) &&
	       lru_first(s)->last.tv_sec + (int64_t)s->cfg.idle_timeout_sec <
		       now_sec)
		flow_end(s, lru_first(s), true);
	/* A tarpit flow is over once silent a while, even if the capture
	 * lost its FINs in a burst. So is one whose banner was never seen
	 * (a server speaks first: lost in a burst too): were it still
	 * talking, its next segment starts it again mid-session. */
	for (f = lru_first(s);
	     f && f->last.tv_sec + SENSOR_TARPIT_FLOW_IDLE_SEC < now_sec;
	     f = next) {
		next = lru_after(s, f);
		if (f->skip || (s->tarpit && !f->path_known))
			flow_end(s, f, true);
	}
}

void
sensor_finish(struct sensor *s)
{
	while (lru_first(s))
		flow_end(s, lru_first(s), true);
}

void
sensor_free(struct sensor *s)
{
	if (!s)
		return;
	while (lru_first(s))
		flow_end(s, lru_first(s), false);
	hash_table_free(&s->flows);
	free(s);
}
