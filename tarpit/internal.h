/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inside tarpit/ only: a connection's state and the tarpit's, shared by
 * the server (server.c) and the phases a session is handed through
 * (issue 58, as postscreen hands one from state to state): the tarpit's
 * own SMTP talk (talk.c), the hand-off's replay and join (join.c), and
 * the gate of a session handed unpassed (gate.c). The server owns the
 * connection, its socket and timer, and dispatches their events, and
 * greygated's verdicts, to the phase the session is in: it never names
 * one. A phase hands the session on to the next (conn_enter). */
#ifndef GREYGATE_TARPIT_INTERNAL_H
#define GREYGATE_TARPIT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "hash_table.h"
#include "list.h"
#include "loop.h"
#include "tarpit.h"

#define RECENT_MAX 1024 /* closed connections remembered */
#define LISTEN_MAX 8

struct conn;
struct join;
struct gate;

/* A phase of a session: what it does with the session's events. */
struct conn_phase {
	const char *name;
	/* the session is the MTA's now (a hand-off): out of the tarpit's
	 * counts, caps, stress and drain */
	bool handed;
	/* the session's first words (the first phase's: the banner) */
	void (*on_start)(struct conn *c);
	/* the client's socket (readable, or whatever the phase asked for
	 * with loop_mod_fd) */
	void (*on_client)(struct conn *c, uint32_t events);
	/* the session's timer (the phase arms it) */
	void (*on_timer)(struct conn *c);
	/* greygated's verdict to the question the session asked
	 * (c->question; never a late one). NULL: the phase asks none, a
	 * verdict is stale there. */
	void (*on_verdict)(struct conn *c, const struct tarpit_verdict *v);
	/* the tarpit is stressed: its deadlines brought to these (NULL:
	 * none of the tarpit's apply) */
	void (*on_stress)(struct conn *c, uint64_t idle_due_ms,
	                  uint64_t session_due_ms);
	/* the session ends, or closes gently: free what the phase holds,
	 * its own descriptors out of the loop (NULL: nothing held) */
	void (*on_end)(struct conn *c);
	/* is this endpoint the phase's own (its connection to the MTA, a
	 * flow the sensor must leave alone)? (NULL: none) */
	bool (*holds)(const struct conn *c, int family, const uint8_t *addr,
	              uint16_t port);
};

/* A session handed to the MTA, silent this long (both ways), is closed:
 * the MTA's own timeouts are shorter. */
#define JOIN_IDLE_MS (15 * 60 * 1000)

struct conn {
	struct tarpit *tp;
	struct hash_node by_addr; /* in the table by client address */
	struct conn *id_next; /* in the table by session id */
	uint64_t id;          /* the session's id */
	uint32_t question;    /* its last question's number */
	struct loop_timer timer;
	uint64_t idle_due_ms;
	uint64_t session_due_ms;
	uint64_t verdict_due_ms; /* while a question waits for its answer */
	/* What the client said, kept for its questions and a hand-off's
	 * replay (malloc'd when said, so that an idle connection holds none
	 * of it). */
	char *helo;            /* its HELO/EHLO argument */
	/* (the lines are as the replay sends them: written from their
	 * parse by smtp_command_rebuild, NULL when none could be) */
	char *helo_line;       /* the HELO/EHLO line */
	char *mail;            /* the MAIL line, parameters and all */
	char *sender;          /* its path */
	char *rcpt;            /* the recipient asked about */
	char *rcpt_line;       /* ... its RCPT line */
	/* the phase it is in (NULL: closing, conn_close_gently) */
	const struct conn_phase *phase;
	struct list_node handed_node; /* in tp->handed, while phase->handed */
	/* the phases' own state, read by them alone */
	struct join *join;     /* handed to the MTA (join.c), or NULL */
	struct gate *gate;     /* ... and policed there (gate.c), or NULL */
	uint64_t next_byte_ms; /* stutter: when the next byte goes */
	char *out;             /* stutter: the reply being sent, or NULL */
	uint16_t out_len, out_off;
	uint8_t stutter;
	uint8_t close_after; /* stutter: close once out is sent */
	struct tarpit_dialogue dlg;
	int fd;
	uint16_t port;
	uint16_t in_len;
	uint8_t family;
	uint8_t discarding; /* inside an over-long line */
	uint8_t reached_rcpt;
	uint8_t socket_shared; /* the asker may hold its socket too (from
				  opened until a verdict, see
				  tarpit_asker.released_by_verdict) */
	uint8_t addr[16];
	/* What it sent, not yet a whole line: TARPIT_LINE_MAX bytes, made
	 * when it sends and freed when every line in it is answered (a bot
	 * held after the banner or between commands has none). */
	char *in;
};

