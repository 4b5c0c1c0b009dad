/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inside the greylist's state machine: struct grey and what its parts
 * share (grey.c the decision, grey_pass.c passes and traps, grey_stats.c
 * the figures). No other module includes it: policy.h is the API. */
#ifndef GREYGATE_GREY_INT_H
#define GREYGATE_GREY_INT_H

#include <stdbool.h>
#include <stdint.h>

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

static inline void
grey_decision_set(struct grey_decision *out, enum grey_action action,
                  enum grey_reason reason)
{
	out->action = action;
	out->reason = reason;
}

/* --- grey_lists.c --- */

/* grey_str_list_free - its items, and it empty. */
void grey_str_list_free(struct str_list *l);

/* grey_str_list_match - is rcpt in l (an address, or "local@" for that
 * local part at any domain)? */
bool grey_str_list_match(const struct str_list *l, const char *rcpt);

/* grey_allow_listed - is addr in the static allow list? */
bool grey_allow_listed(const struct grey *grey, const struct grey_addr *addr);

/* --- grey_pass.c --- */

/* grey_check_trapped - a live trap of the client's address decided.
 * Return: 1 if trapped. */
int grey_check_trapped(int64_t now, const struct grey_records *w,
                       struct grey_decision *out);

/* grey_trap_client - the client's address trapped for trap_ttl. */
void grey_trap_client(struct grey *grey, int64_t now, struct grey_records *w,
                      struct grey_decision *out);

/* grey_pass_client - the client passed: its network's pass written (or
 * the door's own, in memory), with reason. */
void grey_pass_client(struct grey *grey, int64_t now, enum grey_path path,
                      enum grey_reason reason, struct grey_records *w,
                      struct grey_decision *out);

/* grey_pass_own - the client passed by its address alone, where passes
 * are kept by network. */
void grey_pass_own(struct grey *grey, int64_t now, enum grey_path path,
                   enum grey_reason reason, struct grey_records *w,
                   struct grey_decision *out);

/* grey_pass_trusted - a client its DNS signals trust: passed alone, for
 * trust_ttl (counted as trusted). */
void grey_pass_trusted(struct grey *grey, int64_t now, enum grey_path path,
                       struct grey_records *w, struct grey_decision *out);

/* grey_live_pass - is the pass fetched live at now? */
bool grey_live_pass(int64_t now, const struct grey_records *w);

/* grey_check_passed - a client passed already: decided so, and a
 * delivery on the fast path refreshes it (at most once per
 * refresh_interval). Return: 1 if passed. */
int grey_check_passed(struct grey *grey, int64_t now, enum grey_path path,
                      bool delivered, struct grey_records *w,
                      struct grey_decision *out);

/* grey_door_passed - a client the door passed for itself
 * (door_passes_gateway off). Return: 1 if so. */
int grey_door_passed(struct grey *grey, int64_t now,
                     const struct grey_records *w, struct grey_decision *out);

/* --- grey_stats.c --- */

/* grey_count_delay - one delay to delivery, in the ring and the
 * histogram. */
void grey_count_delay(struct grey *grey, uint32_t delay_sec);

/* grey_message_key - a message's key in grey->messages: its sender and
 * recipient as the store keys them (hashes, with privacy). */
void grey_message_key(const struct grey_records *w,
                      uint8_t key[SEEN_KEY_LEN]);

/* grey_message_waited - how long the message has waited at now: from
 * its first attempt from any network, or its triplet's age (triplet_age),
 * whichever is longer. */
uint32_t grey_message_waited(const struct grey *grey,
                             const struct grey_records *w, int64_t now,
                             int64_t triplet_age);

/* grey_message_delivered - a message seen delivered: its delay counted
 * if it was waiting, then forgotten. */
void grey_message_delivered(struct grey *grey, int64_t now,
                            const struct grey_records *w);

/* grey_message_done - the message delivered (its delay counted): one of
 * the same sender and recipient waits from its own first attempt. */
void grey_message_done(struct grey *grey, const struct grey_records *w);

#endif
