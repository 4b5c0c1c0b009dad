/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The policy door's part of the settings: [policy] (struct config holds
 * it as cfg->policy) and what of the rest its answers say. The door is
 * given its part, copied, at its start and at each reload. */
#ifndef GREYGATE_POLICY_DOOR_CONFIG_H
#define GREYGATE_POLICY_DOOR_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/* [policy]: the policy door (Postfix's check_policy_service). */
struct policy_config {
	char listen[128];          /* "", "inet:HOST:PORT" or "unix:PATH" */
	struct sockaddr_storage addr; /* ... parsed (AF_UNIX for unix:) */
	socklen_t addr_len;
	char greylist_text[256];   /* after DEFER_IF_PERMIT; %s and %r */
	bool x_greylist_header;    /* PREPEND X-Greylist on a passing retry */
	bool test_time;            /* honour policy_test_time (tests only) */
	bool mta_asks;             /* the MTA asks about every recipient */
	bool signals;              /* each request's client looked up (with
				      [signals] lookups) */
	char whitelist_clients[256];    /* postgrey's file, or "" */
	char whitelist_recipients[256]; /* postgrey's file, or "" */
	uint32_t max_conns;        /* connections at once */
	uint32_t idle_timeout_ms;  /* a connection quiet this long closes */
	char socket_group[64];     /* unix:PATH's group (0660), "postfix" */
	bool passes_gateway;       /* its passes are the gateway's too */
};

/* What the door is given. */
struct policy_door_settings {
	struct policy_config policy;
	uint32_t delay_sec;  /* [greylist] delay: a deferral's wait */
	char hostname[256];  /* [gateway] hostname: in its answers */
};

#endif
