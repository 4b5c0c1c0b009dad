/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A tarpit session's DNS signals (issue 31), looked up by greygated: the
 * PTR name and its forward confirmation (policy/fcrdns.c) and its shape
 * (policy/rdns_shape.c) from the moment the session opens; SPF for the
 * sender (policy/spf_check.c) from its first RCPT's question (the one
 * the tarpit asks with MAIL FROM), again when the sender changes. An
 * attempt waits for them at most [signals] budget from its question;
 * then it goes on with what is known (nothing: greylisted as always). */
#ifndef GREYGATE_SIGNALS_H
#define GREYGATE_SIGNALS_H

#include <stddef.h>
#include <sys/socket.h>

#include "signals_config.h"
#include "loop.h"
#include "policy.h"
#include "trust.h"

struct signals;
struct session_signals;

/*
 * signals_new - the resolver and the PTR patterns cfg names (cfg copied:
 * signals_reconfigure brings a reload's).
 * Return: them, or NULL with err set.
 */
struct signals *signals_new(struct loop *loop,
                            const struct signals_config *cfg, char *err,
                            size_t len);

/* signals_open - the root's signals service (issue 56: lent to the
 * supervisor and the policy door, owned by neither), with [signals]
 * lookups, said in the log (door_asks: the policy door asks too); *out
 * NULL without lookups. Return: 0, or -EINVAL with err set (512
 * bytes). */
int signals_open(struct loop *loop, const struct signals_config *cfg,
                 bool door_asks, struct signals **out, char *err);

/* signals_reconfigure - a reload's [signals] (copied): the budget, who
 * is trusted and suspected, from the next lookup on. NULL is fine. */
void signals_reconfigure(struct signals *s, const struct signals_config *cfg);

/* signals_free - every session's lookups must have ended; NULL ok. */
void signals_free(struct signals *s);

/* signals_session_start - the lookups for a session's client begin.
 * Return: its signals, or NULL (no memory: the session goes without). */
struct session_signals *signals_session_start(struct signals *s,
                                              const struct sockaddr_storage *client);

/* signals_session_end - the session is over: its lookups cancelled, who
 * waits told (with NULL). NULL ok. */
void signals_session_end(struct session_signals *ss);

/* Told once the signals are known or the budget is spent (ss), or the
 * session ended first (NULL). */
typedef void signals_ready_fn(void *ctx, const struct session_signals *ss);

/* signals_when_ready - SPF for sender (or the null sender's HELO name)
 * begun if it was not, and fn told as above; at once (before this
 * returns) when that is now. Return: 0, or -ENOMEM (fn not told). */
int signals_when_ready(struct session_signals *ss, const char *sender,
                       const char *helo, signals_ready_fn *fn, void *ctx);

/* signals_when_connected - fn told as above once what is known from the
 * connection alone is (FCrDNS, the PTR's shape, DNS lists): a STARTTLS's
 * wait, which has no sender. Return: 0, or -ENOMEM (fn not told). */
int signals_when_connected(struct session_signals *ss, signals_ready_fn *fn,
                           void *ctx);

/* signals_counters - the resolver's counters, and answers cached now. */
struct resolver_counters;
void signals_counters(const struct signals *s, struct resolver_counters *out,
                      size_t *held);

/* signals_apply - what is known, into the attempt: a->trusted (as
 * [signals] trust says) and a->signals, the text for its log line,
 * written in buf (GREY_SIGNALS_MAX bytes). */
void signals_apply(const struct session_signals *ss, struct grey_attempt *a,
                   char *buf);

/* signals_rules - the site's [signals] as trust's rules (policy/trust.h):
 * what greygated judges by, and the simulator. */
struct trust_rules signals_rules(const struct signals_config *sc);

/* signals_trust_name - "no", "fcrdns", "fcrdns+spf". */
const char *signals_trust_name(uint8_t trust);

#endif
