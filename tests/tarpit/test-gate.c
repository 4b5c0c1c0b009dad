// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the gate (tarpit/gate.c): a session handed to the MTA for a
 * client not passed (an exempt recipient), on the real server and real
 * sockets (tests/lib/tarpit_rig.h). After the replay, every later RCPT
 * asks and reaches the MTA only when passed, the others answered by the
 * tarpit itself, in the order the client pipelined them; DATA's body and
 * BDAT's chunks pass through whole; a body's end is found in each of its
 * forms, so that no command is smuggled past the gate after a bare-LF
 * end the MTA takes; STARTTLS and XCLIENT never reach the MTA; a verdict
 * that does not come is the plain 451; QUIT ends both. Issue 55's forms:
 * a verb the MTA reads as one (white space before it, any white space
 * after it, split across reads) is the gate's too; a path the MTA could
 * read as another address, a NUL, an over-long line, a verb nobody
 * knows: never passed on; the MTA reads lines written from the gate's
 * parse; BDAT only where the MTA takes its chunk as data; a client that
 * hangs up or resets mid-body ends the session and costs no CPU. */
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
 * the MTA's 250 heard, its EHLO answered with ehlo; *m gets the MTA's
 * end. */
static int
gated_session_ehlo(int *m, const char *ehlo)
{
	int c = client_at_rcpt("MAIL FROM:<a@a.test>\r\n");

	*m = hand_off_as(false, true);
	mta_replays_ehlo(*m, false, "MAIL FROM:<a@a.test>", ehlo);
	put(*m, "250 2.1.5 Ok\r\n");
	CHECK_STR(line_from(c), "250 2.1.5 Ok");
	CHECK_INT(tarpit_get_counters(f.tp)->handoffs_joined, 1);
	return c;
}

static int
gated_session(int *m)
{
	return gated_session_ehlo(m, "250 mta\r\n");
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
	       "XFORWARD ADDR=127.0.0.1\r\n\tNOOP now\r\n");
	CHECK_STR(line_from(c),
		  "454 4.7.0 TLS not available due to temporary reason");
	CHECK_STR(line_from(c), "502 5.5.2 Error: command not recognized");
	CHECK_STR(line_from(c), "502 5.5.2 Error: command not recognized");
	CHECK_STR(line_from(m), "NOOP");
	put(m, "250 2.0.0 Ok\r\n");
	CHECK_STR(line_from(c), "250 2.0.0 Ok");
	finish(c, m);
}

/* Only the allow list is passed on: every other command is answered
 * 502 here, the MTA hears none of it (issue 55: the gate passed on what
 * it did not recognise). */
static void
test_allow_list(void)
{
	static const char *const refused[] = {
	        "VRFY victim@b.test", "EXPN staff", "HELP", "AUTH PLAIN AGFhAGE=",
	        "ETRN b.test", "TURN", "\"RCPT\" TO:<v@b.test>",
	        "<RCPT> TO:<v@b.test>", "RCPT\\ TO:<v@b.test>", "GET / HTTP/1.0",
	        "RCPTTO:<v@b.test>", "\x01RCPT TO:<v@b.test>",
	};
	int c, m, asks;

	setup(5000, 2000);
	c = gated_session(&m);
	asks = f.asks;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		put(c, refused[i]);
		put(c, "\r\n");
		CHECK_STR(line_from(c),
			  "502 5.5.2 Error: command not recognized");
	}
	CHECK(silent(m, 20));
	CHECK_INT(f.asks, asks);
	finish(c, m);
}

/* Each form the MTA reads as RCPT is asked about, and greylisted here;
 * each path the MTA could read as another address is refused unasked;
 * the MTA reads the lines the gate wrote (issue 55 items 1 and 2, as
 * seen against Postfix 3.7). */
