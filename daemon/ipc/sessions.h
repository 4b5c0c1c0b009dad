/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The tarpit's sessions as greygated knows them. The child names a
 * session, never an address: when the tarpit accepts a connection it
 * sends the socket up once, and greygated reads the client, the tarpit's
 * own end and where the client was going (SO_ORIGINAL_DST) from the
 * socket itself, keeps them here, and closes its copy. Everything that
 * tells the MTA who the client is, or where greygated connects from and
 * to, comes from this table. A session id is used once: ids only grow,
 * and a session that ended is gone. The table is bounded. */
#ifndef GREYGATE_SESSIONS_H
#define GREYGATE_SESSIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "must_check.h"

/* A session's addresses, as the kernel has them. */
struct session_ends {
	struct sockaddr_storage client; /* the peer (getpeername) */
	struct sockaddr_storage local;  /* the tarpit's end (getsockname) */
	struct sockaddr_storage dst;    /* where the client connected before
					   the redirect (SO_ORIGINAL_DST);
					   ss_family 0: not redirected */
	uint64_t ino; /* its socket's inode number: opened once */
};

/* What greygated keeps of a session. */
struct session_info {
	struct session_ends ends;
	uint32_t last_question; /* the highest question number asked */
	uint32_t questions;     /* questions asked */
	uint8_t in_flight;      /* questions not yet answered */
	bool handing;           /* its hand-off is under way (one at a time) */
	bool handed;            /* joined to the MTA: its later recipients
				   come up as events (ipc_take_up) */
	void *attached;         /* the hooks' owner's (sessions_hooks) */
};

/* Questions one session may have waiting at once: the tarpit asks one at
 * a time, and asks again only once its wait ran out. */
#define SESSION_IN_FLIGHT_MAX 4

struct sessions;

/*
 * sessions_new - an empty table.
 * @max: sessions open at once, at most (more are refused)
 * @ports, @nports: the tarpit's listening ports (copied): a socket whose
 * own end is on no other port was not accepted by the tarpit
 * Return: the table, or NULL (no memory).
 */
struct sessions *sessions_new(uint32_t max, const uint16_t *ports,
			      size_t nports);

/* sessions_free - the table and every session in it; NULL is fine. */
void sessions_free(struct sessions *s);

/* sessions_reset - forget every session and every id (a new child
 * numbers its sessions from 1 again); NULL is fine. */
void sessions_reset(struct sessions *s);

/* What the table's owner keeps beside each session: made when the
 * session opens, ended when it closes (or the table is reset or freed). */
struct sessions_hooks {
	void *(*opened)(void *ctx, const struct session_info *si);
	void (*ended)(void *ctx, void *attached);
	void *ctx;
};

/* sessions_set_hooks - from now on (NULL fields: none). */
void sessions_set_hooks(struct sessions *s, const struct sessions_hooks *h);

/* sessions_want_destination - read where each new session's client was
 * going (SO_ORIGINAL_DST: a conntrack lookup) or not (on by default; the
 * hand-off's PROXY header and transparent mode want it). */
void sessions_want_destination(struct sessions *s, bool want);

/*
 * sessions_open - session id begins, on the socket fd (borrowed: the
 * caller closes it).
 * Return: 0, or -errno with *why for the log line:
 *   -EEXIST: id is not above every id opened before (reused, or out of
 *            order)
 *   -ENOSPC: max sessions are open
 *   another: the descriptor is not a connection the tarpit accepted (a
 *            connected TCP socket, IPv4 or IPv6, whose own port is one of
 *            the tarpit's)
 */
MUST_CHECK int sessions_open(struct sessions *s, uint64_t id, int fd, const char **why);

/* sessions_find - the open session id, or NULL (never opened, or
 * ended; or s NULL). The pointer is valid until the session is closed. */
struct session_info *sessions_find(struct sessions *s, uint64_t id);

/* sessions_close - session id ended. Return: 0, or -ENOENT (not open). */
MUST_CHECK int sessions_close(struct sessions *s, uint64_t id);

/* sessions_count - sessions open now. */
size_t sessions_count(const struct sessions *s);

#endif
