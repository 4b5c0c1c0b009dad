/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The tarpit: a tiny SMTP responder that tells every unproven client to
 * try again later (451 at RCPT), cheaply and in a way every real MTA reads
 * as a deferral. It knows nothing of the greylist: with an asker set, each
 * session is told of when it begins (with its socket) and ends, and asks
 * at RCPT and STARTTLS (its session id and what the client said, never an
 * address) and waits, a bounded time, for the verdict that comes back, while
 * the others go on; one question at a time per session, so one client's
 * flood of recipients slows only that client. It also tells which client
 * connections it holds, so the sensor can tell its flows from the fast
 * path. */
#ifndef GREYGATE_TARPIT_H
#define GREYGATE_TARPIT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "sensor.h"
#include "smtp_line.h"

struct loop;

/* The longest command line read, with its CRLF (smtp_line.h says why
 * it is longer than RFC 5321's 512). */
#define TARPIT_LINE_MAX (SMTP_LINE_MAX + 2)
/* RFC 5321 4.5.3.1.8: a server must take 100 recipients a transaction;
 * past that, 452 (the client sends the rest later). */
#define TARPIT_RCPTS_MAX 100
/* Questions a session may ask greygated before it is closed (421). */
#define TARPIT_ASKS_MAX 1000
/* A reply buffer big enough for the longest reply we make (EHLO). */
#define TARPIT_REPLY_MAX 1024

