// SPDX-License-Identifier: GPL-2.0-or-later
/* The simulator's engine (see sim.h): an event heap of message attempts in
 * virtual time, deterministic for a seed. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dns_answer.h"
#include "dns_cache.h"
#include "sim-int.h"

#define DAY 86400

struct event {
	int64_t at;
	uint32_t msg;
};

struct heap {
	struct event *e;
	size_t n, cap;
};

static uint64_t rng_state;

/* xorshift64*: small, fast, and the same everywhere for a seed. */
static uint64_t
rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static double
rng_unit(void)
{
	return (double)(rng() >> 11) / 9007199254740992.0;
}

static int
heap_push(struct heap *h, int64_t at, uint32_t msg)
{
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 4096;
		struct event *e = realloc(h->e, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		h->e = e;
		h->cap = cap;
	}
	i = h->n++;
	/* Ties go in order of message number: the same run every time. */
	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (h->e[p].at < at || (h->e[p].at == at && h->e[p].msg < msg))
			break;
		h->e[i] = h->e[p];
		i = p;
	}
	h->e[i] = (struct event){at, msg};
	return 0;
}

static struct event
heap_pop(struct heap *h)
{
	struct event top = h->e[0], last = h->e[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n &&
		    (h->e[c + 1].at < h->e[c].at ||
		     (h->e[c + 1].at == h->e[c].at &&
		      h->e[c + 1].msg < h->e[c].msg)))
			c++;
		if (last.at < h->e[c].at ||
		    (last.at == h->e[c].at && last.msg < h->e[c].msg))
			break;
		h->e[i] = h->e[c];
		i = c;
	}
	if (h->n)
		h->e[i] = last;
	return top;
}

void
sim_class_defaults(struct sim_class *c)
{
	memset(c, 0, sizeof(*c));
	c->messages = 1;
	c->spread = true;
	c->pick = SIM_PICK_SAME;
	c->give_up = 5 * DAY;
	c->burst_gap = 1;
	c->recipients = 1;
	c->senders = 1;
	c->rcpt_pool = 100;
	c->fcrdns = -1;
}

/* A busier day than night: arrivals peak at noon, thin at midnight. */
static int64_t
arrival(const struct sim_class *c, uint32_t days)
{
	double s;

	if (!c->spread)
		return SIM_EPOCH + c->start;
	do
		s = rng_unit() * DAY;
	while (rng_unit() * 1.6 > 1.0 + 0.6 * sin(2 * M_PI * (s / DAY - 0.25)));
	return SIM_EPOCH + (int64_t)(rng() % days) * DAY + (int64_t)s;
}

/* A host within net: the net's own address at full length, else random. */
static void
host_in(const struct grey_client *net, struct grey_addr *a)
{
	int bits = net->family == AF_INET ? 32 : 128;

	a->family = net->family;
	memcpy(a->bytes, net->bytes, 16);
	for (int b = net->prefix; b < bits; b++)
		if (rng() & 1)
			a->bytes[b / 8] |= (uint8_t)(0x80 >> (b % 8));
}

static void
random_address(struct grey_addr *a)
{
	uint32_t v;

	/* Anywhere in unicast IPv4: botnets span many /16s. */
	do
		v = (uint32_t)rng();
	while ((v >> 24) == 0 || (v >> 24) >= 224 || (v >> 24) == 127);
	memset(a, 0, sizeof(*a));
	a->family = AF_INET;
	a->bytes[0] = (uint8_t)(v >> 24);
	a->bytes[1] = (uint8_t)(v >> 16);
	a->bytes[2] = (uint8_t)(v >> 8);
	a->bytes[3] = (uint8_t)v;
}

static void
pick_client(const struct sim_class *c, struct msg *m, struct grey_addr *a)
{
	if (!c->nnets) {
		if (m->attempt == 0)
			random_address(&m->addr);
		*a = m->addr;
		return;
	}
	switch (c->pick) {
	case SIM_PICK_SAME:
		if (m->attempt == 0)
			host_in(&c->nets[m->net], &m->addr);
		*a = m->addr;
		return;
	case SIM_PICK_ROTATE:
		host_in(&c->nets[(m->net + m->attempt) % (uint32_t)c->nnets], a);
		return;
	case SIM_PICK_RANDOM:
		host_in(&c->nets[rng() % (uint32_t)c->nnets], a);
		return;
	}
}

