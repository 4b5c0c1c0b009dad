/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Things seen lately, counted, in memory only: per key (SEEN_KEY_LEN
 * bytes: a client's address, a message's hash), how often and when first
 * and last, over a window that starts again once a key is unseen for it.
 * A bounded table: when a key finds no room, the one seen longest ago
 * among its neighbours makes room (a flood pushes the oldest out and
 * they are counted afresh: never more memory). The clients that guess
 * at recipients (unknown_tally.h) and the messages waiting across
 * networks (grey.c) are kept so. */
#ifndef GREYGATE_SEEN_TABLE_H
#define GREYGATE_SEEN_TABLE_H

#include <stddef.h>
#include <stdint.h>

#define SEEN_KEY_LEN 17

struct seen_entry {
	uint32_t count;      /* sightings within the window */
	int64_t first, last; /* the first of them, the latest */
};

struct seen_table;

/* seen_table_new - room for slots keys (a power of two or not), each
 * kept while seen within window_sec. Return: NULL (errno) or it. */
struct seen_table *seen_table_new(size_t slots, uint32_t window_sec);

/* seen_table_free - NULL ok. */
void seen_table_free(struct seen_table *t);

/* seen_table_set_window - the window from now on (a reload). */
void seen_table_set_window(struct seen_table *t, uint32_t window_sec);

/* seen_table_add - key seen at now. Return: its entry now (valid until
 * the next add). */
const struct seen_entry *seen_table_add(struct seen_table *t,
                                        const uint8_t key[SEEN_KEY_LEN],
                                        int64_t now);

/* seen_table_forget - key not seen any more (absent: nothing). */
void seen_table_forget(struct seen_table *t, const uint8_t key[SEEN_KEY_LEN]);

/* seen_table_find - key's entry at now, or NULL (not seen within the
 * window). */
const struct seen_entry *seen_table_find(const struct seen_table *t,
                                         const uint8_t key[SEEN_KEY_LEN],
                                         int64_t now);

#endif