struct tarpit_config {
	const char *hostname;      /* in the banner and EHLO (borrowed) */
	uint32_t retry_sec;        /* N in "try again in N seconds" */
	const char *capabilities;  /* EHLO keywords, ','-separated */
	bool offer_starttls;       /* list STARTTLS: asked about (then
				      handed to the MTA's TLS, or the session
				      ends unanswered: never on in clear) */
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

/* What a command asks greygated before it is answered. */
enum tarpit_ask {
	TARPIT_ASK_NONE = 0,
	TARPIT_ASK_RCPT = 1,    /* RCPT TO: the triplet's verdict */
	TARPIT_ASK_STARTTLS = 2 /* STARTTLS: passes with tls_pass */
};

/* What the last line gave the session to keep (pointers into that line,
 * valid until the next call). */
enum tarpit_said {
	TARPIT_SAID_NOTHING = 0,
	TARPIT_SAID_HELO,  /* arg: the HELO/EHLO argument */
	TARPIT_SAID_MAIL,  /* arg: the sender's path; the line: all of it */
	TARPIT_SAID_RCPT,  /* arg: the recipient's path */
	TARPIT_SAID_RESET  /* RSET, HELO/EHLO again: the transaction ends */
};

struct tarpit_dialogue {
	const struct tarpit_config *cfg;
	uint8_t in_mail;     /* MAIL given, transaction open */
	uint8_t null_sender; /* the transaction's sender is <> */
	uint8_t bad;         /* bad commands so far */
	uint8_t asking;      /* enum tarpit_ask while a verdict is awaited */
	uint8_t said;        /* enum tarpit_said of the last line */
	bool ask;            /* ask greygated at RCPT and STARTTLS */
	uint16_t rcpts;      /* recipients in this transaction */
	uint16_t asks;       /* questions asked this session */
	uint32_t skip_bytes; /* BDAT chunk bytes still to discard */
	uint32_t data_wait_sec; /* <>: the wait DATA tells (its RCPT's) */
	const char *arg;     /* what was said (see said) */
	size_t arg_len;
};

/* A verdict greygated sends back for a question. */
enum tarpit_action {
	TARPIT_GREYLIST = 0, /* wait_sec more */
	TARPIT_PASS = 1,     /* passed: the next connection goes through */
	TARPIT_TRAP = 2,     /* a trapped client */
	TARPIT_REFUSE = 3    /* this recipient refused: 550 (refused says
				why) */
};

/* Why a recipient is refused. */
enum tarpit_refusal {
	TARPIT_REFUSED_RECIPIENT = 0,     /* it does not exist */
	TARPIT_REFUSED_SPF = 1,           /* SPF fails for the sender */
	TARPIT_REFUSED_SENDER_DOMAIN = 2, /* the sender's domain has no MX,
	                                     A nor AAAA */
	TARPIT_REFUSED_SENDER_NULL_MX = 3 /* ... or a null MX (RFC 7505) */
};

struct tarpit_verdict {
	enum tarpit_action action;
	uint32_t wait_sec; /* GREYLIST: seconds until a retry may pass */
	int handoff_fd;    /* PASS: a connection to the MTA to hand the
			      session to (the tarpit owns it), or -1 */
	bool greeted;      /* ... whose greeting was read already */
	uint8_t refused;   /* REFUSE: enum tarpit_refusal */
	bool gated;        /* PASS with a connection, for a client not
			      passed (an exempt recipient): each later RCPT
			      asks greygated and reaches the MTA only when
			      passed (gate.c) */
};

/* What the caller must do after a reply. */
#define TARPIT_CLOSE 1 /* close the connection after sending the reply */
#define TARPIT_ASK 2   /* no reply yet: ask (d->asking says what), then
			  answer with tarpit_dialogue_verdict */

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

/*
 * tarpit_dialogue_verdict - the reply to the command that asked, now that
 * the verdict came (v NULL: none came in time, the plain deferral).
 * @rcpt: the recipient asked about (RCPT), for the reply's text
 * Return: 0 or TARPIT_CLOSE, as tarpit_dialogue_line.
 */
int tarpit_dialogue_verdict(struct tarpit_dialogue *d,
			    const struct tarpit_verdict *v, const char *rcpt,
			    char *out, size_t *out_len);

/*
 * tarpit_rcpt_held_reply - the reply to a RCPT that does not reach the MTA
 * (v NULL: no verdict came): the refusal of a TARPIT_REFUSE, else the
 * greylisting's 451 with the verdict's wait. Unlike
 * tarpit_dialogue_verdict, never a 250 (a session handed over gated has
 * no DATA of the tarpit's to defer at). @out: TARPIT_REPLY_MAX bytes.
 * Return: its length.
 */
size_t tarpit_rcpt_held_reply(const struct tarpit_dialogue *d,
			      const struct tarpit_verdict *v, const char *rcpt,
			      char *out);

/* --- the server --- */

struct tarpit;

struct tarpit_counters {
	uint64_t connections;   /* accepted */
	uint64_t reached_rcpt;  /* sessions that got to RCPT */
	uint64_t busy;          /* refused with 421: too many */
	uint64_t timeouts;      /* closed for idleness or the deadline */
	uint64_t bad_commands;  /* unknown, out of order, too long */
	uint64_t stress_entered; /* times stress mode began */
	uint64_t asked;         /* questions to greygated */
	uint64_t verdicts_late; /* answered 451 without a verdict in time */
	uint64_t handoffs_joined; /* sessions handed to the MTA */
	uint64_t handoffs_failed; /* ... whose replay failed (451) */
	uint64_t handoffs_abandoned; /* ... whose client left before the
	                                MTA's answer, or before the MTA's
	                                connection came (nothing to
	                                deliver) */
	uint64_t handoffs_unjoined; /* connections to the MTA that came
				       after their question was answered
				       without them, or found no room: the
				       client heard the plain answer */
	uint64_t joined_rcpts;  /* RCPTs of handed sessions after the one
				   handed (told as fast-path events) */
	uint32_t joined_open;   /* handed, still open (not in open) */
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

/* A question of a session, for greygated (strings valid for the call).
 * It names the session, never an address: greygated knows the client from
 * the session's socket (tarpit_asker.opened). */
struct tarpit_attempt {
	uint64_t session;          /* the session (tarpit_asker.opened) */
	uint32_t question;         /* its number in the session, for
				      tarpit_verdict (new each question) */
	enum tarpit_ask kind;
	const char *helo;          /* its HELO/EHLO argument ("" if none) */
	const char *sender;        /* MAIL FROM path ("" for <>) */
	const char *rcpt;          /* RCPT TO path (RCPT only) */
};

/* Asks; the verdict is to come by tarpit_verdict. Return: 0, or -errno
 * (the session gets the plain deferral at once). */
typedef int tarpit_ask_fn(const struct tarpit_attempt *a, void *ctx);

/* A session begins (fd its socket, borrowed for the call) or ends (fd
 * -1). */
typedef void tarpit_session_fn(uint64_t session, int fd, void *ctx);

/* Who sessions ask, and how long they wait. */
struct tarpit_asker {
	tarpit_ask_fn *ask;          /* at RCPT and STARTTLS */
	tarpit_session_fn *opened;   /* at accept, before the banner (or
					NULL) */
	tarpit_session_fn *closed;   /* when it ends (or NULL) */
	void *ctx;
	uint32_t wait_ms; /* a verdict, at most; then the plain 451 (nothing
			     is lost: the client retries) */
	bool released_by_verdict; /* whoever opened handed the socket to
				     has let go of it by the time a verdict
				     of its session comes: the tarpit is
				     then its only holder (and closes it
				     with one system call less) */
};

/* tarpit_set_asker - sessions ask asker->ask at RCPT and STARTTLS and
 * wait for the verdict (asker copied). */
void tarpit_set_asker(struct tarpit *tarpit, const struct tarpit_asker *asker);

/* tarpit_set_ehlo - what EHLO lists from now on (caps borrowed, as in
 * tarpit_config), STARTTLS or not: with the hand-off, what the MTA
 * offers too. */
void tarpit_set_ehlo(struct tarpit *tarpit, const char *caps, bool starttls);

/* tarpit_set_handoff - a hand-off's replay (a verdict with a connection)
 * takes at most ms, else the client hears the plain deferral. */
void tarpit_set_handoff(struct tarpit *tarpit, uint32_t ms);

/* tarpit_set_joined_events - a handed session goes on between the client
 * and the MTA (more recipients, more messages): each RCPT after the one
 * handed, with the MTA's answer, is told to fn as the sensor tells one
 * of the fast path (SENSOR_EV_RCPT, SENSOR_PATH_FAST; reply 0 if the
 * session ended first), read by the sensor's own conversation parser.
 * Not after STARTTLS (encrypted). fn NULL: not told. */
void tarpit_set_joined_events(struct tarpit *tarpit, sensor_event_fn *fn,
                              void *ctx);

/* tarpit_verdict - the answer to session's question; a verdict with a
 * handoff_fd hands the session to the MTA on it (the tarpit owns it, and
 * closes it if the session is gone).
 * Return: 0, or -ENOENT (the session is gone, or is not waiting for an
 * answer to that question). */
int tarpit_verdict(struct tarpit *tarpit, uint64_t session, uint32_t question,
		   const struct tarpit_verdict *v);

/*
 * tarpit_drain - for a child that hands over to a new one (a reload):
 * accept nothing more (its listeners closed here: the new child serves
 * them), end every session not handed to the MTA (421, try again later;
 * nothing is lost: the client comes back), and leave those handed to the
 * MTA to end by themselves.
 * Return: how many were handed to the MTA (tarpit_handed_open).
 */
size_t tarpit_drain(struct tarpit *tarpit);

/* tarpit_handed_open - sessions handed to the MTA (replaying or joined)
 * still open. */
size_t tarpit_handed_open(const struct tarpit *tarpit);

/* tarpit_get_counters - counters since tarpit_new. */
const struct tarpit_counters *tarpit_get_counters(const struct tarpit *t);

#endif
