/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The clients that asked for recipients that do not exist, counted
 * (issue 31): a client that hits many unknown recipients is guessing
 * addresses, and is suspicious. Per address (not network: one guesser
 * does not taint its neighbours), over the last UNKNOWN_TALLY_WINDOW_SEC,
 * in memory only, in a bounded table (seen_table.h: a flood of guessers
 * pushes the oldest out, and those are counted afresh). */
#ifndef GREYGATE_UNKNOWN_TALLY_H
#define GREYGATE_UNKNOWN_TALLY_H

#include <stdint.h>
#include <string.h>

#include "policy.h"
#include "seen_table.h"

/* A client's unknown recipients count this long after the last one. */
#define UNKNOWN_TALLY_WINDOW_SEC 3600
/* Clients kept, at most (48 bytes each). */
#define UNKNOWN_TALLY_SLOTS 4096u

struct unknown_tally;

static inline void
unknown_tally_key(const struct grey_addr *client, uint8_t key[SEEN_KEY_LEN])
{
	key[0] = client->family;
	memcpy(key + 1, client->bytes, 16);
}

/* unknown_tally_new - none counted. Return: NULL (errno) or it. */
static inline struct unknown_tally *
unknown_tally_new(void)
{
	return (struct unknown_tally *)seen_table_new(UNKNOWN_TALLY_SLOTS,
	                                              UNKNOWN_TALLY_WINDOW_SEC);
}

/* unknown_tally_free - NULL ok. */
static inline void
unknown_tally_free(struct unknown_tally *t)
{
	seen_table_free((struct seen_table *)t);
}

/* unknown_tally_add - client asked for an unknown recipient at now.
 * Return: its count now, within the window. */
static inline uint32_t
unknown_tally_add(struct unknown_tally *t, const struct grey_addr *client,
                  int64_t now)
{
	uint8_t key[SEEN_KEY_LEN];

	unknown_tally_key(client, key);
	return seen_table_add((struct seen_table *)t, key, now)->count;
}

/* unknown_tally_count - client's count at now (0: none in the window). */
static inline uint32_t
unknown_tally_count(const struct unknown_tally *t,
                    const struct grey_addr *client, int64_t now)
{
	uint8_t key[SEEN_KEY_LEN];
	const struct seen_entry *e;

	unknown_tally_key(client, key);
	e = seen_table_find((const struct seen_table *)t, key, now);
	return e ? e->count : 0;
}

#endif
