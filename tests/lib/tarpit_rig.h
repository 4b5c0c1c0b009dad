/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The tarpit as the hand-off's tests drive it (tests/tarpit/test-join.c,
 * test-gate.c): a real server on a loop, listening on loopback; a client
 * on TCP; the "MTA" the test itself, on the other end of a socket pair
 * handed in with the verdict. Questions are noted, never answered: the
 * test answers them (tarpit_verdict). */
#ifndef GREYGATE_TEST_TARPIT_RIG_H
#define GREYGATE_TEST_TARPIT_RIG_H

#include <stdbool.h>
#include <stdint.h>

#include "loop.h"
#include "tarpit.h"

struct fixture {
	struct loop *loop;
	struct tarpit *tp;
	struct tarpit_config cfg;
	uint16_t port;
	uint64_t session;  /* the last question's session */
	uint32_t question; /* ... and its number */
	enum tarpit_ask kind;
	int asks;
};

extern struct fixture f;

/* A tarpit whose sessions wait wait_ms for a verdict and whose replays
 * take at most handoff_ms; null_sender_at_data on. */
void setup(uint32_t wait_ms, uint32_t handoff_ms);
void teardown(void);
/* Runs the loop for about ms. */
void spin(int ms);
int client_connect(void);
/* text sent whole on fd */
void put(int fd, const char *text);
/* The next line on fd (without CRLF), the loop running meanwhile; ""
 * when the other side closed, NULL when nothing came within 3 s. */
const char *line_from(int fd);
/* Has the other side of fd closed (nothing more to read)? */
bool closed(int fd);
/* A client that was greeted and said EHLO c.test (its answer read
 * whole). */
int client_after_ehlo(void);
/* ... and the MAIL line mail, and asked at RCPT TO:<b@b.test>. */
int client_at_rcpt(const char *mail);
/* ... or asked at STARTTLS. */
int client_at_starttls(void);
/* The verdict PASS for the last question, with a new connection to the
 * "MTA" (greeted: its greeting read already; gated: for a client not
 * passed). Return: the MTA's end. */
int hand_off_as(bool greeted, bool gated);
int hand_off(bool greeted);
/* The MTA's side of the replay, every step answered 250: the greeting
 * (unless greeted), EHLO, then the MAIL line and the RCPT that asked (up
 * to reading that RCPT, not answering it). */
void mta_replays(int m, bool greeted, const char *mail);
/* mta_replays_ehlo - the same, the MTA answering EHLO with ehlo (whole
 * reply, CRLFs and all). */
void mta_replays_ehlo(int m, bool greeted, const char *mail, const char *ehlo);

#endif
