// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the gate (tarpit/gate.c): a session handed to the MTA for a
 * client not passed (an exempt recipient), on the real server and real
 * sockets (tests/lib/tarpit_rig.h). After the replay, every later RCPT
 * asks and reaches the MTA only when passed, the others answered by the
 * tarpit itself, in the order the client pipelined them; DATA's body and
 * BDAT's chunks pass through whole; a body's end is found in each of its
 * forms, so that no command is smuggled past the gate after a bare-LF
 * end the MTA takes; STARTTLS and XCLIENT never reach the MTA; a verdict
 * that does not come is the plain 451; QUIT ends both. */
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "tarpit_rig.h"

/* Nothing more came to fd within about ms (the loop running). */
static bool
silent(int fd, int ms)
{
	char c;

	spin(ms);
	return recv(fd, &c, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN;
}

/* Exactly the bytes want came to fd (the loop running meanwhile). */
static void
bytes_from(int fd, const char *want)
{
	char got[256];
	size_t n = 0, len = strlen(want);

	for (int t = 0; t < 3000 && n < len; t++) {
		ssize_t r;

		loop_run_once(f.loop, 1);
		r = recv(fd, got + n, len - n, MSG_DONTWAIT);
		if (r > 0)
			n += (size_t)r;
	}
	got[n] = 0;
	CHECK_STR(got, want);
}

/* The gate asked about a RCPT (the question after the ones before). */
static void
asked_about(int before)
{
	for (int t = 0; t < 1000 && f.asks == before; t++)
		loop_run_once(f.loop, 1);
	CHECK_INT(f.asks, before + 1);
	CHECK_INT(f.kind, TARPIT_ASK_RCPT);
}

static void
answer(enum tarpit_action action, uint32_t wait_sec)
{
	struct tarpit_verdict v = {action, wait_sec, -1, false, 0, false};

	CHECK_INT(tarpit_verdict(f.tp, f.session, f.question, &v), 0);
}

/* A client handed over gated at postmaster@'s RCPT, the replay done and
 * the MTA's 250 heard; *m gets the MTA's end. */
static int
gated_session(int *m)
{
	int c = client_at_rcpt("MAIL FROM:<a@a.test>\r\n");

	*m = hand_off_as(false, true);
	mta_replays(*m, false, "MAIL FROM:<a@a.test>");
	put(*m, "250 2.1.5 Ok\r\n");
	CHECK_STR(line_from(c), "250 2.1.5 Ok");
	CHECK_INT(tarpit_get_counters(f.tp)->handoffs_joined, 1);
	return c;
}

/* Both ends closed, the tarpit done with them, and gone. */
static void
finish(int c, int m)
{
	close(c);
	close(m);
	spin(10);
	teardown();
}

/* Pipelined recipients: one greylisted and one refused by the tarpit
 * itself (the MTA never hears them), one passed and relayed, replies in
 * the client's order; then DATA, a body with a line that looks like a
 * command and a dot-stuffed line, and another message. */
static void
test_recipients_policed(void)
{
	int c, m, asks;

	setup(5000, 2000);
	c = gated_session(&m);
	asks = f.asks;
	put(c, "RCPT TO:<victim@b.test>\r\nRCPT TO:<nobody@b.test>\r\n"
	       "RCPT TO:<abuse@b.test>\r\nDATA\r\n");
	asked_about(asks);
	answer(TARPIT_GREYLIST, 300);
	CHECK_STR(line_from(c), "451 4.7.1 <victim@b.test>: Greylisted, "
				"please try again in 300 seconds");
	asked_about(asks + 1);
	answer(TARPIT_REFUSE, 0);
	CHECK_STR(line_from(c), "550 5.1.1 <nobody@b.test>: Recipient "
				"address rejected: User unknown");
	asked_about(asks + 2);
	CHECK(silent(m, 20)); /* nothing of the three yet */
	answer(TARPIT_PASS, 0);
	CHECK_STR(line_from(m), "RCPT TO:<abuse@b.test>");
	CHECK(silent(m, 20)); /* DATA waits for the RCPT's answer */
	put(m, "250 2.1.5 Ok\r\n");
	CHECK_STR(line_from(c), "250 2.1.5 Ok");
	CHECK_STR(line_from(m), "DATA");
	put(m, "354 go ahead\r\n");
	CHECK_STR(line_from(c), "354 go ahead");
	put(c, "Subject: x\r\n\r\nRCPT TO:<body@b.test>\r\n..dot\r\n.\r\n"
	       "MAIL FROM:<z@z.test>\r\nRCPT TO:<d@b.test>\r\n");
	CHECK_STR(line_from(m), "Subject: x");
	CHECK_STR(line_from(m), "");
	CHECK_STR(line_from(m), "RCPT TO:<body@b.test>");
	CHECK_STR(line_from(m), "..dot");
	CHECK_STR(line_from(m), ".");
	CHECK(silent(m, 20)); /* MAIL waits for the message's answer */
	put(m, "250 2.0.0 queued\r\n");
	CHECK_STR(line_from(c), "250 2.0.0 queued");
	CHECK_STR(line_from(m), "MAIL FROM:<z@z.test>");
	put(m, "250 2.1.0 Ok\r\n");
	CHECK_STR(line_from(c), "250 2.1.0 Ok");
	asked_about(asks + 3);
	CHECK(silent(m, 20));
	answer(TARPIT_GREYLIST, 120);
	CHECK_STR(line_from(c), "451 4.7.1 <d@b.test>: Greylisted, please "
				"try again in 120 seconds");
	/* QUIT ends both */
	put(c, "QUIT\r\n");
	CHECK_STR(line_from(m), "QUIT");
	put(m, "221 2.0.0 Bye\r\n");
	CHECK_STR(line_from(c), "221 2.0.0 Bye");
	CHECK(closed(c));
	close(c);
	CHECK(closed(m));
	close(m);
	CHECK_INT(tarpit_get_counters(f.tp)->joined_open, 0);
	CHECK_INT(tarpit_get_counters(f.tp)->open, 0);
	teardown();
}

/* A body ended by a bare LF, as Debian 12's Postfix takes it, with a
 * RCPT behind it: the gate ends the body there too, and the RCPT is a
 * command (here out of a transaction: 503), never a line of the body
 * the MTA would read as a command. Each other end's form too. */
static void
test_no_smuggling(void)
{
	static const char *const ends[] = {"\n.\n", "\r\n.\n", "\n.\r\n",
					   "\r.\r"};

	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		char body[128], passed[32];
		int c, m;

		setup(5000, 2000);
		c = gated_session(&m);
		put(c, "DATA\r\n");
		CHECK_STR(line_from(m), "DATA");
		put(m, "354 go ahead\r\n");
		CHECK_STR(line_from(c), "354 go ahead");
		snprintf(body, sizeof(body), "hello%sRCPT TO:<evil@b.test>\r\n",
			 ends[i]);
		put(c, body);
		snprintf(passed, sizeof(passed), "hello%s", ends[i]);
		bytes_from(m, passed);
		CHECK(silent(m, 30)); /* the RCPT is held */
		put(m, "250 2.0.0 queued\r\n");
		CHECK_STR(line_from(c), "250 2.0.0 queued");
		CHECK_STR(line_from(c), "503 5.5.1 Error: need MAIL command");
		CHECK(silent(m, 30));
		finish(c, m);
	}
}