/* Is a in the pass sets: its network's pass, or its own (a trusted
 * client's, issue 56: set trust4)? */
static bool
passed(struct store *store, const struct grey_config *cfg,
       const struct grey_addr *a, int64_t now)
{
	struct grey_client key;
	struct store_client rec;

	grey_client_of(a, a->family == AF_INET ? cfg->prefix4 : cfg->prefix6,
		       &key);
	if (store_get_client(store, STORE_PASS, &key, &rec) == STORE_FOUND &&
	    rec.expires > now)
		return true;
	grey_client_of(a, 128, &key);
	return store_get_client(store, STORE_PASS, &key, &rec) == STORE_FOUND &&
	       rec.expires > now;
}

/* A delay onto a growing array (its length n, its room cap). */
static int
keep_delay(uint32_t **delays, uint64_t *n, size_t *cap, uint32_t delay)
{
	if (*n == *cap) {
		size_t size = *cap ? *cap * 2 : 4096;
		uint32_t *d = realloc(*delays, size * sizeof(*d));

		if (!d)
			return -ENOMEM;
		*delays = d;
		*cap = size;
	}
	(*delays)[(*n)++] = delay;
	return 0;
}

/* What one session came to. */
enum sim_outcome {
	SIM_NOT_YET,    /* greylisted (or trapped): it may retry */
	SIM_DELIVERED,  /* passed, or on the fast path */
	SIM_BY_TLS,     /* delivered by a STARTTLS pass handed to the MTA */
	SIM_REFUSED,    /* 550 at a RCPT: the sender gives up (a bounce) */
};

/* One session of message m at now, c's DNS as its shares say (fcrdns,
 * dynamic). Return: an enum sim_outcome, or -errno. */
static int
attempt(const struct sim_workload *w, const struct sim_class *c,
	struct msg *m, int64_t now, const struct grey_config *cfg, bool handoff,
	const struct sim_signals *sig, int32_t fcrdns, int32_t dynamic,
	struct sim_dns *dns, struct grey *grey, struct store *store)
{
	struct grey_addr a = {0};
	struct grey_decision d;
	struct sim_view v;
	bool fast, asked = false;
	char from[96], to[64];
	uint32_t refused = 0;
	int r;

