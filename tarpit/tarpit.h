/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The tarpit: a tiny SMTP responder that tells every unproven client to
 * try again later (451 at RCPT), cheaply and in a way every real MTA reads
 * as a deferral. It knows nothing of the greylist; it only tells others
 * which client connections it holds, so the sensor can tell its flows
 * from the fast path. */
#ifndef GREYGATE_TARPIT_H
#define GREYGATE_TARPIT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct loop;

/* RFC 5321 4.5.3.1.4: a command line is at most 512 octets with CRLF. */
#define TARPIT_LINE_MAX 512
/* A reply buffer big enough for the longest reply we make (EHLO). */
#define TARPIT_REPLY_MAX 1024

struct tarpit_config {
	const char *hostname;      /* in the banner and EHLO (borrowed) */
	uint32_t retry_sec;        /* N in "try again in N seconds" */
	const char *capabilities;  /* EHLO keywords, ','-separated */
	bool offer_starttls;       /* list STARTTLS (answered with 454) */
	bool null_sender_at_data;  /* <>: 250 at RCPT, 451 at DATA */
	uint32_t max_conns;        /* over it: 421 and close */
	uint32_t max_per_client;   /* per client address */
	uint32_t idle_timeout_ms;  /* no complete command for this long */
	uint32_t session_timeout_ms; /* whole session */
	uint32_t max_bad_commands; /* then 421 and close */
	/* Stress mode: from stress_high open connections until they fall to
	 * stress_low, the shorter timeouts apply (to those open too). 0:
	 * three quarters and half of max_conns. */
	uint32_t stress_high, stress_low;
	uint32_t stress_idle_timeout_ms, stress_session_timeout_ms;
	uint32_t stutter_ms;       /* stutter listeners: a byte this often */
};

/* --- the dialogue: a pure state machine over command lines --- */

struct tarpit_dialogue {
	const struct tarpit_config *cfg;
	uint8_t in_mail;     /* MAIL given, transaction open */
	uint8_t null_sender; /* the transaction's sender is <> */
	uint8_t rcpts;       /* recipients in this transaction */
	uint8_t bad;         /* bad commands so far */
	uint32_t skip_bytes; /* BDAT chunk bytes still to discard */
};

/* What the caller must do after a reply. */
#define TARPIT_CLOSE 1 /* close the connection after sending the reply */

/* tarpit_dialogue_init - a new session's state. @cfg is borrowed. */
void tarpit_dialogue_init(struct tarpit_dialogue *d,
			  const struct tarpit_config *cfg);

/* tarpit_banner - the 220 greeting into out. Return: its length. */
size_t tarpit_banner(const struct tarpit_config *cfg, char *out, size_t len);

/*
 * tarpit_dialogue_line - answer one command line.
 * @line, @len: the line without its CRLF (or LF); may hold any bytes
 * @too_long: the line was cut at TARPIT_LINE_MAX (answer 500)
 * @out: at least TARPIT_REPLY_MAX bytes; gets the CRLF-terminated reply
 * @out_len: its length (0: no reply, e.g. nothing)
 * Return: 0, or TARPIT_CLOSE when the connection must be closed after the
 * reply is sent.
 */
int tarpit_dialogue_line(struct tarpit_dialogue *d, const char *line,
			 size_t len, bool too_long, char *out,
			 size_t *out_len);

/* --- the server --- */

struct tarpit;

struct tarpit_counters {
	uint64_t connections;   /* accepted */
	uint64_t reached_rcpt;  /* sessions that got to RCPT */
	uint64_t busy;          /* refused with 421: too many */
	uint64_t timeouts;      /* closed for idleness or the deadline */
	uint64_t bad_commands;  /* unknown, out of order, too long */
	uint64_t stress_entered; /* times stress mode began */
	uint32_t open;          /* connections open now */
	uint32_t stressed;      /* 1 while in stress mode */
};

/* tarpit_config_defaults - sensible defaults (hostname "localhost"). */
void tarpit_config_defaults(struct tarpit_config *cfg);

/*
 * tarpit_new - a tarpit serving on loop.
 * @cfg: copied (strings still borrowed)
 * @loop: borrowed
 * Return: the tarpit or NULL (errno).
 */
struct tarpit *tarpit_new(const struct tarpit_config *cfg, struct loop *loop);

/* tarpit_free - close every connection and listener; NULL is fine. */
void tarpit_free(struct tarpit *tarpit);

/*
 * tarpit_listen - bind and listen on addr (port included), with the
 * kernel's largest backlog. IPv6 listeners are v6-only, so one IPv4 and
 * one IPv6 listener can share a port. Return: 0 or -errno.
 */
int tarpit_listen(struct tarpit *tarpit, const struct sockaddr *addr,
		  socklen_t addr_len);

/* tarpit_bind - a non-blocking listening socket on addr, with the
 * backlog at the kernel's cap, not yet served: a privileged process binds,
 * an unprivileged one serves it (tarpit_adopt).
 * Return: the descriptor, or -errno. */
int tarpit_bind(const struct sockaddr *addr, socklen_t addr_len);

/* tarpit_adopt - serve the listening socket fd (now owned by the tarpit).
 * With stutter, every reply on its connections goes out one byte each
 * stutter_ms (for trapped clients, as spamd does), within the same
 * timeouts and caps. Return: 0, -ENOSPC (too many listeners), or -errno. */
int tarpit_adopt(struct tarpit *tarpit, int fd, bool stutter);

/*
 * tarpit_holds - does the tarpit hold (or did it hold within the last few
 * seconds) a connection from this client address and port?
 * @family: AF_INET or AF_INET6; @addr: 4 or 16 bytes; @port: host order
 */
bool tarpit_holds(const struct tarpit *tarpit, int family,
		  const uint8_t *addr, uint16_t port);

/* tarpit_get_counters - counters since tarpit_new. */
const struct tarpit_counters *tarpit_get_counters(const struct tarpit *t);

#endif
