/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inside tarpit/ only: a connection's state and the tarpit's, shared by
 * the server (server.c) and the hand-off's replay and join (join.c). */
#ifndef GREYGATE_TARPIT_INTERNAL_H
#define GREYGATE_TARPIT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "hash_table.h"
#include "loop.h"
#include "tarpit.h"

#define RECENT_MAX 1024 /* closed connections remembered */
#define LISTEN_MAX 8

struct join;
struct gate;

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
	struct conn *joined; /* handed to the MTA: a list (join_next) */
};

/* server.c */
void conn_close(struct conn *c);
/* conn_close_gently - close c once what was sent to it went out: our end
 * is shut, what the client still sends is read and dropped until it
 * closes too (or a few seconds), so that the kernel never resets the
 * connection before the client read our last reply (a close with unread
 * input sends a reset, and drops what was not yet delivered). A hand-off
 * it is in ends first. */
void conn_close_gently(struct conn *c);
/* conn_room - c->in made if it is not yet. Return: false (no memory). */
bool conn_room(struct conn *c);
bool conn_send(struct conn *c, const char *buf, size_t len);
void conn_arm_timer(struct conn *c);
/* conn_ask - asks greygated what c->dlg.asking says, about c->helo,
 * c->sender and c->rcpt (a new question number). Return: 0 (the verdict
 * is to come by tarpit_verdict, by c->verdict_due_ms), or -1 (it could
 * not be asked). */
int conn_ask(struct conn *c);

/* join.c: hand the session to the MTA on fd (greeted: its greeting was
 * read already); the client hears the MTA's answer to the command that
 * asked, then the two are joined. On failure the client hears the plain
 * deferral and the connection ends. fd is the join's (closed by it). */
void join_begin(struct conn *c, int fd, bool greeted, bool gated);
/* tarpit_remember_closed - a connection of the tarpit's, or a hand-off's
 * to the MTA, that just closed: tarpit_holds says yes to it for a few
 * seconds more (the capture may be behind). @addr: 4 or 16 bytes. */
void tarpit_remember_closed(struct tarpit *tp, int family, const uint8_t *addr,
			    uint16_t port);
/* join_end - free what a joined connection holds (conn_close calls). */
void join_end(struct conn *c);
/* join_holds - is this endpoint the local end of a hand-off's connection
 * to the MTA (a flow the sensor must leave alone)? */
bool join_holds(const struct tarpit *tp, int family, const uint8_t *addr,
                uint16_t port);

/* gate.c: a handed session of a client not passed (join_begin's gated),
 * once the replay is over: started with what the MTA said after its last
 * answer (mta_said), whether its EHLO offered CHUNKING, whether it took
 * the replayed RCPT, and the client's bytes in c->in; the join's events
 * and timer go to it from then on. */
void gate_start(struct conn *c, int mta_fd, const char *mta_said, size_t len,
		bool chunking, bool rcpt_taken);
void gate_on_event(struct conn *c);
void gate_on_timer(struct conn *c);
/* gate_verdict - greygated's answer to the gated RCPT (v NULL: none came
 * in time): passed on to the MTA, or answered here. */
void gate_verdict(struct conn *c, const struct tarpit_verdict *v);
void gate_free(struct gate *g);

#endif
