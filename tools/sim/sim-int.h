/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inside the simulator: what the engine (sim.c) and the model of the
 * senders' DNS (sim_model.c) share. sim.h is the API. */
#ifndef GREYGATE_SIM_INT_H
#define GREYGATE_SIM_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "dns_answer.h"
#include "dns_cache.h"
#include "sim.h"

/* A message of a class: its attempts so far. */
struct msg {
	int64_t first;     /* first attempt (virtual epoch s) */
	uint32_t cls, idx; /* class, and number within it */
	uint32_t attempt;  /* attempts made */
	uint32_t net;      /* SAME and ROTATE: the net in use */
	bool tls;          /* says STARTTLS when offered */
	bool met_tarpit;   /* an attempt of it met the tarpit */
	struct grey_addr addr; /* SAME: the address */
};

/* What DNS says of a client of a class, and of a message's sender, as
 * the class's shares draw it. */
struct sim_view {
	bool modelled;  /* the class says what DNS would (fcrdns set) */
	bool confirmed; /* a forward-confirmed, plain-looking PTR name */
	bool dynamic;   /* a dynamic-looking one */
	bool aligned;   /* the name of the passing record's domain */
	bool listed;    /* listed by the config's DNS block lists */
	bool silent;    /* ... which did not answer for it */
	bool spf_pass;  /* the sender's domain's SPF passes the client */
	bool spf_fail;  /* ... fails it */
	bool no_mail;   /* the sender's domain takes no mail */
};

/* Every answer kept an hour (a common TTL: big providers' SPF records
 * say 5 minutes, many PTRs a day), "no such" 15 minutes (the resolver's
 * bound on negative TTLs). */
#define SIM_DNS_TTL 3600
#define SIM_DNS_NEGATIVE_TTL 900

/* The questions, through the resolver's own cache in the month's time:
 * asked (sent to a server) or answered from the cache. */
struct sim_dns {
	struct dns_cache *cache;
	uint64_t asked, cached;
};

/* sim_draw - a draw in 0..99 from bytes and a salt: the same every time
 * for the same address or message. */
uint32_t sim_draw(const void *p, size_t n, uint64_t salt);

/* sim_view_of - what DNS says of client a of class c, and of message
 * m's sender, as the class's shares (fcrdns, dynamic) draw them. */
struct sim_view sim_view_of(const struct sim_workload *w,
                            const struct sim_class *c,
                            const struct sim_signals *sig, int32_t fcrdns,
                            int32_t dynamic, const struct grey_addr *a,
                            const struct msg *m);

/* sim_apply_signals - greygated's judgement of view v on attempt at. */
void sim_apply_signals(const struct sim_class *c, const struct sim_signals *sig,
                       const struct sim_view *v, struct grey_attempt *at);

/* sim_dns_session - the questions one session asks, through dns's cache
 * at now. */
void sim_dns_session(struct sim_dns *dns, const struct sim_signals *sig,
                     const struct sim_class *c, const struct grey_addr *a,
                     const struct sim_view *v, bool tls, const char *from,
                     int64_t now);

#endif
