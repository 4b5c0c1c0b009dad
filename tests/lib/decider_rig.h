/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A decider as greygated wires it, for the daemon's unit tests: the
 * default settings with the store in a fresh folder under /tmp, a real
 * LMDB file, the greylist's records on it, the decider over both, on a
 * loop of the given clock. No kernel sets. */
#ifndef GREYGATE_TEST_DECIDER_RIG_H
#define GREYGATE_TEST_DECIDER_RIG_H

#include "config.h"
#include "decide.h"
#include "grey_store.h"
#include "timesrc.h"

struct decider_rig {
	struct config cfg;
	struct loop *loop;
	struct store *store;
	struct grey_store *records;
	struct decider *decider;
	char dir[64];
};

/* decider_rig_open - all of it made (a failure ends the test); name
 * names the folder. */
void decider_rig_open(struct decider_rig *r, const char *name,
                      const struct timesrc *clock);

/* decider_rig_use_redis - the greylist's records on the Redis at unix
 * socket sock (password REDIS_TEST_PASSWORD) instead, this gateway
 * named hostname there; the LMDB file stays for the report's figures, as
 * greygated keeps it beside a shared store. */
void decider_rig_use_redis(struct decider_rig *r, const char *sock,
                           const char *hostname);

/* decider_rig_attempt - what the decider decides of a tarpit's RCPT
 * from addr (IPv4 or IPv6) for sender and rcpt, at its clock's now. */
struct grey_decision decider_rig_attempt(struct decider_rig *r,
                                         const char *addr,
                                         const char *sender,
                                         const char *rcpt);

/* decider_wait - a decided on loop by decider, waited for (a store that
 * answers later: the loop turns, 5 s at most); its decision, which must
 * be one (else the test fails). log: its log line. */
struct grey_decision decider_wait(struct loop *loop, struct decider *decider,
                                  struct grey_attempt *a, bool log);

/* decider_rig_reconfigure - r->cfg changed: the decider given its part
 * again, as a reload gives it. */
void decider_rig_reconfigure(struct decider_rig *r);

/* decider_rig_close - all of it closed, the folder removed. */
void decider_rig_close(struct decider_rig *r);

#endif
