/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The hand-off's part of the settings: [handoff] (struct config holds it
 * as cfg->handoff) and what of the rest it needs. The hand-off is given
 * its part, copied, at its start and at each reload
 * (handoff_reconfigure). */
#ifndef GREYGATE_HANDOFF_CONFIG_H
#define GREYGATE_HANDOFF_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/* How a passing session is handed to the MTA (see handoff.h). */
enum handoff_mode {
	HANDOFF_OFF = 0,  /* the passing attempt is answered 451 too */
	HANDOFF_PROXY_V2, /* a PROXY v2 header on the MTA's own listener */
	HANDOFF_XCLIENT,  /* XCLIENT on the MTA's port (Postfix) */
	HANDOFF_TRANSPARENT, /* from the client's own address (IP_TRANSPARENT)
				to the MTA's ordinary port: no change there */
	HANDOFF_AUTO /* a setting only (the default): transparent where the
			kernel has what it needs, else off (mode says which,
			config_resolve_auto) */
};

struct handoff_config {
	uint8_t mode;            /* enum handoff_mode: the one in effect */
	uint8_t setting;         /* ... as the file says it (auto too) */
	bool auto_on;            /* auto: transparent (config_resolve_auto) */
	char auto_why[200];      /* auto: why it is off, or on */
	char address[80];        /* the MTA's hand-off address, as written */
	struct sockaddr_storage addr; /* ... parsed */
	socklen_t addr_len;
	uint32_t timeout_ms;     /* connect and replay, at most */
	char source[48];         /* where its connections come from, or "" */
	struct sockaddr_storage source_addr; /* ... parsed */
	uint32_t mark;           /* transparent: its sockets' mark */
	uint32_t route_table;    /* transparent: the table that takes the
				    MTA's answers back to them */
};

/* What the hand-off is given. */
struct handoff_settings {
	struct handoff_config handoff;
	uint16_t smtp_port;   /* [gateway]: the MTA's ordinary port */
	uint16_t tarpit_port; /* ... the tarpit's, and the stutter's (0:
				 none): never a hand-off's own port */
	uint16_t trap_port;
	bool offer_starttls;  /* the tarpit's EHLO may list STARTTLS */
	char hostname[256];   /* [gateway] hostname: the probe's EHLO */
	char capabilities[256]; /* the tarpit's EHLO list, as set */
};

#endif
