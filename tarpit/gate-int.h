/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inside gate.c and gate_commands.c only: the gate's state (gate.c says
 * what the gate is). */
#ifndef GREYGATE_GATE_INT_H
#define GREYGATE_GATE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "smtp_command.h"

/* Each way's buffer: the client's bytes not yet taken, the MTA's not yet
 * written. */
#define GATE_BUF 65536
/* The MTA's reply being read (EHLO's is the longest). */
#define GATE_REPLY_MAX 4096

enum gate_step {
	G_COMMAND, /* the client's next command is taken */
	G_VERDICT, /* greygated is asked about a RCPT */
	G_REPLY,   /* the MTA is to answer what was passed on */
	G_BODY,    /* DATA's body passes, to its end-of-data line */
	G_CHUNK,   /* a BDAT chunk passes, by its count */
	G_SKIP,    /* a refused BDAT's chunk is dropped, by its count */
};

/* What the MTA is answering. */
enum gate_sent {
	SENT_OTHER,
	SENT_MAIL,
	SENT_RCPT,
	SENT_DATA,
	SENT_BODY, /* the end of DATA's body */
	SENT_CHUNK,
	SENT_LAST_CHUNK,
	SENT_RESET, /* RSET, HELO, EHLO: the transaction ends */
	SENT_QUIT,
};

/* Where a body is, for its end: CR LF "." CR LF, or any of its bare-LF
 * or bare-CR forms. */
enum eod_state {
	EOD_LINE_START, /* after a CR or LF (and at the body's start) */
	EOD_MID,        /* within a line */
	EOD_DOT,        /* a dot that began a line */
	EOD_DOT_CR,     /* ... and a CR after it: an LF may follow */
};

struct gate {
	int mta; /* the join's connection to the MTA (borrowed) */
	const struct conn_phase *under; /* the join's: it owns mta */
	enum gate_step step;
	enum gate_sent sent;
	enum eod_state eod;
	bool in_mail;    /* the MTA took a MAIL of this transaction */
	bool discarding; /* within a command line too long to take */
	bool client_eof; /* the client said no more */
	bool client_unwatched; /* ... and the loop no longer watches it */
	bool chunking;   /* the MTA offered CHUNKING */
	bool rcpt_taken; /* the MTA took a RCPT of this transaction */
	uint16_t asks;
	bool body_ends;  /* the body's (or chunk's) end is within ready */
	uint64_t chunk_left;
	char sender[SMTP_PATH_MAX + 1]; /* MAIL's path, until the MTA
					   takes it */
	/* in[in_off, in_len): the client's bytes not yet taken; the first
	 * ready of them are the body's, read for its end already */
	size_t in_off, in_len, ready;
	size_t out_len, out_off, reply_len;
	char in[GATE_BUF];
	char out[GATE_BUF];
	char reply[GATE_REPLY_MAX];
};

/* gate_commands.c: a command taken from the client, and the MTA's
 * answers. Each returns false when c was closed. */

/* gate_say - a reply of the gate's own (false: the client is gone). */
bool gate_say(struct conn *c, const char *text);
/* gate_pass_on - the line goes to the MTA, whose answer is awaited. */
void gate_pass_on(struct gate *g, const char *line, size_t len,
                  enum gate_sent sent);
/* gate_answer_held - greygated's answer to a RCPT held here (v NULL:
 * none in time) said to the client. */
bool gate_answer_held(struct conn *c, const struct tarpit_verdict *v);
/* gate_command - one whole command line of the client's, taken. */
bool gate_command(struct conn *c, const char *line, size_t len);
/* gate_answered - what the MTA's answer (code) to what was passed on
 * changes. */
bool gate_answered(struct conn *c, int code);

#endif