/* A megabyte's body through the gate to an MTA that reads slowly (its
 * socket fills, and the gate must wait to write, not stall): every byte
 * through, in order, then the end and the MTA's answer. */
static void
test_bulk_body(void)
{
	enum { TOTAL = 1 << 20 };
	static char body[TOTAL + 3], got[TOTAL + 3];
	size_t sent = 0, have = 0;
	int c, m;

	for (size_t i = 0; i < TOTAL; i++)
		body[i] = i % 100 == 99 ? '\n' : (char)('a' + i % 26);
	memcpy(body + TOTAL, ".\r\n", 3);
	setup(5000, 2000);
	c = gated_session(&m);
	put(c, "DATA\r\n");
	CHECK_STR(line_from(m), "DATA");
	put(m, "354 go ahead\r\n");
	CHECK_STR(line_from(c), "354 go ahead");
	for (int t = 0; t < 20000 && have < sizeof(body); t++) {
		ssize_t n;

		if (sent < sizeof(body) &&
		    (n = send(c, body + sent, sizeof(body) - sent,
		              MSG_DONTWAIT)) > 0)
			sent += (size_t)n;
		loop_run_once(f.loop, 1);
		if ((n = recv(m, got + have,
		              sizeof(body) - have < 1000 ? sizeof(body) - have
		                                         : 1000,
		              MSG_DONTWAIT)) > 0)
			have += (size_t)n;
	}
	CHECK_INT(have, sizeof(body));
	CHECK(memcmp(body, got, sizeof(body)) == 0);
	put(m, "250 2.0.0 queued\r\n");
	CHECK_STR(line_from(c), "250 2.0.0 queued");
	finish(c, m);
}

