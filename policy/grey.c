// SPDX-License-Identifier: GPL-2.0-or-later
/* The greylist state machine: from a RCPT (or a STARTTLS) and the store's
 * state to a decision with its reason. Owns the static allow list, the
 * never-greylisted recipients and the greytrap addresses. Time only ever
 * comes in as `now`. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "grey_store.h"
#include "policy.h"
#include "recipients.h"
#include "seen_table.h"
#include "unknown_tally.h"

struct str_list {
	char **items;
	size_t len;
};

struct grey {
	struct grey_config cfg;
	struct store *store;
	struct ip_range *allow; /* sorted, not overlapping */
	size_t allow_len;
	struct str_list exempt; /* "postmaster@" matches any domain */
	struct str_list traps;
	struct recipients *valid; /* NULL: recipients not checked */
	struct unknown_tally *unknown; /* who asked for the unknown ones */
	struct seen_table *messages; /* each waiting message's first attempt,
					from whichever network */
	struct seen_table *door_passes; /* clients the policy door passed,
					   its own (door_passes_gateway
					   off): in memory only */
	struct grey_counters counters;
	uint32_t *delays; /* ring of GREY_DELAYS_KEPT, grown on demand */
	size_t ndelays, delays_alloc;
	uint64_t delays_seen;
	struct grey_delay_histogram histogram;
};

/* Messages (a sender and a recipient) waiting, kept at most (48 bytes
 * each): past that, the one seen longest ago is forgotten, and its delay
 * to delivery counts from its triplet's first attempt alone. */
#define GREY_MESSAGES_KEPT 8192
/* Clients the door passed for itself, kept at most (the oldest out). */
#define GREY_DOOR_PASSES_KEPT 4096

const uint32_t grey_delay_bounds[GREY_DELAY_BOUNDS] = {
	60, 300, 600, 900, 1200, 1800, 3600, 7200, 14400, 28800, 86400};

void
grey_config_defaults(struct grey_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->delay_sec = 300;
	cfg->retry_window_sec = 2 * 86400;
	cfg->pass_ttl_sec = 35 * 86400;
	cfg->refresh_interval_sec = 3600;
	cfg->trap_ttl_sec = 86400;
	cfg->prefix4 = 24;
	cfg->prefix6 = 64;
	cfg->trust_ttl_sec = 86400;
	cfg->tls_greylist = true;
}

struct grey *
grey_new(const struct grey_config *cfg, struct store *store)
{
	struct grey *grey = calloc(1, sizeof(*grey));

	if (!grey)
		return NULL;
	grey->unknown = unknown_tally_new();
	grey->messages =
	        seen_table_new(GREY_MESSAGES_KEPT, cfg->retry_window_sec);
	grey->door_passes =
	        seen_table_new(GREY_DOOR_PASSES_KEPT, cfg->pass_ttl_sec);
	if (!grey->unknown || !grey->messages || !grey->door_passes) {
		unknown_tally_free(grey->unknown);
		seen_table_free(grey->messages);
		seen_table_free(grey->door_passes);
		free(grey);
		return NULL;
	}
	grey->cfg = *cfg;
	grey->store = store;
	return grey;
}

static void
str_list_free(struct str_list *l)
{
	for (size_t i = 0; i < l->len; i++)
		free(l->items[i]);
	free(l->items);
	l->items = NULL;
	l->len = 0;
}

void
grey_free(struct grey *grey)
{
	if (!grey)
		return;
	free(grey->allow);
	free(grey->delays);
	str_list_free(&grey->exempt);
	str_list_free(&grey->traps);
	recipients_free(grey->valid);
	unknown_tally_free(grey->unknown);
	seen_table_free(grey->messages);
	seen_table_free(grey->door_passes);
	free(grey);
}

