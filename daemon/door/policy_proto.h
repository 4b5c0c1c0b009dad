/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Postfix's policy delegation protocol (SMTPD_POLICY_README): a request
 * is name=value lines ended by an empty line, the answer one action=
 * line and an empty line. The parser is pure over (buf, len); the answers
 * are postgrey's (1.37) shapes, so its users' settings and log tools keep
 * working. */
#ifndef GREYGATE_POLICY_PROTO_H
#define GREYGATE_POLICY_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One request's bytes at most, its empty line included: a full Postfix
 * request is about 640 bytes; postgrey cuts values at 512. */
#define POLICY_REQUEST_MAX 8192
/* An answer's bytes at most, "action=" to the empty line. */
#define POLICY_ANSWER_MAX 1024

/* The attributes greylisting reads; each points into the parsed buffer
 * (NUL-terminated there), NULL when the request had none. Others are
 * ignored; a name given twice keeps its last value, as postgrey does. */
struct policy_request {
	const char *request;          /* "smtpd_access_policy" */
	const char *protocol_state;   /* "RCPT", "DATA", ... */
	const char *client_address;   /* the SMTP client's address */
	const char *client_name;      /* its verified reverse name */
	const char *helo_name;        /* what it said to HELO/EHLO */
	const char *sender;           /* MAIL FROM, "" for <> */
	const char *recipient;        /* RCPT TO */
	const char *instance;         /* one message's id in a session */
	const char *stress;           /* "yes" when Postfix is overloaded */
	const char *etrn_domain;      /* present from Postfix 2.3 on */
	const char *policy_test_time; /* postgrey's tests: a Unix time */
};

/*
 * policy_request_parse - the request at the start of buf[0..len), its
 * lines ("\n" or "\r\n" ended) NUL-terminated in place.
 * @req: the attributes found (valid while buf is)
 * Return: the bytes the request took (its empty line included), 0 if its
 * end has not come yet (and len < POLICY_REQUEST_MAX), -EMSGSIZE if no
 * end within POLICY_REQUEST_MAX, -EBADMSG for a line without '=' or with
 * an empty name, or a NUL byte.
 */
ssize_t policy_request_parse(char *buf, size_t len, struct policy_request *req);

/* What the answer says: Postfix's action words. */
enum policy_verdict {
	POLICY_DUNNO = 0,   /* nothing to say: the next restriction decides */
	POLICY_DEFER = 1,   /* greylisted: DEFER_IF_PERMIT with the text */
	POLICY_PREPEND = 2, /* the retry that passed: PREPEND the header */
};

/* What an answer is made of. */
struct policy_answer {
	enum policy_verdict verdict;
	const char *text_template; /* DEFER: postgrey's %s (seconds left) and
	                              %r (the recipient's domain) */
	uint32_t wait_sec;         /* DEFER: seconds left */
	const char *recipient;     /* DEFER: for %r */
	bool etrn_domain;          /* DEFER: the request had it: "4.2.0 "
	                              goes first, unless the text starts with
	                              a digit (postgrey's Exchange fix) */
	uint32_t delay_sec;        /* PREPEND: the delay it waited */
	const char *version;       /* PREPEND: greygate's */
	const char *host;          /* PREPEND: this host's name */
	int64_t now;               /* PREPEND: the date (epoch seconds) */
};

/*
 * policy_answer_format - the answer, "action=...\n\n", into out; a
 * template's line breaks and control bytes become spaces and an overlong
 * text is cut, so the answer is always one line.
 * @out: at least POLICY_ANSWER_MAX bytes
 * Return: its length.
 */
size_t policy_answer_format(const struct policy_answer *a, char *out);

#endif