static void
test_recipient_forms(void)
{
	static const struct {
		const char *line, *rcpt; /* rcpt: asked about as */
	} asked[] = {
	        {"RCPT\tTO:<v1@b.test>", "v1@b.test"},
	        {" RCPT TO:<v2@b.test>", "v2@b.test"},
	        {"\tRCPT TO:<v3@b.test>", "v3@b.test"},
	        {"\rRCPT TO:<v6@b.test>", "v6@b.test"},
	        {"\vRCPT\fTO:\v<v7@b.test>", "v7@b.test"},
	        {"rcpt to: v8@b.test", "v8@b.test"},
	};
	static const char *const bad[] = {
	        "RCPT TO:<postmaster@b.test<v4@b.test>>",
	        "RCPT TO:<postmaster@b.test>v5@b.test",
	        "RCPT TO:<postmaster@b.test,v5@b.test>",
	        "RCPT TO:<v5(postmaster)@b.test>",
	        "RCPT TO:<<v5@b.test>>",
	};
	int c, m, asks;

	setup(5000, 2000);
	c = gated_session(&m);
	asks = f.asks;
	for (size_t i = 0; i < sizeof(asked) / sizeof(asked[0]); i++) {
		char want[128];

		put(c, asked[i].line);
		put(c, "\r\n");
		asked_about(asks + (int)i);
		answer(TARPIT_GREYLIST, 300);
		snprintf(want, sizeof(want),
			 "451 4.7.1 <%s>: Greylisted, please try again in "
			 "300 seconds",
			 asked[i].rcpt);
		CHECK_STR(line_from(c), want);
	}
	asks = f.asks;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put(c, bad[i]);
		put(c, "\r\n");
		CHECK_STR(line_from(c),
			  "501 5.1.3 Bad recipient address syntax");
	}
	/* a NUL: the MTA's parser would stop there */
	CHECK(send(c, "RCPT TO:<v9@b.test>\0junk\r\n", 26, 0) == 26);
	CHECK_STR(line_from(c), "501 5.1.3 Bad recipient address syntax");
	CHECK_INT(f.asks, asks);
	CHECK(silent(m, 20));
	/* a verb split across reads is read whole */
	put(c, "RC");
	spin(20);
	put(c, "PT\tTO:<v10@b.test>\tNOTIFY=NEVER\r\n");
	asked_about(asks);
	answer(TARPIT_PASS, 0);
	CHECK_STR(line_from(m), "RCPT TO:<v10@b.test> NOTIFY=NEVER");
	put(m, "250 2.1.5 Ok\r\n");
	CHECK_STR(line_from(c), "250 2.1.5 Ok");
	/* MAIL<TAB>FROM: the MTA hears the gate's line */
	put(c, "RSET\r\n \tmail\tFROM: <z@z.test>\tSIZE=10\r\n");
	CHECK_STR(line_from(m), "RSET");
	put(m, "250 2.0.0 Ok\r\n");
	CHECK_STR(line_from(c), "250 2.0.0 Ok");
	CHECK_STR(line_from(m), "MAIL FROM:<z@z.test> SIZE=10");
	put(m, "250 2.1.0 Ok\r\n");
	CHECK_STR(line_from(c), "250 2.1.0 Ok");
	put(c, "MAIL FROM:<z@z.test> X=\"<postmaster@b.test>\"\r\n");
	CHECK_STR(line_from(c), "555 5.5.4 Unsupported option");
	CHECK(silent(m, 20));
	finish(c, m);
}

/* A line longer than the gate's buffer: answered 500 once its end comes,
 * and no part of it is a command (the RCPT at its end included). */
static void
test_over_long_line(void)
{
	enum { LONG = 70000 };
	static const char inside[] = "\tRCPT TO:<v@b.test> x",
			  after[] = "\r\nRCPT TO:<v@b.test>\r\n";
	static char line[LONG + sizeof(after)];
	size_t sent = 0, total = LONG + sizeof(after) - 1;
	int c, m, asks;

	setup(5000, 2000);
	c = gated_session(&m);
	asks = f.asks;
	memset(line, 'x', LONG);
	memcpy(line + LONG - 40, inside, sizeof(inside) - 1);
	memcpy(line + LONG, after, sizeof(after) - 1);
	for (int t = 0; t < 5000 && sent < total; t++) {
		ssize_t n = send(c, line + sent, total - sent, MSG_DONTWAIT);

		if (n > 0)
			sent += (size_t)n;
		loop_run_once(f.loop, 1);
	}
	CHECK_INT(sent, total);
	CHECK_STR(line_from(c), "500 5.5.0 Error: line too long");
	/* the whole line after it is one: asked once */
	asked_about(asks);
	CHECK(silent(m, 20));
	finish(c, m);
}

/* How many of n turns of the loop (each up to 20 ms) found work: a loop
 * that spins finds work every turn. */
static int
busy_turns(int n)
{
	int busy = 0;

	for (int i = 0; i < n; i++) {
		double t0 = check_now_sec();

		loop_run_once(f.loop, 20);
		busy += check_now_sec() - t0 < 0.010;
	}
	return busy;
}

static void
reset(int c)
{
	struct linger lg = {1, 0};

	CHECK(setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) == 0);
	close(c);
}

/* A gated session in DATA, the client's body so far through to the MTA;
 * the client's end returned, the MTA's in *m. */