int
grey_allow_set(struct grey *grey, const struct ip_range *ranges, size_t n)
{
	struct ip_range *copy = NULL;

	for (size_t i = 1; i < n; i++) {
		const struct ip_range *a = &ranges[i - 1], *b = &ranges[i];

		if (a->family > b->family ||
		    (a->family == b->family &&
		     ip_addr_cmp(a->family, a->hi, b->lo) >= 0))
			return -EINVAL;
	}
	if (n) {
		copy = malloc(n * sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		memcpy(copy, ranges, n * sizeof(*copy));
	}
	free(grey->allow);
	grey->allow = copy;
	grey->allow_len = n;
	return 0;
}

static int
str_list_add(struct str_list *l, const char *addr)
{
	char norm[GREY_ADDR_MAX], **grown;

	if (grey_normalize_rcpt(addr, norm, sizeof(norm)) < 0 || !norm[0])
		return -EINVAL;
	grown = realloc(l->items, (l->len + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	l->items = grown;
	l->items[l->len] = strdup(norm);
	if (!l->items[l->len])
		return -ENOMEM;
	l->len++;
	return 0;
}

/* rcpt is normalised. An entry ending in '@' matches that whole local
 * part at any domain, and the bare local part (RFC 5321's RCPT
 * TO:<Postmaster>); what follows the '@' must be a domain, nothing an
 * MTA could read as another address ("postmaster@a.test<victim@a.test"
 * once matched a prefix: issue 55). */
static bool
local_part_match(const char *rcpt, const char *e, size_t n)
{
	const char *domain = rcpt + n;

	if (strncmp(rcpt, e, n - 1) != 0)
		return false;
	if (rcpt[n - 1] == 0)
		return true;
	return rcpt[n - 1] == '@' && *domain &&
	       !strpbrk(domain, "@<>\"(),;\\ \t");
}

static bool
str_list_match(const struct str_list *l, const char *rcpt)
{
	for (size_t i = 0; i < l->len; i++) {
		const char *e = l->items[i];
		size_t n = strlen(e);

		if (e[n - 1] == '@' ? local_part_match(rcpt, e, n)
				    : strcmp(rcpt, e) == 0)
			return true;
	}
	return false;
}

void
grey_set_config(struct grey *grey, const struct grey_config *cfg)
{
	grey->cfg = *cfg;
	seen_table_set_window(grey->messages, cfg->retry_window_sec);
	seen_table_set_window(grey->door_passes, cfg->pass_ttl_sec);
}

void
grey_recipients_clear(struct grey *grey)
{
	str_list_free(&grey->exempt);
	str_list_free(&grey->traps);
}

int
grey_exempt_add(struct grey *grey, const char *rcpt)
{
	return str_list_add(&grey->exempt, rcpt);
}

int
grey_trap_add(struct grey *grey, const char *rcpt)
{
	return str_list_add(&grey->traps, rcpt);
}

void
grey_set_valid_recipients(struct grey *grey, struct recipients *r)
{
	recipients_free(grey->valid);
	grey->valid = r;
}

const struct grey_counters *
grey_get_counters(const struct grey *grey)
{
	return &grey->counters;
}

const uint32_t *
grey_get_pass_delays(const struct grey *grey, size_t *n)
{
	*n = grey->ndelays;
	return grey->delays;
}

static void
keep_delay(struct grey *grey, uint32_t delay_sec)
{
	if (grey->ndelays == grey->delays_alloc &&
	    grey->delays_alloc < GREY_DELAYS_KEPT) {
		size_t n = grey->delays_alloc ? grey->delays_alloc * 2 : 1024;
		uint32_t *grown = realloc(grey->delays, n * sizeof(*grown));

		if (!grown)
			return; /* the statistics lose a sample, nothing else */
		grey->delays = grown;
		grey->delays_alloc = n;
	}
	if (grey->ndelays < grey->delays_alloc)
		grey->delays[grey->ndelays++] = delay_sec;
	else
		grey->delays[grey->delays_seen % GREY_DELAYS_KEPT] = delay_sec;
	grey->delays_seen++;
}

/* A delay seen now (not one restored with the report's figures). */
static void
count_delay(struct grey *grey, uint32_t delay_sec)
{
	struct grey_delay_histogram *h = &grey->histogram;

	for (int i = 0; i < GREY_DELAY_BOUNDS; i++)
		if (delay_sec <= grey_delay_bounds[i])
			h->le[i]++;
	h->le[GREY_DELAY_BOUNDS]++;
	h->sum_sec += delay_sec;
	h->count++;
	keep_delay(grey, delay_sec);
}

const struct grey_delay_histogram *
grey_get_delay_histogram(const struct grey *grey)
{
	return &grey->histogram;
}

/* --- the figures kept across restarts --- */

/* The record: a head (magic "GGST", version, since, ncounters,
 * ndelays), then ncounters 64-bit counters (struct grey_counters' fields
 * in order: a later version may add fields at the end, and one that
 * reads fewer keeps the rest at 0), then ndelays 32-bit delays, oldest
 * first. Little-endian throughout (a shared store's gateways may differ;
 * on the machines greygate runs on this is also the host order the
 * first version wrote). */
#define STATS_HEAD_LEN 24
#define STATS_VERSION 1u
#define STATS_KEY "stats"
#define NCOUNTERS (sizeof(struct grey_counters) / sizeof(uint64_t))

static void
put_le(uint8_t *p, uint64_t v, size_t bytes)
{
	for (size_t i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t
get_le(const uint8_t *p, size_t bytes)
{
	uint64_t v = 0;

	for (size_t i = 0; i < bytes; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

int
grey_stats_encode(const struct grey *grey, int64_t since, void **rec,
		  size_t *len)
{
	size_t m = grey->ndelays < GREY_DELAYS_SAVED ? grey->ndelays
						     : GREY_DELAYS_SAVED;
	const uint64_t *counters = (const uint64_t *)&grey->counters;
	uint8_t *p;

	*len = STATS_HEAD_LEN + NCOUNTERS * 8 + m * 4;
	p = malloc(*len);
	if (!p)
		return -ENOMEM;
	*rec = p;
	memcpy(p, "GGST", 4);
	put_le(p + 4, STATS_VERSION, 4);
	put_le(p + 8, (uint64_t)since, 8);
	put_le(p + 16, NCOUNTERS, 4);
	put_le(p + 20, m, 4);
	p += STATS_HEAD_LEN;
	for (size_t i = 0; i < NCOUNTERS; i++, p += 8)
		put_le(p, counters[i], 8);
	/* the m most recent, oldest first; the ring's newest is at
	 * (delays_seen - 1) % GREY_DELAYS_KEPT */
	for (size_t j = 0; j < m; j++, p += 4)
		put_le(p,
		       grey->delays[(grey->delays_seen - m + j) %
				    GREY_DELAYS_KEPT],
		       4);
	return 0;
}

int
grey_stats_decode(const void *rec, size_t len, struct grey_stats *out)
{
	const uint8_t *p = rec;
	uint64_t *counters = (uint64_t *)&out->counters;
	size_t ncounters, ndelays;

	memset(out, 0, sizeof(*out));
	if (len < STATS_HEAD_LEN || memcmp(p, "GGST", 4) != 0 ||
	    get_le(p + 4, 4) != STATS_VERSION)
		return -EPROTO;
	ncounters = get_le(p + 16, 4);
	ndelays = get_le(p + 20, 4);
	/* (bounds first: the products below cannot overflow then) */
	if (ncounters > 1024 || ndelays > GREY_DELAYS_SAVED ||
	    len != STATS_HEAD_LEN + ncounters * 8 + ndelays * 4)
		return -EPROTO;
	out->since = (int64_t)get_le(p + 8, 8);
	p += STATS_HEAD_LEN;
	for (size_t i = 0; i < ncounters && i < NCOUNTERS; i++)
		counters[i] = get_le(p + i * 8, 8);
	p += ncounters * 8;
	if (ndelays) {
		out->delays = malloc(ndelays * sizeof(*out->delays));
		if (!out->delays)
			return -ENOMEM;
	}
	for (size_t i = 0; i < ndelays; i++)
		out->delays[i] = (uint32_t)get_le(p + i * 4, 4);
	out->ndelays = ndelays;
	return 0;
}

void
grey_stats_free(struct grey_stats *s)
{
	free(s->delays);
	s->delays = NULL;
	s->ndelays = 0;
}

int
grey_stats_save(struct grey *grey, int64_t since)
{
	void *rec;
	size_t len;
	int r = grey_stats_encode(grey, since, &rec, &len);

	if (r < 0)
		return r;
	r = store_put_meta(grey->store, STATS_KEY, rec, len);
	free(rec);
	return r;
}

int
grey_stats_load(struct grey *grey, int64_t *since)
{
	struct grey_stats saved;
	uint64_t *counters = (uint64_t *)&grey->counters;
	const uint64_t *add = (const uint64_t *)&saved.counters;
	void *rec;
	size_t len;
	int r = store_get_meta(grey->store, STATS_KEY, &rec, &len);

	if (r != STORE_FOUND)
		return r;
	r = grey_stats_decode(rec, len, &saved);
	free(rec);
	if (r < 0)
		return r;
	for (size_t i = 0; i < NCOUNTERS; i++)
		counters[i] += add[i];
	for (size_t i = 0; i < saved.ndelays; i++)
		keep_delay(grey, saved.delays[i]);
	*since = saved.since;
	grey_stats_free(&saved);
	return STORE_FOUND;
}

void
grey_stats_reset(struct grey *grey)
{
	memset(&grey->counters, 0, sizeof(grey->counters));
	grey->ndelays = 0;
	grey->delays_seen = 0;
}

static bool
allow_listed(const struct grey *grey, const struct grey_addr *addr)
{
	return ip_range_find(grey->allow, grey->allow_len, sizeof(*grey->allow),
			     addr->family, addr->bytes) != NULL;
}

static void
decide(struct grey_decision *out, enum grey_action action,
       enum grey_reason reason)
{
	out->action = action;
	out->reason = reason;
}

/* --- the decision, from one attempt's records (no store I/O) --- */

/* The trap key is the single address: one trapped host must not shut out
 * the rest of a provider's /24. */
static int
check_trapped(int64_t now, const struct grey_records *w,
	      struct grey_decision *out)
{
	out->client = w->trap_key;
	if (w->trap_found == STORE_FOUND && w->trap.expires > now) {
		out->expires = w->trap.expires;
		decide(out, GREY_TRAP, GREY_REASON_TRAPPED);
		return 1;
	}
	return 0;
}

static void
trap_client(struct grey *grey, int64_t now, struct grey_records *w,
	    struct grey_decision *out)
{
	w->trap = (struct store_client){.since = now,
					.expires = now + grey->cfg.trap_ttl_sec};
	w->trap_dirty = true;
	out->client = w->trap_key;
	out->expires = w->trap.expires;
	decide(out, GREY_TRAP, GREY_REASON_TRAPPED);
}

/* A client key as the door's own passes keep it. */
static void
door_key(const struct grey_client *c, uint8_t key[SEEN_KEY_LEN])
{
	key[0] = c->family;
	memcpy(key + 1, c->bytes, 16);
}

/* Is key a trusted client's pass (issue 56): its address alone where
 * passes are kept by network? It lasts trust_ttl and is never
 * refreshed: the client is judged again by DNS as it is then. (Where
 * client_prefix is the whole address, every pass is kept so: a trusted
 * one is refreshed as any.) */
static bool
trust_pass(const struct grey *grey, const struct grey_client *key)
{
	uint8_t network = key->family == AF_INET ? grey->cfg.prefix4
	                                         : grey->cfg.prefix6;
	uint8_t whole = key->family == AF_INET ? 32 : 128;

	return grey->cfg.trust_ttl_sec && key->family != GREY_FAMILY_POOL &&
	       key->prefix >= whole && network < whole;
}

/* The client passed: its network's pass written (and so the gateway's
 * sets and tarpit pass it), unless the policy door decided it and the
 * admin did not say its passes are the gateway's: then the door keeps
 * the pass for itself, in memory (issue 55: any local user who reached
 * the door put a chosen /24 in the kernel's pass set for 35 days). */
static void
pass_client(struct grey *grey, int64_t now, enum grey_path path,
	    enum grey_reason reason, struct grey_records *w,
	    struct grey_decision *out)
{
	struct store_client *rec = &w->pass;

	if (path == GREY_PATH_POLICY && !grey->cfg.door_passes_gateway) {
		uint8_t key[SEEN_KEY_LEN];

		door_key(&w->pass_key, key);
		(void)seen_table_add(grey->door_passes, key, now);
		out->client = w->pass_key;
		out->expires = 0; /* (no set holds it) */
		decide(out, GREY_PASS, reason);
		grey->counters.passed++;
		return;
	}

	if (w->pass_found != STORE_FOUND || rec->expires <= now) {
		memset(rec, 0, sizeof(*rec));
		rec->since = now;
	}
	rec->expires = now + (reason == GREY_REASON_TRUSTED &&
	                              trust_pass(grey, &w->pass_key)
	                              ? grey->cfg.trust_ttl_sec
	                              : grey->cfg.pass_ttl_sec);
	rec->refreshed = now;
	w->pass_dirty = true;
	out->client = w->pass_key;
	out->expires = rec->expires;
	decide(out, GREY_PASS, reason);
	grey->counters.passed++;
}

/* The client passed by its own address alone where passes are kept by
 * network (set trust4/trust6): its record starts afresh, the network's,
 * fetched, is not this one. */
static void
pass_own(struct grey *grey, int64_t now, enum grey_path path,
         enum grey_reason reason, struct grey_records *w,
         struct grey_decision *out)
{
	const struct grey_client *own = &w->trap_key;
	uint8_t network = own->family == AF_INET ? grey->cfg.prefix4
	                                         : grey->cfg.prefix6;
	uint8_t whole = own->family == AF_INET ? 32 : 128;

	if (network < whole) {
		w->pass_key = *own;
		w->pass_found = 0;
		memset(&w->pass, 0, sizeof(w->pass));
	}
	pass_client(grey, now, path, reason, w, out);
}

/* A client its DNS signals trust: passed by its own address, for
 * trust_ttl (issue 56: one trusted first contact passed its whole /24
 * for 35 days); a retry's pass stays its network's. Its record starts
 * afresh: the network's, fetched, is not this one. */
static void
pass_trusted(struct grey *grey, int64_t now, enum grey_path path,
             struct grey_records *w, struct grey_decision *out)
{
	grey->counters.passed_trusted++;
	if (grey->cfg.trust_ttl_sec)
		pass_own(grey, now, path, GREY_REASON_TRUSTED, w, out);
	else
		pass_client(grey, now, path, GREY_REASON_TRUSTED, w, out);
}

static uint8_t
key_prefix(const struct grey *grey, const struct grey_addr *addr)
{
	return addr->family == AF_INET ? grey->cfg.prefix4 : grey->cfg.prefix6;
}

/* Is the client's pass live? */
static bool
live_pass(int64_t now, const struct grey_records *w)
{
	return w->pass_found == STORE_FOUND && w->pass.expires > now;
}

/* A client already passed: a delivery on the fast path refreshes it, at
 * most once per refresh_interval. Returns 1 if the client is passed. */
static int
check_passed(struct grey *grey, int64_t now, enum grey_path path,
	     bool delivered, struct grey_records *w, struct grey_decision *out)
{
	struct store_client *rec = &w->pass;

	out->client = w->pass_key;
	if (!live_pass(now, w))
		return 0;
	out->expires = rec->expires;
	decide(out, GREY_PASS, GREY_REASON_PASSED);
	if (!delivered)
		return 1;
	rec->deliveries++;
	if (path == GREY_PATH_POLICY)
		grey->counters.policy_passed++;
	else
		grey->counters.fastpath_deliveries++;
	if (now - rec->refreshed >= (int64_t)grey->cfg.refresh_interval_sec &&
	    !trust_pass(grey, &w->pass_key)) {
		rec->refreshed = now;
		rec->expires = now + grey->cfg.pass_ttl_sec;
		out->expires = rec->expires;
		decide(out, GREY_REFRESH, GREY_REASON_FASTPATH_REFRESH);
		grey->counters.refreshed++;
	}
	w->pass_dirty = true;
	return 1;
}

/* A client the door passed for itself (door_passes_gateway off): passes
 * at the door, and nowhere else. Returns 1 if so. */
static int
door_passed(struct grey *grey, int64_t now, const struct grey_records *w,
	    struct grey_decision *out)
{
	uint8_t key[SEEN_KEY_LEN];

	if (grey->cfg.door_passes_gateway)
		return 0;
	door_key(&w->pass_key, key);
	if (!seen_table_find(grey->door_passes, key, now))
		return 0;
	(void)seen_table_add(grey->door_passes, key, now);
	out->client = w->pass_key;
	out->expires = 0;
	decide(out, GREY_PASS, GREY_REASON_PASSED);
	grey->counters.policy_passed++;
	return 1;
}

/* A message's key in grey->messages: its sender and recipient as the
 * store keys them (hashes, with privacy), hashed twice (FNV-1a from two
 * bases: a collision only moves one message's counted delay). */
static void
message_key(const struct grey_records *w, uint8_t key[SEEN_KEY_LEN])
{
	uint64_t h[2] = {14695981039346656037ull, 0x84222325cbf29ce4ull};

	for (int k = 0; k < 2; k++) {
		for (const char *p = w->sender; *p; p++)
			h[k] = (h[k] ^ (uint8_t)*p) * 1099511628211ull;
		h[k] = (h[k] ^ 0xffu) * 1099511628211ull;
		for (const char *p = w->rcpt; *p; p++)
			h[k] = (h[k] ^ (uint8_t)*p) * 1099511628211ull;
	}
	key[0] = 0;
	memcpy(key + 1, h, sizeof(h));
}

/* How long the message has waited at now: from its first attempt from
 * any network (a sender whose retries come from another network: issue
 * 32), or its triplet's age, whichever is longer. */
static uint32_t
message_waited(const struct grey *grey, const struct grey_records *w,
               int64_t now, int64_t triplet_age)
{
	uint8_t key[SEEN_KEY_LEN];
	const struct seen_entry *m;

	message_key(w, key);
	m = seen_table_find(grey->messages, key, now);
	if (m && now - m->first > triplet_age)
		return (uint32_t)(now - m->first);
	return triplet_age > 0 ? (uint32_t)triplet_age : 0;
}

/* A message seen delivered: its delay counted if it was waiting (its
 * first attempt within retry_window), then forgotten. */
static void
message_delivered(struct grey *grey, int64_t now,
                  const struct grey_records *w)
{
	uint8_t key[SEEN_KEY_LEN];
	const struct seen_entry *m;

	message_key(w, key);
	m = seen_table_find(grey->messages, key, now);
	if (!m || now < m->first)
		return;
	count_delay(grey, (uint32_t)(now - m->first));
	seen_table_forget(grey->messages, key);
}

/* The message delivered (its delay counted): another of the same sender
 * and recipient waits from its own first attempt. */
static void
message_done(struct grey *grey, const struct grey_records *w)
{
	uint8_t key[SEEN_KEY_LEN];

	message_key(w, key);
	seen_table_forget(grey->messages, key);
}

static void
triplet_step(struct grey *grey, int64_t now, enum grey_path path,
	     uint32_t delay, enum grey_reason passed,
	     struct grey_records *w, struct grey_decision *out)
{
	struct store_triplet *t = &w->triplet;
	int64_t age = w->triplet_found == STORE_FOUND ? now - t->first_seen
						      : -1;

	/* An address's STARTTLS is counted apart: the report's triplets
	 * are its RCPTs'. */
	bool tls = passed == GREY_REASON_STARTTLS_RETRY;

	/* (greylisted: the key its line names is the STARTTLS's address) */
	if (tls) {
		out->client = w->triplet_key;
	} else {
		uint8_t key[SEEN_KEY_LEN];

		message_key(w, key);
		(void)seen_table_add(grey->messages, key, now);
	}
	w->triplet_dirty = true;
	if (w->triplet_found != STORE_FOUND ||
	    age > (int64_t)grey->cfg.retry_window_sec || age < 0) {
		*t = (struct store_triplet){now, now, 1, 0};
		out->wait_sec = delay;
		decide(out, GREY_GREYLIST, GREY_REASON_NEW);
		if (tls)
			grey->counters.tls_greylisted++;
		else
			grey->counters.greylisted_new++;
		return;
	}
	t->last_seen = now;
	if (++t->attempts == 2 && !tls)
		grey->counters.retried++;
	if (age < (int64_t)delay) {
		out->wait_sec = delay - (uint32_t)age;
		decide(out, GREY_GREYLIST, GREY_REASON_EARLY_RETRY);
		grey->counters.greylisted_early++;
		return;
	}
	/* (the message's wait, across networks: its triplet's age if it
	 * came from this one alone) */
	out->delay_sec = tls ? (uint32_t)age : message_waited(grey, w, now, age);
	if (!tls)
		grey->counters.passed_retry++;
	/* The delay to delivery: now, when this attempt is handed to the
	 * MTA or the MTA asked; else it ends with the triplet's next
	 * delivery on the fast path (note_retry). */
	if (grey->cfg.handoff || path == GREY_PATH_POLICY) {
		count_delay(grey, out->delay_sec);
		if (!tls)
			message_done(grey, w);
	} else {
		/* (a STARTTLS triplet's: its network's next STARTTLS on the
		 * fast path, the delivery the sensor cannot see, in TLS) */
		t->awaiting = STORE_AWAITING_DELIVERY;
	}
	/* A STARTTLS retry passes its address alone: no envelope is seen,
	 * so a STARTTLS again is all it proves (issue 56: a snowshoe block
	 * retried STARTTLS from each /24 soon enough to pass them all). */
	if (tls)
		pass_own(grey, now, path, passed, w, out);
	else
		pass_client(grey, now, path, passed, w, out);
}

/* A trusted client at the tarpit without the hand-off: this attempt
 * hears 451 all the same, and its next from this address passes (its
 * own pass); a pool's next comes from another server, so its triplet is
 * kept as anyone's and that retry passes by it, its network as a
 * retry's (issue 56: the trusted pass is the address's alone, and a
 * bank retrying from 1,536 addresses waited up to 21 hours). */
static void
trusted_unhanded(struct grey *grey, int64_t now, enum grey_path path,
		 uint32_t delay, enum grey_reason passed,
		 struct grey_records *w, struct grey_decision *out)
{
	triplet_step(grey, now, path, delay, passed, w, out);
	if (out->action != GREY_PASS)
		pass_trusted(grey, now, path, w, out);
}

/* A greylisted triplet whose client passed (by it, or by another)
 * comes back on the fast path: it was retried all the same, and the
 * report must not count it as never retried; delivered, and awaiting
 * that since its pass, its delay to delivery ends here. */
static void
note_retry(struct grey *grey, int64_t now, struct grey_records *w,
	   bool delivered)
{
	struct store_triplet *t = &w->triplet;

	/* The message delivered, from whichever network: its delay is
	 * from its first attempt, if that still waits (issue 57: counted
	 * by the triplet that passed, a message delivered from another
	 * network was counted at the next one of the same sender and
	 * recipient from the first, days later; the month's report said
	 * a mean of 4 h where the mail waited 15 min). */
	if (delivered)
		message_delivered(grey, now, w);
	if (w->triplet_found != STORE_FOUND)
		return;
	if (delivered && t->awaiting == STORE_AWAITING_DELIVERY) {
		t->awaiting = 0;
	} else if (t->attempts != 1 ||
		   now - t->first_seen > (int64_t)grey->cfg.retry_window_sec) {
		return;
	}
	if (t->attempts == 1) {
		t->attempts = 2;
		grey->counters.retried++;
	}
	t->last_seen = now;
	w->triplet_dirty = true;
}

/* The recipient as the admin's lists name it (w->rcpt is its hash
 * with privacy). */
static const char *
rcpt_seen(const struct grey *grey, const struct grey_records *w)
{
	return grey->cfg.privacy ? w->rcpt_seen : w->rcpt;
}

/* The delay a's triplet waits: the configured one, or longer for a
 * client its DNS signals call suspicious. */
static uint32_t
attempt_delay(const struct grey *grey, const struct grey_attempt *a)
{
	return a->delay_sec > grey->cfg.delay_sec ? a->delay_sec
						  : grey->cfg.delay_sec;
}

static void
on_rcpt(struct grey *grey, const struct grey_attempt *a,
	struct grey_records *w, struct grey_decision *out)
{
	int64_t now = a->now;
	enum grey_path path = a->path;
	/* Asked by the MTA: it delivers unless we say no. */
	bool delivered = (a->reply >= 200 && a->reply < 300) ||
			 path == GREY_PATH_POLICY;
	uint32_t delay = attempt_delay(grey, a);

	grey->counters.attempts++;
	if (path == GREY_PATH_POLICY)
		grey->counters.policy_attempts++;
	if (allow_listed(grey, &a->client)) {
		grey_client_of(&a->client, 128, &out->client);
		decide(out, GREY_ALLOWED, GREY_REASON_ALLOW_LIST);
		grey->counters.allow_listed++;
		return;
	}
	/* The fast path is the sensor's word (from the unprivileged child):
	 * it may refresh a passed client or trap it, never pass a client or
	 * touch one that is not passed (one that reached the MTA by a site's
	 * mark, or an allow entry made elsewhere, is not ours to decide). */
	if (path == GREY_PATH_FAST && !live_pass(now, w)) {
		out->client = w->pass_key;
		decide(out, GREY_ACTION_NONE, GREY_REASON_NONE);
		return;
	}
	if (check_trapped(now, w, out) ||
	    str_list_match(&grey->traps, rcpt_seen(grey, w))) {
		if (out->action != GREY_TRAP)
			trap_client(grey, now, w, out);
		grey->counters.trapped++;
		return;
	}
	if (check_passed(grey, now, path,
			 delivered && path != GREY_PATH_TARPIT, w, out)) {
		note_retry(grey, now, w, delivered && path != GREY_PATH_TARPIT);
		return;
	}
	if (path == GREY_PATH_POLICY && door_passed(grey, now, w, out))
		return;
	/* An exempt recipient: the MTA asks for it alone, so it is let
	 * through and the client stays unpassed. At the tarpit it is
	 * greylisted like any other (a pass would open the client's /24 to
	 * every recipient), unless the session can be handed over unpassed
	 * (below). */
	if (path == GREY_PATH_POLICY &&
	    str_list_match(&grey->exempt, rcpt_seen(grey, w))) {
		decide(out, GREY_ALLOWED, GREY_REASON_RECIPIENT_EXEMPT);
		return;
	}
	/* At the tarpit, when the session can be handed to the MTA: handed
	 * unpassed, the exempt recipient is delivered and the others are
	 * greylisted as before, by the tarpit still between the two (its
	 * gate asks about each) or by an MTA that asks the door. */
	if (path == GREY_PATH_TARPIT && grey->cfg.handoff &&
	    str_list_match(&grey->exempt, rcpt_seen(grey, w))) {
		decide(out, GREY_ALLOWED, GREY_REASON_RECIPIENT_EXEMPT);
		return;
	}
	/* Refused at once at the tarpit, before any triplet is kept: a
	 * recipient that does not exist, a sender whose SPF fails or whose
	 * domain takes no mail where the site says so. */
	if (path == GREY_PATH_TARPIT && grey->valid &&
	    recipients_unknown(grey->valid, rcpt_seen(grey, w))) {
		decide(out, GREY_REFUSE, GREY_REASON_UNKNOWN_RECIPIENT);
		grey->counters.refused_recipient++;
		(void)unknown_tally_add(grey->unknown, &a->client, now);
		return;
	}
	/* A client that guessed at recipients is suspicious: never
	 * trusted, and it waits longer. */
	if (grey->cfg.unknown_suspicious) {
		uint32_t n = unknown_tally_count(grey->unknown, &a->client, now);

		if (n >= grey->cfg.unknown_suspicious) {
			out->unknown_rcpts = n;
			if (grey->cfg.suspicious_delay_sec > delay)
				delay = grey->cfg.suspicious_delay_sec;
		}
	}
	if (path == GREY_PATH_TARPIT && a->refuse_spf) {
		decide(out, GREY_REFUSE, GREY_REASON_SPF_FAIL);
		grey->counters.refused_spf++;
		return;
	}
	if (path == GREY_PATH_TARPIT &&
	    (a->refuse_sender == GREY_REASON_SENDER_DOMAIN ||
	     a->refuse_sender == GREY_REASON_SENDER_NULL_MX)) {
		decide(out, GREY_REFUSE, a->refuse_sender);
		grey->counters.refused_sender_domain++;
		return;
	}
	/* Trusted by its DNS signals: passed now, as a retry would pass
	 * it; with the hand-off (or asked by the MTA) this very attempt is
	 * delivered, a delay of 0. */
	if (a->trusted && !out->unknown_rcpts && path != GREY_PATH_FAST) {
		if (grey->cfg.handoff || path == GREY_PATH_POLICY) {
			count_delay(grey, 0);
			pass_trusted(grey, now, path, w, out);
			return;
		}
		trusted_unhanded(grey, now, path, delay,
				 GREY_REASON_RETRY_PASSED, w, out);
		return;
	}
	triplet_step(grey, now, path, delay, GREY_REASON_RETRY_PASSED, w, out);
}

/* A session on the fast path reached EHLO: a visit from a passed client
 * refreshes its pass (at most once per refresh_interval), whether or not
 * its RCPTs can be seen: in TLS they cannot. */
static void
on_visit(struct grey *grey, int64_t now, struct grey_records *w,
	 struct grey_decision *out)
{
	struct store_client *rec = &w->pass;

	if (!w->want_pass)
		return;
	out->client = w->pass_key;
	if (!live_pass(now, w))
		return;
	rec->sessions++;
	w->pass_dirty = true;
	grey->counters.fastpath_sessions++;
	out->expires = rec->expires;
	decide(out, GREY_PASS, GREY_REASON_PASSED);
	if (now - rec->refreshed >= (int64_t)grey->cfg.refresh_interval_sec) {
		rec->refreshed = now;
		rec->expires = now + grey->cfg.pass_ttl_sec;
		out->expires = rec->expires;
		decide(out, GREY_REFRESH, GREY_REASON_FASTPATH_REFRESH);
		grey->counters.refreshed++;
	}
}

static void
on_starttls(struct grey *grey, const struct grey_attempt *a,
	    struct grey_records *w, struct grey_decision *out)
{
	int64_t now = a->now;

	if (a->path == GREY_PATH_FAST) {
		struct store_triplet *t = &w->triplet;
		bool retried = w->triplet_found == STORE_FOUND &&
		               t->attempts >= 2;
		bool awaited = retried &&
		               t->awaiting == STORE_AWAITING_DELIVERY;

		/* Counted: what follows is hidden from the sensor. (An
		 * address passed by its own STARTTLS retry has no network
		 * pass: its retried STARTTLS triplet says it passed.) */
		if (!w->want_pass || !(live_pass(now, w) || retried))
			return;
		grey->counters.fastpath_tls++;
		/* The address passed by its STARTTLS without the hand-off
		 * comes back: that session is the delivery, its delay the
		 * triplet's (issue 57: the report counted none) */
		if (awaited) {
			t->awaiting = 0;
			w->triplet_dirty = true;
			if (now >= t->first_seen &&
			    now - t->last_seen <= (int64_t)grey->cfg.retry_window_sec)
				count_delay(grey, (uint32_t)(now - t->first_seen));
		}
		return;
	}
	/* Trapped or passed already: that is the answer. */
	if (!w->want_trap || check_trapped(now, w, out) ||
	    check_passed(grey, now, a->path, false, w, out))
		return;
	/* Strict: let it reach the MTA's TLS, passed by nothing; the MTA
	 * asks the policy door about each of its recipients. */
	if (grey->cfg.tls_strict) {
		decide(out, GREY_ALLOWED, GREY_REASON_TLS_HANDED);
		grey->counters.tls_handed++;
		return;
	}
	/* Greylist: the address's STARTTLS is a triplet of its own; the
	 * session ends unanswered until its STARTTLS after the delay, which
	 * passes the address (and with the hand-off is delivered, in TLS).
	 * A bot that says STARTTLS once and never retries passes nothing. */
	if (grey->cfg.tls_greylist) {
		uint32_t delay = attempt_delay(grey, a);

		/* Trusted by what its connection says (the lookups): passed
		 * now, and with the hand-off delivered on this attempt. */
		if (a->trusted) {
			if (grey->cfg.handoff) {
				count_delay(grey, 0);
				pass_trusted(grey, now, a->path, w, out);
				return;
			}
			trusted_unhanded(grey, now, a->path, delay,
					 GREY_REASON_STARTTLS_RETRY, w, out);
			return;
		}
		triplet_step(grey, now, a->path, delay,
			     GREY_REASON_STARTTLS_RETRY, w, out);
		return;
	}
	pass_client(grey, now, a->path, GREY_REASON_STARTTLS, w, out);
	/* With the hand-off this very attempt is delivered (in TLS, on
	 * its first attempt): a delay of 0, as the report must count it
	 * (issue 32: these passes were missing from its delay). Without,
	 * the session ends unanswered and its delivery is not seen. */
	if (grey->cfg.handoff && out->action == GREY_PASS)
		count_delay(grey, 0);
}

void
grey_records_hide(const struct grey_config *cfg, struct grey_records *w)
{
	char hash[PRIVACY_HASH_SIZE];

	if (!cfg->privacy)
		return;
	/* (the null sender is no one's address: a bounce's triplet says
	 * "<>" in list grey, as without privacy) */
	if (w->sender[0]) {
		privacy_hash(cfg->privacy_key, w->sender, hash);
		memcpy(w->sender, hash, sizeof(hash));
	}
	privacy_hash(cfg->privacy_key, w->rcpt, hash);
	memcpy(w->rcpt, hash, sizeof(hash));
}

void
grey_records_prepare(const struct grey *grey, const struct grey_attempt *a,
		     struct grey_records *w)
{
	/* Field by field, not the whole 700 bytes each decision: the
	 * address buffers are written when needed, and a record is read
	 * only once found. */
	w->want_trap = w->want_pass = w->want_triplet = w->want_own = false;
	w->trap_found = w->pass_found = w->triplet_found = w->own_found = 0;
	w->trap_dirty = w->pass_dirty = w->triplet_dirty = false;
	w->sender[0] = w->rcpt[0] = 0;
	grey_client_of(&a->client, 128, &w->trap_key);
	grey_client_of(&a->client, key_prefix(grey, &a->client), &w->pass_key);
	/* (a STARTTLS is greylisted by the address that says it: its
	 * network's neighbours are not its retries, issue 56) */
	if (a->kind == GREY_ATTEMPT_RCPT && a->pooled)
		grey_pool_client(&w->triplet_key);
	else if (a->kind == GREY_ATTEMPT_STARTTLS)
		w->triplet_key = w->trap_key;
	else
		w->triplet_key = w->pass_key;
	if (allow_listed(grey, &a->client))
		return;
	switch (a->kind) {
	case GREY_ATTEMPT_RCPT:
		/* Over-long addresses are cut: they still get a stable key. */
		if (grey_normalize_sender(a->sender ? a->sender : "", w->sender,
					  sizeof(w->sender)) < 0)
			w->sender[0] = 0;
		if (grey_normalize_rcpt(a->rcpt ? a->rcpt : "", w->rcpt,
					sizeof(w->rcpt)) < 0)
			w->rcpt[0] = 0;
		if (grey->cfg.privacy)
			memcpy(w->rcpt_seen, w->rcpt, sizeof(w->rcpt_seen));
		grey_records_hide(&grey->cfg, w);
		w->want_trap = w->want_pass = w->want_triplet = true;
		break;
	case GREY_ATTEMPT_STARTTLS:
		if (a->path == GREY_PATH_FAST) {
			w->want_pass = true;
			/* (its own STARTTLS triplet: it passed by it, and
			 * without the hand-off awaits this delivery) */
			if (grey->cfg.tls_greylist) {
				w->want_triplet = true;
				memcpy(w->rcpt, GREY_STARTTLS_RCPT,
				       sizeof(GREY_STARTTLS_RCPT));
			}
			break;
		}
		/* Nothing to decide when STARTTLS passes nobody. */
		w->want_trap = w->want_pass = grey->cfg.tls_pass ||
					      grey->cfg.tls_strict ||
					      grey->cfg.tls_greylist;
		if (grey->cfg.tls_greylist) {
			w->want_triplet = true;
			memcpy(w->rcpt, GREY_STARTTLS_RCPT,
			       sizeof(GREY_STARTTLS_RCPT));
		}
		break;
	case GREY_ATTEMPT_VISIT:
		w->want_pass = true;
		break;
	}
	w->want_own = w->want_pass && w->pass_key.prefix < w->trap_key.prefix;
}

/* The address's own pass, live where its network's is not, is the pass
 * the decision reads and writes (issue 56: a trusted address was
 * greylisted by the policy door, its sessions uncounted). */
static void
own_pass_first(int64_t now, struct grey_records *w)
{
	if (!w->want_own || live_pass(now, w) || w->own_found != STORE_FOUND ||
	    w->own.expires <= now)
		return;
	w->pass_key = w->trap_key;
	w->pass = w->own;
	w->pass_found = STORE_FOUND;
}

int
grey_decide_records(struct grey *grey, const struct grey_attempt *a,
		    struct grey_records *w, struct grey_decision *out)
{
	memset(out, 0, sizeof(*out));
	own_pass_first(a->now, w);
	switch (a->kind) {
	case GREY_ATTEMPT_RCPT:
		on_rcpt(grey, a, w, out);
		return 0;
	case GREY_ATTEMPT_STARTTLS:
		on_starttls(grey, a, w, out);
		return 0;
	case GREY_ATTEMPT_VISIT:
		on_visit(grey, a->now, w, out);
		return 0;
	}
	return -EINVAL;
}

/* --- the decision on this grey's own store --- */

int
grey_decide(struct grey *grey, const struct grey_attempt *a,
	    struct grey_decision *out)
{
	struct grey_records w;
	int r;

	grey_records_prepare(grey, a, &w);
	r = grey_store_lmdb_read(grey->store, &w);
	if (r < 0) {
		memset(out, 0, sizeof(*out));
		return r;
	}
	r = grey_decide_records(grey, a, &w, out);
	return r < 0 ? r : grey_store_lmdb_write(grey->store, &w);
}