	pick_client(c, m, &a);
	v = sim_view_of(w, c, sig, fcrdns, dynamic, &a, m);
	fast = passed(store, cfg, &a, now);
	m->met_tarpit |= !fast;
	if (c->verp)
		snprintf(from, sizeof(from), "bounces+%u@%s.example", m->idx,
			 c->name);
	else
		snprintf(from, sizeof(from), "user%u@%s.example",
			 m->idx % c->senders, c->name);
	if (!fast && v.modelled)
		sim_dns_session(dns, sig, c, &a, &v,
		            m->tls && (cfg->tls_pass || cfg->tls_strict ||
		                       cfg->tls_greylist),
		            from, now);
	if (!fast && m->tls &&
	    (cfg->tls_pass || cfg->tls_strict || cfg->tls_greylist)) {
		struct grey_attempt tls = {.kind = GREY_ATTEMPT_STARTTLS,
					   .now = now, .client = a, .helo = "",
					   .path = GREY_PATH_TARPIT};

		sim_apply_signals(c, sig, &v, &tls);
		r = store_decide(store, grey, &tls, &d);
		if (r < 0)
			return r;
		/* Handed at STARTTLS: TLS with the MTA, delivered. */
		if (handoff && d.action == GREY_PASS) {
			m->attempt++;
			return SIM_BY_TLS;
		}
		/* Greylisted at STARTTLS (or trapped): the session ends
		 * there, unanswered; it never reaches a RCPT. */
		if (d.action == GREY_GREYLIST || d.action == GREY_TRAP) {
			m->attempt++;
			return SIM_NOT_YET;
		}
		/* Strict: in TLS with the MTA, which asks per recipient. */
		asked = handoff && d.action == GREY_ALLOWED;
	}
	for (uint32_t i = 0; i < c->recipients; i++) {
		uint32_t which[3] = {m->cls, m->idx, i};
		struct grey_attempt rcpt = {
			.kind = GREY_ATTEMPT_RCPT, .now = now, .client = a,
			.helo = "", .sender = from, .rcpt = to,
			.path = fast    ? GREY_PATH_FAST
				: asked ? GREY_PATH_POLICY
					: GREY_PATH_TARPIT,
			.reply = fast ? 250 : asked ? 0 : 451,
			};

		/* (an unknown one is the same at every retry) */
		snprintf(to, sizeof(to), "%s%u@example.org",
			 sim_draw(which, sizeof(which), 4) < (uint32_t)c->unknown_rcpt
				 ? "nobody"
				 : "user",
			 (m->idx * 7 + i) % c->rcpt_pool);
		/* (on the fast path only its pooling counts: the triplet
		 * its delivery notes) */
		sim_apply_signals(c, sig, &v, &rcpt);
		r = store_decide(store, grey, &rcpt, &d);
		if (r < 0)
			return r;
		/* A recipient that does not exist: that one refused (with
		 * valid_recipients); the sender's refusals are every
		 * recipient's (the first says) */
		if (d.action == GREY_REFUSE &&
		    d.reason == GREY_REASON_UNKNOWN_RECIPIENT) {
			refused++;
			continue;
		}
		if (d.action == GREY_REFUSE) {
			m->attempt++;
			return SIM_REFUSED;
		}
		/* Handed at the RCPT that passed: the MTA takes the message
		 * (recipients refused before it come on the fast path next
		 * time: counted by message, it is delivered now). */
		if (!fast && handoff && d.action == GREY_PASS)
			fast = true;
	}
	m->attempt++;
	if (refused == c->recipients)
		return SIM_REFUSED;
	/* (Asked by the MTA, in TLS, a message is delivered by the retry
	 * that passes greylisting: not by TLS. A retry asks again for
	 * recipients refused before: the model keeps no list of them.) */
	return fast ? SIM_DELIVERED : SIM_NOT_YET;
}

/* When the message's next attempt is, or -1 if it gives up. */
static int64_t
next_attempt(const struct sim_class *c, const struct msg *m, int64_t now)
{
	int64_t next;

	if (m->attempt <= c->burst)
		return now + c->burst_gap;
	if (!c->nretry)
		return -1;
	next = now + c->retry[m->attempt - c->burst - 1 < (uint32_t)c->nretry
				      ? m->attempt - c->burst - 1
				      : (uint32_t)c->nretry - 1];
	return next - m->first > (int64_t)c->give_up ? -1 : next;
}

/* Does a message of c say STARTTLS? The class says, unless the workload
 * sets a share for its kind. (No draw without a share: a workload without
 * shares runs as it always did.) */
static bool
says_starttls(const struct sim_workload *w, const struct sim_class *c)
{
	int32_t share = c->unwanted ? w->starttls_bots : w->starttls_legit;

	if (share < 0)
		return c->starttls;
	return share > 0 && rng() % 100 < (uint32_t)share;
}

/* The share of c's addresses with FCrDNS: the workload's for its kind
 * when set, else the class's own. */
static int32_t
class_fcrdns(const struct sim_workload *w, const struct sim_class *c)
{
	int32_t share = c->unwanted ? w->fcrdns_bots : w->fcrdns_legit;

	return share >= 0 ? share : c->fcrdns;
}

/* ... and with a dynamic-looking PTR name */
static int32_t
class_dynamic(const struct sim_workload *w, const struct sim_class *c)
{
	int32_t share = c->unwanted ? w->dynamic_bots : w->dynamic_legit;

	return share >= 0 ? share : c->dynamic;
}

