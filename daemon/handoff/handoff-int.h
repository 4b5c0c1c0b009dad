/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A hand-off under way and greygated's hand-off state, shared by its
 * dialogue with the MTA (handoff.c) and its connection
 * (handoff_connect.c). */
#ifndef GREYGATE_HANDOFF_INT_H
#define GREYGATE_HANDOFF_INT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "handoff.h"
#include "loop.h"
#include "sessions.h"
#include "tarpit.h"

/* The MTA's replies greygated reads (greeting, EHLO, XCLIENT). */
#define REPLY_MAX 4096

enum ho_state {
	HO_CONNECTING,
	HO_GREETING, /* xclient, probe: the MTA's 220 */
	HO_EHLO,     /* xclient: its EHLO reply, which must offer XCLIENT;
			probe: what the MTA offers */
	HO_XCLIENT,  /* xclient: the 220 (or two) that answer XCLIENT */
};

struct handoff {
	struct handoff *next;
	struct handoff_state *hs;
	bool probe; /* no client: the MTA's EHLO is read, then QUIT */
	uint64_t session;
	uint32_t question;
	struct tarpit_verdict v;
	enum ho_state state;
	int fd;
	int xclient_replies; /* XCLIENT commands not yet answered */
	struct sockaddr_storage client, dst;
	char client_text[INET6_ADDRSTRLEN + 8];
	char helo[256];
	char in[REPLY_MAX];
	size_t in_len;
	struct loop_timer deadline;
};

/* greygated's hand-off side (hs): the hand-offs under way, the
 * MTA's EHLO as last asked, the transparent hand-off's way back. */
struct handoff_state {
	struct loop *loop;
	struct handoff_settings cfg; /* its own (handoff_reconfigure) */
	struct handoff_child child; /* how verdicts and caps go down */
	struct handoff *handoffs;
	uint64_t handoffs_started, handoffs_failed;
	/* what the MTA's EHLO offers, asked every 10 minutes */
	struct loop_timer probe_timer;
	bool probing;           /* probe_timer is set up */
	bool mta_known;         /* its EHLO was read at least once */
	bool mta_starttls;      /* ... and offers STARTTLS */
	bool mta_probe_failing; /* said, until it answers again */
	char mta_caps[256];     /* what the tarpit's EHLO lists */
	bool transparent_routed; /* the way back is in place */
	char route_said[256];    /* ... and how, for the log once up */
	/* auto without an address: where the MTA is asked, learnt from the
	 * first session's destination */
	struct sockaddr_storage mta_addr;
	bool mta_addr_learnt;
	bool mta_addr_foreign_said; /* a client's destination not this
				       host's: said once */
	struct sockaddr_storage mta_addr_foreign; /* ... the last one */
	/* passes waiting for the probe under way (handoff_wait_probe) */
	struct handoff_waiter *waiters;
};

/* handoff_probe_ended - a probe ended, answered or not: who waits for
 * it (handoff_wait_probe) is told. */
void handoff_probe_ended(struct handoff_state *hs);

/* sockaddr_len, sockaddr_port - an IPv4 or IPv6 address's length, and
 * its port (sin_port and sin6_port lie at the same offset). */
static inline socklen_t
sockaddr_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET ? sizeof(struct sockaddr_in)
	                                : sizeof(struct sockaddr_in6);
}

static inline uint16_t
sockaddr_port(const struct sockaddr_storage *ss)
{
	return ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

/* handoff_endpoint_text - ss as 203.0.113.1:25 or [2001:db8::1]:25 into
 * out (len bytes with the NUL). */
void handoff_endpoint_text(const struct sockaddr_storage *ss, char *out,
                           size_t len);

/* handoff_probe_address - where the MTA's probe asks (NULL: auto has
 * not learnt it yet). */
const struct sockaddr_storage *
handoff_probe_address(const struct handoff_state *hs);

/* handoff_endpoints - h's client and destination, from the session's
 * socket as greygated read it (handoff_connect.c). */
void handoff_endpoints(struct handoff *h, const struct session_ends *ends);
/* handoff_open_connection - h's connection started, watched by the loop
 * with its deadline. A failure is said in the log (a probe's as the
 * probe's), counted, and h freed. Return: 0, or -errno (h is gone). */
int handoff_open_connection(struct handoff *h);

/* The dialogue's side (handoff.c): the connection's events, its
 * deadline, a probe of the MTA's EHLO that failed. */
void handoff_on_mta(struct loop *loop, int fd, uint32_t events, void *ctx);
void handoff_on_deadline(struct loop *loop, struct loop_timer *t, void *ctx);
void handoff_probe_failed(struct handoff_state *hs, const char *why);

#endif
