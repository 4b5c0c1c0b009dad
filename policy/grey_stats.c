// SPDX-License-Identifier: GPL-2.0-or-later
/* The greylist's figures (grey-int.h): the delays to delivery kept for
 * the report (a ring, and a histogram of every one), and the counters
 * and latest delays saved in the store so that they count on across
 * restarts. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grey-int.h"

/* --- the delays to delivery --- */

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
void
grey_count_delay(struct grey *grey, uint32_t delay_sec)
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

const uint32_t *
grey_get_pass_delays(const struct grey *grey, size_t *n)
{
	*n = grey->ndelays;
	return grey->delays;
}

const struct grey_delay_histogram *
grey_get_delay_histogram(const struct grey *grey)
{
	return &grey->histogram;
}

/* --- the messages' waits, from whichever network --- */

/* A message's key in grey->messages: its sender and recipient as the
 * store keys them (hashes, with privacy), hashed twice (FNV-1a from two
 * bases: a collision only moves one message's counted delay). */
void
grey_message_key(const struct grey_records *w, uint8_t key[SEEN_KEY_LEN])
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
uint32_t
grey_message_waited(const struct grey *grey, const struct grey_records *w,
               int64_t now, int64_t triplet_age)
{
	uint8_t key[SEEN_KEY_LEN];
	const struct seen_entry *m;

	grey_message_key(w, key);
	m = seen_table_find(grey->messages, key, now);
	if (m && now - m->first > triplet_age)
		return (uint32_t)(now - m->first);
	return triplet_age > 0 ? (uint32_t)triplet_age : 0;
}

/* A message seen delivered: its delay counted if it was waiting (its
 * first attempt within retry_window), then forgotten. */
void
grey_message_delivered(struct grey *grey, int64_t now,
                  const struct grey_records *w)
{
	uint8_t key[SEEN_KEY_LEN];
	const struct seen_entry *m;

	grey_message_key(w, key);
	m = seen_table_find(grey->messages, key, now);
	if (!m || now < m->first)
		return;
	grey_count_delay(grey, (uint32_t)(now - m->first));
	seen_table_forget(grey->messages, key);
}

/* The message delivered (its delay counted): another of the same sender
 * and recipient waits from its own first attempt. */
void
grey_message_done(struct grey *grey, const struct grey_records *w)
{
	uint8_t key[SEEN_KEY_LEN];

	grey_message_key(w, key);
	seen_table_forget(grey->messages, key);
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

void
grey_stats_add(struct grey *grey, const struct grey_stats *saved)
{
	uint64_t *counters = (uint64_t *)&grey->counters;
	const uint64_t *add = (const uint64_t *)&saved->counters;

	for (size_t i = 0; i < NCOUNTERS; i++)
		counters[i] += add[i];
	for (size_t i = 0; i < saved->ndelays; i++)
		keep_delay(grey, saved->delays[i]);
}

void
grey_stats_reset(struct grey *grey)
{
	memset(&grey->counters, 0, sizeof(grey->counters));
	grey->ndelays = 0;
	grey->delays_seen = 0;
}