/* greygated purges continuously (housekeeping: 2,000 records a second
 * a table); the sim does it once a virtual hour, all that has expired by
 * then: its store is at most an hour's expiries larger. */
#define SIM_PURGE_EVERY 3600

/* Delete what has expired at now, as greygated's purge. */
static int
purge(struct store *store, const struct grey_config *cfg, int64_t now,
      struct sim_stats *st)
{
	struct store_purged p = {0};
	int r = store_flush(store);

	if (r == 0)
		r = store_purge(store, now, cfg->retry_window_sec, SIZE_MAX, &p);
	if (r >= 0)
		r = store_flush(store);
	st->store_commits += 2;
	st->purged_triplets += p.triplets;
	st->purged_passes += p.passes;
	return r < 0 ? r : 0;
}

/* What this process gave to write system calls so far (/proc/self/io's
 * wchar): LMDB writes its pages with pwrite (no MDB_WRITEMAP), and the
 * sim writes nothing else while it runs. 0 if it cannot be read. */
static uint64_t
bytes_written(void)
{
	FILE *f = fopen("/proc/self/io", "re");
	char line[128];
	unsigned long long n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "wchar: %llu", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* A snapshot as greygated's store_snapshot.c takes it: the store's
 * compacted copy by its thread (into a file of its own, thrown away),
 * when something was committed since the last one. What it wrote is the
 * flash's share; the store's own writes (to tmpfs) are what is left of
 * wchar. */
static int
snapshot(struct store *store, uint64_t *generation, struct sim_stats *st)
{
	char path[] = "/tmp/greygate-sim-snapshot-XXXXXX";
	uint64_t now = store_generation(store);
	struct stat sb;
	int fd, r;

	if (now == *generation)
		return 0;
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	unlink(path);
	r = store_copy_start(store, fd);
	if (r == 0)
		r = store_copy_wait(store);
	if (r == 0 && fstat(fd, &sb) < 0)
		r = -errno;
	close(fd);
	if (r < 0)
		return r;
	*generation = now;
	st->snapshots++;
	st->snapshot_written += (uint64_t)sb.st_size;
	return 0;
}

static int
count_triplet(const struct grey_client *cl, const char *s, const char *r,
	      const struct store_triplet *t, void *ctx)
{
	(*(uint64_t *)ctx)++;
	return 0;
}

int
sim_run(const struct sim_workload *w, const struct grey_config *cfg,
	bool handoff, const struct sim_signals *sig, struct grey *grey,
	struct store *store,
	uint32_t commit_ms, uint32_t snapshot_ms, struct sim_stats *st)
{
	struct heap h = {0};
	struct sim_dns dns = {0};
	struct msg *msgs;
	size_t total = 0, delays_cap = 0, tarpit_cap = 0, k = 0;
	int64_t next_purge = SIM_EPOCH + SIM_PURGE_EVERY;
	uint64_t committed_ms = (uint64_t)SIM_EPOCH * 1000, written;
	uint64_t snapshot_at_ms = (uint64_t)SIM_EPOCH * 1000 + snapshot_ms;
	uint64_t generation = 0, snap_wchar = 0;
	int r = 0;

	memset(st, 0, sizeof(*st));
	rng_state = w->seed ? w->seed : 1;
	/* (the resolver's default bound: 10,000 answers) */
	dns.cache = dns_cache_new(10000, DNS_CACHE_BYTES);
	if (!dns.cache)
		return -ENOMEM;
	for (int i = 0; i < w->ncls; i++)
		total += w->cls[i].messages;
	msgs = calloc(total ? total : 1, sizeof(*msgs));
	if (!msgs) {
		dns_cache_free(dns.cache);
		return -ENOMEM;
	}
	for (int i = 0; i < w->ncls; i++) {
		const struct sim_class *c = &w->cls[i];

		for (uint32_t n = 0; n < c->messages && r == 0; n++, k++) {
			struct msg *m = &msgs[k];

			m->cls = (uint32_t)i;
			m->idx = n;
			m->first = arrival(c, w->days ? w->days : 1);
			m->net = c->nnets ? n % (uint32_t)c->nnets : 0;
			m->tls = says_starttls(w, c);
			r = heap_push(&h, m->first, (uint32_t)k);
			if (c->unwanted)
				st->unwanted_messages++;
			if (c->unwanted && c->nretry)
				st->retrying_messages++;
			else if (!c->unwanted)
				st->legit_messages++;
		}
	}
	written = bytes_written();
	while (r == 0 && h.n) {
		struct event e = heap_pop(&h);
		struct msg *m = &msgs[e.msg];
		const struct sim_class *c = &w->cls[m->cls];
		int64_t next;

		if (w->purge && e.at >= next_purge) {
			r = purge(store, cfg, e.at, st);
			if (r < 0)
				break;
			next_purge = e.at + SIM_PURGE_EVERY;
		}

		if (snapshot_ms && (uint64_t)e.at * 1000 >= snapshot_at_ms) {
			uint64_t before = bytes_written();

			r = snapshot(store, &generation, st);
			if (r < 0)
				break;
			snap_wchar += bytes_written() - before;
			snapshot_at_ms = (uint64_t)e.at * 1000 + snapshot_ms;
		}
		r = attempt(w, c, m, e.at, cfg, handoff, sig, class_fcrdns(w, c),
			    class_dynamic(w, c), &dns, grey, store);
		if (r < 0)
			break;
		/* Committed as greygated commits (store_commit_due): a
		 * delivery may have passed or refreshed a client. */
		if (store_commit_due(store_pending(store), false,
		                     r != SIM_NOT_YET && r != SIM_REFUSED,
		                     (uint64_t)e.at * 1000, committed_ms,
		                     commit_ms)) {
			int f = store_flush(store);

			committed_ms = (uint64_t)e.at * 1000;
			st->store_commits++;
			if (f < 0) {
				r = f;
				break;
			}
		}
		if (r == SIM_BY_TLS && c->unwanted)
			st->unwanted_by_tls++;
		st->sessions++;
		if (c->unwanted)
			st->unwanted_attempts++;
		if (r == SIM_REFUSED) {
			if (c->unwanted) {
				st->unwanted_refused++;
			} else {
				st->legit_refused++;
				st->legit_lost++;
			}
			r = 0;
			continue;
		}
		if (r != SIM_NOT_YET) {
			if (c->unwanted) {
				st->unwanted_delivered++;
				st->retrying_delivered += c->nretry > 0;
				st->unwanted_first += e.at == m->first;
			} else {
				st->legit_delivered++;
				uint32_t delay = (uint32_t)(e.at - m->first);

				if (e.at > m->first)
					st->legit_delayed++;
				r = keep_delay(&st->delays, &st->ndelays,
					       &delays_cap, delay);
				if (r == 0 && m->met_tarpit)
					r = keep_delay(&st->tarpit_delays,
						       &st->ntarpit_delays,
						       &tarpit_cap, delay);
			}
			r = r < 0 ? r : 0;
			continue;
		}
		next = next_attempt(c, m, e.at);
		if (next < 0) {
			if (!c->unwanted)
				st->legit_lost++;
			continue;
		}
		r = heap_push(&h, next, e.msg);
	}
	free(h.e);
	free(msgs);
	st->dns_asked = dns.asked;
	st->dns_cached = dns.cached;
	dns_cache_free(dns.cache);
	if (r < 0 || (r = store_flush(store)) < 0)
		return r;
	/* (and the one at stop) */
	if (snapshot_ms) {
		uint64_t before = bytes_written();

		if ((r = snapshot(store, &generation, st)) < 0)
			return r;
		snap_wchar += bytes_written() - before;
	}
	st->store_written = bytes_written() - written - snap_wchar;
	st->store_bytes = store_get_counters(store)->used_bytes;
	store_each_triplet(store, count_triplet, &st->store_triplets);
	st->store_passes = store_count(store, STORE_PASS);
	return 0;
}