static int
in_body(int *m, const char *body)
{
	int c;

	setup(5000, 2000);
	c = gated_session(m);
	put(c, "DATA\r\n");
	CHECK_STR(line_from(*m), "DATA");
	put(*m, "354 go ahead\r\n");
	CHECK_STR(line_from(c), "354 go ahead");
	put(c, body);
	bytes_from(*m, body);
	return c;
}

/* A client that hangs up, or resets, mid-body: the session ends (the
 * MTA drops the message), and the tarpit's loop sleeps (issue 55 item 4:
 * the gate watched a reset client and spun at 100% of a core). One that
 * resets after the body's end: the MTA's answer is awaited, the loop
 * sleeping meanwhile. */
static void
test_client_gone_mid_body(void)
{
	int c, m;

	for (int how = 0; how < 2; how++) {
		c = in_body(&m, "Subject: half\r\n\r\nsome of it\r\n");
		shutdown(c, SHUT_WR);
		if (how == 1) {
			spin(10);
			reset(c);
			c = -1;
		}
		CHECK(closed(m));
		CHECK(busy_turns(10) <= 2);
		CHECK_INT(tarpit_get_counters(f.tp)->joined_open, 0);
		if (c >= 0)
			close(c);
		close(m);
		teardown();
	}
	/* the body's end came, then a reset: the MTA's answer awaited */
	c = in_body(&m, "Subject: whole\r\n\r\nall of it\r\n.\r\n");
	shutdown(c, SHUT_WR);
	spin(10);
	reset(c);
	CHECK(busy_turns(10) <= 2);
	CHECK(!closed(m)); /* (waiting for its answer) */
	put(m, "250 2.0.0 queued\r\n");
	CHECK(closed(m));
	close(m);
	CHECK_INT(tarpit_get_counters(f.tp)->joined_open, 0);
	teardown();
}

/* BDAT where the MTA offered CHUNKING and took a RCPT: each chunk passes
 * by its count (a chunk's bytes are never read as commands), its answer
 * relayed. */
static void
test_bdat(void)
{
	int c, m;

	setup(5000, 2000);
	c = gated_session_ehlo(&m, "250-mta\r\n250-PIPELINING\r\n"
				   "250 CHUNKING\r\n");
	put(c, "BDAT 23\r\nRCPT TO:<evil@b.test>\r\nBDAT 0 LAST\r\n");
	CHECK_STR(line_from(m), "BDAT 23");
	CHECK_STR(line_from(m), "RCPT TO:<evil@b.test>");
	CHECK(silent(m, 20));
	put(m, "250 2.0.0 23 octets\r\n");
	CHECK_STR(line_from(c), "250 2.0.0 23 octets");
	CHECK_STR(line_from(m), "BDAT 0 LAST");
	put(m, "250 2.0.0 queued\r\n");
	CHECK_STR(line_from(c), "250 2.0.0 queued");
	/* a new transaction without a RCPT the MTA took: refused here, its
	 * chunk dropped */
	put(c, "MAIL FROM:<z@z.test>\r\n");
	CHECK_STR(line_from(m), "MAIL FROM:<z@z.test>");
	put(m, "250 2.1.0 Ok\r\n");
	CHECK_STR(line_from(c), "250 2.1.0 Ok");
	put(c, "BDAT 23 LAST\r\nRCPT TO:<evil@b.test>\r\nNOOP\r\n");
	CHECK_STR(line_from(c), "554 5.5.1 Error: no valid recipients");
	CHECK_STR(line_from(m), "NOOP");
	finish(c, m);
}

/* BDAT to an MTA that did not offer CHUNKING (issue 55 item 3: it was
 * passed on with its chunk, which an MTA could read as commands): answered
 * here, the chunk dropped, the next command read after it. */
static void
test_bdat_without_chunking(void)
{
	int c, m, asks;

	setup(5000, 2000);
	c = gated_session(&m);
	asks = f.asks;
	put(c, "BDAT 23 LAST\r\nRCPT TO:<evil@b.test>\r\n");
	CHECK_STR(line_from(c), "502 5.5.1 Error: command not recognized");
	spin(20);
	CHECK_INT(f.asks, asks);
	put(c, "BDAT 5\r\nRCPT TO:<v@b.test>\r\n");
	CHECK_STR(line_from(c), "502 5.5.1 Error: command not recognized");
	/* "RCPT" was the chunk; " TO:<v@b.test>" is a line of its own */
	CHECK_STR(line_from(c), "502 5.5.2 Error: command not recognized");
	CHECK(silent(m, 20));
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
	test_allow_list();
	test_recipient_forms();
	test_over_long_line();
	test_client_gone_mid_body();
	test_bdat();
	test_bdat_without_chunking();
	test_late_verdict();
	test_mta_leaves();
	return 0;
}
