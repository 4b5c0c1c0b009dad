/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The policy door's parts (policy_door.c: each request answered;
 * policy_door_conns.c: the listener and its connections) share its
 * state. Private to them. */
#ifndef GREYGATE_POLICY_DOOR_INT_H
#define GREYGATE_POLICY_DOOR_INT_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accept_pause.h"
#include "decision_port.h"
#include "hash_table.h"
#include "loop.h"
#include "policy_door.h"
#include "policy_lists.h"
#include "policy_proto.h"
#include "signals.h"

/* A request must be whole this long after its first byte (Postfix sends
 * one in a single write): a client that trickles is closed. */
#define REQUEST_DEADLINE_MS 5000

/* A peer's share of the connections (issue 57: counted anew for every
 * connection at each eviction, 940 ms at 8,000 connections). */
struct door_peer {
	struct hash_node node; /* (first) in door->peers, by its address */
	size_t n;              /* connections it holds */
	char ip[INET6_ADDRSTRLEN];
};

struct door_conn {
	struct policy_door *door;
	int fd;
	size_t at;               /* its place in door->conns */
	struct door_peer *share; /* its peer's */
	struct loop_timer idle; /* between requests; a request's deadline */
	uint64_t active_ms;     /* its last request answered, or accepted */
	uint64_t request_ms;    /* a partial request's first byte, 0: none */
	char peer[64];     /* for log lines */
	char peer_ip[INET6_ADDRSTRLEN]; /* "" for a unix socket's: one peer */
	char instance[64]; /* the message an X-Greylist was added to */
	/* A request whose decision is under way (a shared store): the
	 * connection is not read meanwhile, its buffer stays put (req
	 * points into it). */
	struct gateway_decision *asking;
	bool waiting, deciding_now;
	/* its client's signals, while looked up or decided with (NULL:
	 * none); once known, the decision is asked from the loop (go), out
	 * of the signals' own callback; the attempt that waits for them,
	 * and their text */
	struct session_signals *signals;
	struct loop_timer go;
	struct grey_attempt attempt;
	char signals_text[GREY_SIGNALS_MAX];
	struct policy_request req;
	struct policy_answer ans;
	size_t pos; /* where the next request starts */
	size_t len;
	char buf[POLICY_REQUEST_MAX];
};

struct policy_door {
	struct loop *loop;
	struct policy_door_settings cfg; /* its own (policy_door_reload) */
	struct decision_port decide; /* who decides each request */
	int fd;
	struct accept_pause pause;
	char unix_path[108]; /* removed at close, "" for inet */
	struct policy_lists *lists; /* postgrey's whitelist files */
	struct signals *signals;    /* NULL: no lookups */
	struct door_conn **conns;
	size_t nconns, conns_cap;
	struct hash_table peers; /* door_peer by peer_ip, keyed */
	struct policy_door_stats stats;
};

/* door_conn_close - c's end: out of the door's list, its decision's
 * answer no longer awaited, freed. */
void door_conn_close(struct door_conn *c);

/* door_on_signals_known - c's signals known: its decision asked (the
 * loop's timer callback for c->go; policy_door.c). */
void door_on_signals_known(struct loop *loop, struct loop_timer *t,
                           void *ctx);

/* door_arm_timer - between requests, the idle timeout; within one, its
 * deadline, from its first byte (more bytes do not move it). */
void door_arm_timer(struct door_conn *c);

/* door_worth_logging - the first and every hundredth of a kind of
 * trouble is logged: a client looping on it must not fill the log. */
bool door_worth_logging(uint64_t count);

/* door_on_accept - the listener's loop callback (ctx: the door). */
void door_on_accept(struct loop *loop, int fd, uint32_t events, void *ctx);

/* door_on_conn - a connection's loop callback (ctx: it): its requests
 * read and answered (policy_door.c). */
void door_on_conn(struct loop *loop, int fd, uint32_t events, void *ctx);

#endif
