/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The policy door: Postfix's check_policy_service served from the same
 * decision function and store as the gateway, with postgrey's answers
 * and log lines, so a Postfix set up for postgrey works unchanged. */
#ifndef GREYGATE_POLICY_DOOR_H
#define GREYGATE_POLICY_DOOR_H

#include <stdint.h>

#include "policy_door_config.h"

struct decision_port;
struct loop;
struct policy_door;

/* What the door counted since it opened (greygatectl status). */
struct policy_door_stats {
	uint64_t connections; /* accepted */
	uint64_t open;        /* open now */
	uint64_t requests;    /* answered */
	uint64_t deferred;    /* of those, DEFER_IF_PERMIT */
	uint64_t whitelisted; /* of those, by postgrey's whitelist files */
	uint64_t malformed;   /* closed unanswered: a bad request */
	uint64_t refused;     /* closed at once: max_connections reached,
	                         every one waiting for its decision */
	uint64_t evicted;     /* closed for a newcomer: the longest idle of
	                         the peer holding the most */
	uint64_t slow;        /* closed: a request not whole in time */
	uint64_t no_fd;       /* accepts that found no descriptor */
};

/*
 * policy_door_open - listen where s says ([policy] listen; s copied:
 * policy_door_reload brings a reload's), each request decided through
 * decide (copied), and answer there. A unix socket left by a dead greygated is replaced; it is
 * made 0666: who may reach it is its folder's business, as for Postfix's
 * own sockets.
 * Return: 0 (*out NULL when the door is off) or -errno with err set (512
 * bytes).
 */
int policy_door_open(struct loop *loop, const struct policy_door_settings *s,
		     const struct decision_port *decide,
		     struct policy_door **out, char *err);

/* policy_door_use_signals - each request's client looked up as the
 * tarpit's are (FCrDNS, the PTR's shape, DNS lists; SPF for its sender),
 * within [signals] budget, before it is decided: a trusted client passes
 * at once, a suspicious one waits longer (signals borrowed; NULL: none,
 * the default). */
struct signals;
void policy_door_use_signals(struct policy_door *door,
                             struct signals *signals);

/* policy_door_reload - a reload's settings (copied: where it listens
 * needs a restart), and the whitelist files read again (SIGHUP); on
 * error the lists in place stay. Return: 0 or -errno (logged). */
int policy_door_reload(struct policy_door *door,
                       const struct policy_door_settings *s);

/* policy_door_close - close it and its connections (NULL: nothing). */
void policy_door_close(struct policy_door *door);

/* policy_door_get_stats - its figures. */
void policy_door_get_stats(const struct policy_door *door,
                           struct policy_door_stats *out);

#endif