struct recent {
	uint64_t closed_ms;
	uint16_t port;
	uint8_t family;
	uint8_t addr[16];
};

struct tarpit {
	struct tarpit_config cfg;
	struct loop *loop;
	int listen_fd[LISTEN_MAX];
	bool listen_stutter[LISTEN_MAX];
	size_t nlisten;
	struct loop_timer backoff; /* re-enables accept after EMFILE */
	/* the connections by client address: keyed (a client choosing its
	 * IPv6 addresses chose collisions in the unseeded one, issue 58) */
	struct hash_table by_addr;
	size_t nbuckets; /* of ids: a power of two */
	struct recent recent[RECENT_MAX];
	size_t recent_next;
	struct tarpit_counters counters;
	/* questions to greygated */
	struct tarpit_asker asker; /* .ask NULL: none */
	uint32_t handoff_ms; /* a hand-off's replay, at most */
	sensor_event_fn *joined_event; /* a handed session's later RCPTs */
	void *joined_event_ctx;
	uint64_t next_id;
	struct conn **ids;   /* nbuckets chains by session id (counted up
	                        here: nobody chooses them) */
	struct list handed;  /* sessions in a handed phase (handed_node) */
};

/* server.c: the base every phase uses */

/* conn_enter - c is in phase from now on: its events, timer and
 * verdicts go there (the timer is not armed: the phase arms it). */
void conn_enter(struct conn *c, const struct conn_phase *phase);
void conn_close(struct conn *c);
/* conn_close_gently - close c once what was sent to it went out: our end
 * is shut, what the client still sends is read and dropped until it
 * closes too (or a few seconds), so that the kernel never resets the
 * connection before the client read our last reply (a close with unread
 * input sends a reset, and drops what was not yet delivered). The phase
 * it is in ends first. */
void conn_close_gently(struct conn *c);
/* conn_room - c->in made if it is not yet. Return: false (no memory). */
bool conn_room(struct conn *c);
/* conn_send - a reply whole or not at all. Return: false: the client is
 * gone or is not reading. */
bool conn_send(struct conn *c, const char *buf, size_t len);
/* conn_ask - asks greygated what c->dlg.asking says, about c->helo,
 * c->sender and c->rcpt (a new question number). Return: 0 (the verdict
 * is to come to the phase's on_verdict, by c->verdict_due_ms), or -1 (it
 * could not be asked). */
int conn_ask(struct conn *c);
/* conn_idle_ms, conn_session_ms - the tarpit's timeouts as they stand
 * now (shorter while stressed). */
uint32_t conn_idle_ms(const struct tarpit *tp);
uint32_t conn_session_ms(const struct tarpit *tp);
/* tarpit_remember_closed - a connection of the tarpit's, or a hand-off's
 * to the MTA, that just closed: tarpit_holds says yes to it for a few
 * seconds more (the capture may be behind). @addr: 4 or 16 bytes. */
void tarpit_remember_closed(struct tarpit *tp, int family, const uint8_t *addr,
			    uint16_t port);

/* talk.c: the tarpit's own SMTP dialogue (dialogue.c's, on the socket),
 * every session's first phase: the server's conn_start enters it and
 * calls its on_start. */
extern const struct conn_phase talk_phase;

/* join.c: hand the session to the MTA on fd (greeted: its greeting was
 * read already); the client hears the MTA's answer to the command that
 * asked, then the two are joined. On failure the client hears the plain
 * deferral and the connection ends. fd is the join's (closed by it). */
void join_begin(struct conn *c, int fd, bool greeted, bool gated);

/* gate.c: a handed session of a client not passed (join_begin's gated),
 * once the replay is over: started with what the MTA said after its last
 * answer (mta_said), whether its EHLO offered CHUNKING, whether it took
 * the replayed RCPT, and the client's bytes in c->in; the session's
 * events, its timer and the MTA's connection are the gate's from then on
 * (the join's phase, under, still owns that connection and ends with
 * it). */
void gate_start(struct conn *c, int mta_fd, const char *mta_said, size_t len,
		bool chunking, bool rcpt_taken);

#endif
