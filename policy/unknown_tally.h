/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The clients that asked for recipients that do not exist, counted
 * (issue 31): a client that hits many unknown recipients is guessing
 * addresses, and is suspicious. Per address (not network: one guesser
 * does not taint its neighbours), over the last UNKNOWN_TALLY_WINDOW_SEC,
 * in memory only, in a bounded table (a flood of guessers pushes the
 * oldest out, and those are counted afresh: never more memory). */
#ifndef GREYGATE_UNKNOWN_TALLY_H
#define GREYGATE_UNKNOWN_TALLY_H

#include <stdint.h>

#include "policy.h"

/* A client's unknown recipients count this long after the last one. */
#define UNKNOWN_TALLY_WINDOW_SEC 3600
/* Clients kept, at most (32 bytes each). */
#define UNKNOWN_TALLY_SLOTS 4096u

struct unknown_tally;

/* unknown_tally_new - none counted. Return: NULL (errno) or it. */
struct unknown_tally *unknown_tally_new(void);

/* unknown_tally_free - NULL ok. */
void unknown_tally_free(struct unknown_tally *t);

/* unknown_tally_add - client asked for an unknown recipient at now.
 * Return: its count now, within the window. */
uint32_t unknown_tally_add(struct unknown_tally *t, const struct grey_addr *client,
                           int64_t now);

/* unknown_tally_count - client's count at now (0: none in the window). */
uint32_t unknown_tally_count(const struct unknown_tally *t,
                             const struct grey_addr *client, int64_t now);

#endif