/* STARTTLS (TLS would hide what is policed) and XCLIENT/XFORWARD (the
 * MTA trusts them from greygate's connection) are answered here; other
 * commands go to the MTA. */
static void
test_held_commands(void)
{
	int c, m;

	setup(5000, 2000);
	c = gated_session(&m);
	put(c, "STARTTLS\r\nXCLIENT ADDR=127.0.0.1\r\n"
	       "XFORWARD ADDR=127.0.0.1\r\nNOOP\r\n");
	CHECK_STR(line_from(c),
		  "454 4.7.0 TLS not available due to temporary reason");
	CHECK_STR(line_from(c), "502 5.5.2 Error: command not recognized");
	CHECK_STR(line_from(c), "502 5.5.2 Error: command not recognized");
	CHECK_STR(line_from(m), "NOOP");
	put(m, "250 2.0.0 Ok\r\n");
	CHECK_STR(line_from(c), "250 2.0.0 Ok");
	finish(c, m);
}

/* BDAT: each chunk passes by its count (a chunk's bytes are never read
 * as commands), its answer relayed. */
static void
test_bdat(void)
{
	int c, m;

	setup(5000, 2000);
	c = gated_session(&m);
	put(c, "BDAT 23\r\nRCPT TO:<evil@b.test>\r\nBDAT 0 LAST\r\n");
	CHECK_STR(line_from(m), "BDAT 23");
	CHECK_STR(line_from(m), "RCPT TO:<evil@b.test>");
	CHECK(silent(m, 20));
	put(m, "250 2.0.0 23 octets\r\n");
	CHECK_STR(line_from(c), "250 2.0.0 23 octets");
	CHECK_STR(line_from(m), "BDAT 0 LAST");
	put(m, "250 2.0.0 queued\r\n");
	CHECK_STR(line_from(c), "250 2.0.0 queued");
	finish(c, m);
}

/* No verdict in time: the tarpit's plain 451, and the session goes on. */
static void
test_late_verdict(void)
{
	int c, m, asks;

	setup(200, 2000);
	c = gated_session(&m);
	asks = f.asks;
	put(c, "RCPT TO:<victim@b.test>\r\n");
	asked_about(asks);
	CHECK_STR(line_from(c), "451 4.7.1 <victim@b.test>: Greylisted, "
				"please try again in 300 seconds");
	CHECK_INT(tarpit_get_counters(f.tp)->verdicts_late, 1);
	/* the verdict that comes after finds nobody waiting */
	{
		struct tarpit_verdict v = {TARPIT_PASS, 0, -1, false, 0,
					   false};

		CHECK_INT(tarpit_verdict(f.tp, f.session, f.question, &v),
			  -ENOENT);
	}
	CHECK(silent(m, 20));
	put(c, "NOOP\r\n");
	CHECK_STR(line_from(m), "NOOP");
	finish(c, m);
}

/* The MTA goes away: what it said last reaches the client, which is
 * then closed. */
static void
test_mta_leaves(void)
{
	int c, m;

	setup(5000, 2000);
	c = gated_session(&m);
	put(m, "421 4.4.2 mta Error: timeout exceeded\r\n");
	close(m);
	CHECK_STR(line_from(c), "421 4.4.2 mta Error: timeout exceeded");
	CHECK(closed(c));
	close(c);
	CHECK_INT(tarpit_get_counters(f.tp)->joined_open, 0);
	teardown();
}

int
main(void)
{
	test_recipients_policed();
	test_no_smuggling();
	test_bulk_body();
	test_held_commands();
	test_bdat();
	test_late_verdict();
	test_mta_leaves();
	return 0;
}
