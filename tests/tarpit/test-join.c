// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the hand-off's end in the tarpit (tarpit/join.c), on the real
 * server and real sockets: a client on TCP over loopback, the "MTA" the
 * test itself on the other end of a socket pair handed in with the
 * verdict. The replay's order and words, the MTA's answer relayed, what
 * the client pipelined passed on in order, a megabyte each way through
 * the bounded buffers, STARTTLS, and every failure (a refusal, no answer,
 * a client gone, a null sender's earlier 250, a verdict that comes too
 * late): the client hears the plain answer and nothing is left open;
 * what the joined session goes on with (more recipients, another
 * message) told as the fast path's RCPTs, a message's body never. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "tarpit_rig.h"

/* The later RCPTs a joined session told (tarpit_set_joined_events). */
struct told {
	int n;
	char from[8][64], to[8][64];
	int reply[8];
	enum sensor_path path[8];
	uint64_t session[8];
	uint8_t family[8];
};
static struct told told;

static void
on_joined_event(const struct sensor_event *ev, void *ctx)
{
	int i = told.n;

	(void)ctx;
	CHECK_INT(ev->type, SENSOR_EV_RCPT);
	if (i >= 8)
		return;
	snprintf(told.from[i], sizeof(told.from[i]), "%s", ev->from);
	snprintf(told.to[i], sizeof(told.to[i]), "%s", ev->to);
	told.reply[i] = ev->reply;
	told.path[i] = ev->path;
	told.session[i] = ev->session;
	told.family[i] = ev->family;
	told.n++;
}

static void
test_replay_then_joined(void)
{
	const struct tarpit_counters *k;
	int c, m;

	setup(5000, 2000);
	c = client_at_rcpt("MAIL FROM:<a@a.test> BODY=8BITMIME\r\n");
	m = hand_off(false);
	put(m, "220 mta.test ESMTP\r\n");
	CHECK_STR(line_from(m), "EHLO c.test");
	put(m, "250-mta.test\r\n250 PIPELINING\r\n");
	CHECK_STR(line_from(m), "MAIL FROM:<a@a.test> BODY=8BITMIME");
	put(m, "250 2.1.0 Ok\r\n");
	CHECK_STR(line_from(m), "RCPT TO:<b@b.test>");
	put(m, "250 2.1.5 Ok, said the MTA\r\n");
	/* The MTA's answer is the client's; the tarpit's 250s before it
	 * stood, the MTA's to the replay were not passed on. */
	CHECK_STR(line_from(c), "250 2.1.5 Ok, said the MTA");
	k = tarpit_get_counters(f.tp);
	CHECK_INT(k->handoffs_joined, 1);
	CHECK_INT(k->joined_open, 1);
	CHECK_INT(k->open, 0);
	put(c, "DATA\r\n");
	CHECK_STR(line_from(m), "DATA");
	put(m, "354 go ahead\r\n");
	CHECK_STR(line_from(c), "354 go ahead");
	put(c, "QUIT\r\n");
	CHECK_STR(line_from(m), "QUIT");
	put(m, "221 bye\r\n");
	shutdown(m, SHUT_WR);
	CHECK_STR(line_from(c), "221 bye");
	CHECK(closed(c));
	close(c);
	spin(20);
	CHECK(closed(m));
	k = tarpit_get_counters(f.tp);
	CHECK_INT(k->joined_open, 0);
	CHECK_INT(k->open, 0);
	CHECK_INT(k->handoffs_abandoned, 0); /* joined, then done */
	close(m);
	teardown();
}

/* Joined, the session goes on: a pipelined second recipient, a message
 * whose body holds command-like lines, another transaction; each later
 * RCPT is told with the MTA's answer and the transaction's sender, the
 * body's lines never; one unanswered when the session ends is told with
 * reply 0. */
static void
test_joined_session_told(void)
{
	int c, m;

	setup(5000, 2000);
	memset(&told, 0, sizeof(told));
	tarpit_set_joined_events(f.tp, on_joined_event, NULL);
	c = client_at_rcpt("MAIL FROM:<a@a.test>\r\n");
	/* pipelined behind the RCPT that asked */
	put(c, "RCPT TO:<c@b.test>\r\nDATA\r\n");
	spin(20);
	m = hand_off(false);
	mta_replays(m, false, "MAIL FROM:<a@a.test>");
	put(m, "250 2.1.5 Ok\r\n");
	CHECK_STR(line_from(c), "250 2.1.5 Ok");
	CHECK_STR(line_from(m), "RCPT TO:<c@b.test>");
	CHECK_STR(line_from(m), "DATA");
	put(m, "250 2.1.5 Ok\r\n354 go ahead\r\n");
	CHECK_STR(line_from(c), "250 2.1.5 Ok");
	CHECK_STR(line_from(c), "354 go ahead");
	CHECK_INT(told.n, 1);
	CHECK_STR(told.from[0], "a@a.test");
	CHECK_STR(told.to[0], "c@b.test");
	CHECK_INT(told.reply[0], 250);
	CHECK_INT(told.path[0], SENSOR_PATH_FAST);
	/* the session is named, never its client (greygated knows it) */
	CHECK_INT(told.session[0], f.session);
	CHECK_INT(told.family[0], 0);
	/* a body with a line that looks like a command: not one */
	put(c, "Subject: x\r\n\r\nRCPT TO:<body@b.test>\r\n.\r\n");
	CHECK_STR(line_from(m), "Subject: x");
	CHECK_STR(line_from(m), "");
	CHECK_STR(line_from(m), "RCPT TO:<body@b.test>");
	CHECK_STR(line_from(m), ".");
	put(m, "250 queued\r\n");
	CHECK_STR(line_from(c), "250 queued");
	/* another message: its sender, a refused recipient, one the MTA
	 * never answers before the end */
	put(c, "MAIL FROM:<z@z.test>\r\nRCPT TO:<d@b.test>\r\n"
	       "RCPT TO:<e@b.test>\r\n");
	CHECK_STR(line_from(m), "MAIL FROM:<z@z.test>");
	CHECK_STR(line_from(m), "RCPT TO:<d@b.test>");
	CHECK_STR(line_from(m), "RCPT TO:<e@b.test>");
	put(m, "250 ok\r\n550 5.1.1 no such user\r\n");
	CHECK_STR(line_from(c), "250 ok");
	CHECK_STR(line_from(c), "550 5.1.1 no such user");
	CHECK_INT(told.n, 2);
	CHECK_STR(told.from[1], "z@z.test");
	CHECK_STR(told.to[1], "d@b.test");
	CHECK_INT(told.reply[1], 550);
	close(c);
	close(m);
	spin(20);
	CHECK_INT(told.n, 3);
	CHECK_STR(told.to[2], "e@b.test");
	CHECK_INT(told.reply[2], 0);
	CHECK_INT(tarpit_get_counters(f.tp)->joined_rcpts, 3);
	teardown();
}

/* The hand-off's own connection to the MTA is the tarpit's while it is
 * joined and for a while after it closed (the sensor, behind in the
 * capture, must not take it for the fast path: in transparent mode it
 * leaves from the client's address). */
static void
test_mta_connection_is_the_tarpits(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
	                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_in mine;
	socklen_t sl = sizeof(sin);
	struct tarpit_verdict v = {TARPIT_PASS, 0, -1, false, 0, false};
	int lfd, to_mta, m, c;
	uint8_t lo[4] = {127, 0, 0, 1};
	uint16_t port;

	setup(5000, 2000);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
	      listen(lfd, 1) == 0 &&
	      getsockname(lfd, (struct sockaddr *)&sin, &sl) == 0);
	to_mta = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(to_mta >= 0 &&
	      connect(to_mta, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	sl = sizeof(mine);
	CHECK(getsockname(to_mta, (struct sockaddr *)&mine, &sl) == 0);
	port = ntohs(mine.sin_port);
	m = accept(lfd, NULL, NULL);
	CHECK(m >= 0);
	CHECK(!tarpit_holds(f.tp, AF_INET, lo, port));
	c = client_at_rcpt("MAIL FROM:<a@a.test>\r\n");
	v.handoff_fd = to_mta;
	CHECK_INT(tarpit_verdict(f.tp, f.session, f.question, &v), 0);
	CHECK(tarpit_holds(f.tp, AF_INET, lo, port));
	put(m, "220 mta\r\n");
	mta_replays(m, true, "MAIL FROM:<a@a.test>");
	put(m, "250 ok\r\n");
	CHECK_STR(line_from(c), "250 ok");
	/* the client leaves, then the MTA: the join ends */
	close(c);
	CHECK(closed(m));
	close(m);
	spin(20);
	CHECK_INT(tarpit_get_counters(f.tp)->joined_open, 0);
	CHECK(tarpit_holds(f.tp, AF_INET, lo, port));
	close(lfd);
	teardown();
}

/* A megabyte each way at once, read in small bites at one end: the
 * bounded buffers hold back the faster side, and every byte arrives in
 * order. */
static void
test_bulk_both_ways(void)
{
	enum { TOTAL = 1 << 20 };
	static char up[TOTAL], down[TOTAL], got_up[TOTAL], got_down[TOTAL];
	size_t up_sent = 0, down_sent = 0, up_got = 0, down_got = 0;
	int c, m;

	for (size_t i = 0; i < TOTAL; i++) {
		up[i] = (char)(i * 7 + 1);
		down[i] = (char)(i * 13 + 5);
	}
	setup(5000, 2000);
	c = client_at_rcpt("MAIL FROM:<a@a.test>\r\n");
	m = hand_off(true); /* greeted: the replay starts with EHLO */
	mta_replays(m, true, "MAIL FROM:<a@a.test>");
	put(m, "250 ok\r\n");
	CHECK_STR(line_from(c), "250 ok");
	for (int t = 0; t < 20000 && (up_got < TOTAL || down_got < TOTAL);
	     t++) {
		ssize_t n;

		if (up_sent < TOTAL &&
		    (n = send(c, up + up_sent, TOTAL - up_sent, MSG_DONTWAIT)) >
		            0)
			up_sent += (size_t)n;
		if (down_sent < TOTAL &&
		    (n = send(m, down + down_sent, TOTAL - down_sent,
		              MSG_DONTWAIT)) > 0)
			down_sent += (size_t)n;
		loop_run_once(f.loop, 1);
		/* the MTA reads slowly */
		if ((n = recv(m, got_up + up_got,
		              TOTAL - up_got < 1000 ? TOTAL - up_got : 1000,
		              MSG_DONTWAIT)) > 0)
			up_got += (size_t)n;
		if ((n = recv(c, got_down + down_got, TOTAL - down_got,
		              MSG_DONTWAIT)) > 0)
			down_got += (size_t)n;
	}
	CHECK_INT(up_got, TOTAL);
	CHECK_INT(down_got, TOTAL);
	CHECK(memcmp(up, got_up, TOTAL) == 0);
	CHECK(memcmp(down, got_down, TOTAL) == 0);
	/* The client's end is passed on, and the join lasts until the MTA
	 * closes too. */
	close(c);
	CHECK(closed(m));
	CHECK_INT(tarpit_get_counters(f.tp)->joined_open, 1);
	close(m);
	spin(20);
	CHECK_INT(tarpit_get_counters(f.tp)->joined_open, 0);
	teardown();
}

/* What the client sent after the RCPT that asked (PIPELINING) waits,
 * then goes to the MTA right after the replay, in order. */
static void
test_pipelined_after_rcpt(void)
{
	int c, m;

	setup(5000, 2000);
	c = client_after_ehlo();
	put(c, "MAIL FROM:<a@a.test>\r\nRCPT TO:<b@b.test>\r\n"
	       "RCPT TO:<c@b.test>\r\nDATA\r\n");
	CHECK_STR(line_from(c), "250 2.1.0 Ok");
	spin(20);
	CHECK_INT(f.kind, TARPIT_ASK_RCPT);
	CHECK_INT(f.asks, 1);
	m = hand_off(false);
	mta_replays(m, false, "MAIL FROM:<a@a.test>");
	put(m, "250 b ok\r\n");
	CHECK_STR(line_from(m), "RCPT TO:<c@b.test>");
	CHECK_STR(line_from(m), "DATA");
	put(m, "250 c ok\r\n354 go\r\n");
	CHECK_STR(line_from(c), "250 b ok");
	CHECK_STR(line_from(c), "250 c ok");
	CHECK_STR(line_from(c), "354 go");
	CHECK_INT(f.asks, 1); /* nothing more asked: the MTA answers now */
	close(c);
	close(m);
	teardown();
}

static void
test_starttls_handed(void)
{
	int c, m;

	setup(5000, 2000);
	c = client_at_starttls();
	m = hand_off(false);
	put(m, "220 mta\r\n");
	CHECK_STR(line_from(m), "EHLO c.test");
	put(m, "250-mta\r\n250 STARTTLS\r\n");
	CHECK_STR(line_from(m), "STARTTLS");
	put(m, "220 2.0.0 Ready to start TLS\r\n");
	CHECK_STR(line_from(c), "220 2.0.0 Ready to start TLS");
	/* The handshake's bytes go through untouched. */
	put(c, "\x16\x03\x01 hello\n");
	CHECK_STR(line_from(m), "\x16\x03\x01 hello");
	close(c);
	close(m);
	teardown();
}

/* The MTA will not take the MAIL: the client hears the plain deferral
 * of a pass and the connection ends; the MTA's end is closed. */
static void
test_refused_in_replay(void)
{
	int c, m;

	setup(5000, 2000);
	c = client_at_rcpt("MAIL FROM:<a@a.test>\r\n");
	m = hand_off(false);
	put(m, "220 mta\r\n");
	CHECK_STR(line_from(m), "EHLO c.test");
	put(m, "250 mta\r\n");
	CHECK_STR(line_from(m), "MAIL FROM:<a@a.test>");
	put(m, "421 4.3.2 System shutting down\r\n");
	CHECK_STR(line_from(c), "451 4.7.1 <b@b.test>: Passed greylisting, "
	                        "please try again now");
	CHECK(closed(c));
	CHECK(closed(m));
	CHECK_INT(tarpit_get_counters(f.tp)->handoffs_failed, 1);
	CHECK_INT(tarpit_get_counters(f.tp)->handoffs_joined, 0);
	/* Held until the client's end (a gentle close), then gone. */
	close(c);
	spin(20);
	CHECK_INT(tarpit_get_counters(f.tp)->open, 0);
	/* A failure, not also a client that left. */
	CHECK_INT(tarpit_get_counters(f.tp)->handoffs_abandoned, 0);
	close(m);
	teardown();
}

/* An MTA that never answers: the replay's time runs out. */
static void
test_mta_silent(void)
{
	int c, m;

	setup(5000, 200);
	c = client_at_rcpt("MAIL FROM:<a@a.test>\r\n");
	m = hand_off(false);
	CHECK_STR(line_from(c), "451 4.7.1 <b@b.test>: Passed greylisting, "
	                        "please try again now");
	CHECK(closed(m));
	close(c);
	close(m);
	teardown();
}

/* The client leaves during the replay: the MTA's end goes too. */
static void
test_client_gone_in_replay(void)
{
	int c, m;

	setup(5000, 2000);
	c = client_at_rcpt("MAIL FROM:<a@a.test>\r\n");
	m = hand_off(false);
	close(c);
	spin(20);
	CHECK(closed(m));
	CHECK_INT(tarpit_get_counters(f.tp)->open, 0);
	/* Counted once, as the client's leaving: not joined, not failed. */
	CHECK_INT(tarpit_get_counters(f.tp)->handoffs_abandoned, 1);
	CHECK_INT(tarpit_get_counters(f.tp)->handoffs_joined, 0);
	CHECK_INT(tarpit_get_counters(f.tp)->handoffs_failed, 0);
	close(m);
	teardown();
}

/* A null sender's first recipient was answered 250 by the tarpit: a
 * later pass is not handed (the MTA would never hear of the first). */
static void
test_null_sender_not_handed(void)
{
	struct tarpit_verdict grey = {TARPIT_GREYLIST, 300, -1, false, 0, false};
	int c, m;

	setup(5000, 2000);
	c = client_at_rcpt("MAIL FROM:<>\r\n");
	CHECK_INT(tarpit_verdict(f.tp, f.session, f.question, &grey), 0);
	CHECK_STR(line_from(c), "250 2.1.5 Ok");
	f.kind = TARPIT_ASK_NONE;
	put(c, "RCPT TO:<c@b.test>\r\n");
	spin(20);
	CHECK_INT(f.kind, TARPIT_ASK_RCPT);
	m = hand_off(false);
	CHECK(closed(m));
	CHECK_STR(line_from(c), "250 2.1.5 Ok");
	put(c, "DATA\r\n");
	CHECK(strncmp(line_from(c), "451 ", 4) == 0);
	CHECK_INT(tarpit_get_counters(f.tp)->handoffs_joined, 0);
	CHECK_INT(tarpit_get_counters(f.tp)->handoffs_unjoined, 1);
	close(c);
	close(m);
	teardown();
}

/* A verdict that comes after its question was answered without it
 * answers nothing, even when the session asks again: its connection is
 * closed. */
static void
test_late_verdict_finds_nobody(void)
{
	struct tarpit_verdict v = {TARPIT_PASS, 0, -1, false, 0, false};
	uint32_t first;
	int c, sv[2];

	setup(100, 2000);
	c = client_at_rcpt("MAIL FROM:<a@a.test>\r\n");
	first = f.question;
	CHECK(strncmp(line_from(c), "451 4.7.1 <b@b.test>: Greylisted", 32) ==
	      0);
	f.kind = TARPIT_ASK_NONE;
	put(c, "RCPT TO:<c@b.test>\r\n");
	spin(20);
	CHECK_INT(f.kind, TARPIT_ASK_RCPT);
	CHECK(f.question != first);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0);
	v.handoff_fd = sv[0];
	CHECK_INT(tarpit_verdict(f.tp, f.session, first, &v), -ENOENT);
	CHECK(closed(sv[1]));
	CHECK_INT(tarpit_get_counters(f.tp)->handoffs_unjoined, 1);
	close(sv[1]);
	close(c);
	teardown();
}

/* The client left while greygated was opening its hand-off: the MTA's
 * connection finds nobody, is closed, and is counted as the client's
 * leaving (every hand-off begun ends counted once). */
static void
test_client_gone_before_handoff(void)
{
	struct tarpit_verdict v = {TARPIT_PASS, 0, -1, false, 0, false};
	int c, sv[2];

	setup(5000, 2000);
	c = client_at_rcpt("MAIL FROM:<a@a.test>\r\n");
	close(c);
	for (int t = 0; t < 1000 && tarpit_get_counters(f.tp)->open; t++)
		loop_run_once(f.loop, 1);
	CHECK_INT(tarpit_get_counters(f.tp)->open, 0);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0);
	v.handoff_fd = sv[0];
	CHECK_INT(tarpit_verdict(f.tp, f.session, f.question, &v), -ENOENT);
	CHECK(closed(sv[1]));
	CHECK_INT(tarpit_get_counters(f.tp)->handoffs_abandoned, 1);
	CHECK_INT(tarpit_get_counters(f.tp)->handoffs_unjoined, 0);
	close(sv[1]);
	teardown();
}

/* What came on fd until its other side closed cleanly ("" if nothing;
 * NULL if it was reset, sent more than 1 KiB, or did not close within
 * 3 s). */
static const char *
all_until_closed(int fd)
{
	static char got[1024];
	size_t n = 0;

	for (int t = 0; t < 3000 && n < sizeof(got) - 1; t++) {
		ssize_t r;

		loop_run_once(f.loop, 1);
		r = recv(fd, got + n, sizeof(got) - 1 - n, MSG_DONTWAIT);
		if (r > 0)
			n += (size_t)r;
		if (r == 0) {
			got[n] = 0;
			return got;
		}
		if (r < 0 && errno != EAGAIN)
			return NULL;
	}
	return NULL;
}

/* A STARTTLS whose hand-off fails gets no answer at all: any reply but
 * the MTA's 220 would let the client go on in the clear (Postfix, at
 * smtp_tls_security_level = may, sends MAIL and RCPT in plain text after
 * a 454); an unanswered STARTTLS is a lost connection, and the client
 * comes back. */
static void
test_starttls_handoff_fails_unanswered(void)
{
	int c, m;

	setup(5000, 2000);
	c = client_at_starttls();
	m = hand_off(false);
	put(m, "421 4.3.2 going away\r\n");
	CHECK_STR(all_until_closed(c), "");
	CHECK_INT(tarpit_get_counters(f.tp)->handoffs_failed, 1);
	close(c);
	close(m);
	teardown();
}

/* Did the other side of fd close cleanly (an end, never a reset), all
 * it sent read? */
static bool
closed_cleanly(int fd)
{
	return all_until_closed(fd) != NULL;
}

/* The MTA accepts the message and goes away at once, while the client,
 * pipelining, still sends: the MTA's 250 reaches the client whole, and
 * the connection ends cleanly, never with a reset that could cost the
 * client that reply (it would send the message again). Before, the
 * failed write toward the MTA closed the session at once, the 250 still
 * in the tarpit's buffer. */
static void
test_mta_gone_after_data(void)
{
	int c, m;

	setup(5000, 2000);
	c = client_at_rcpt("MAIL FROM:<a@a.test>\r\n");
	m = hand_off(true);
	mta_replays(m, true, "MAIL FROM:<a@a.test>");
	put(m, "250 ok\r\n");
	CHECK_STR(line_from(c), "250 ok");
	put(c, "DATA\r\n");
	CHECK_STR(line_from(m), "DATA");
	put(m, "354 go\r\n");
	CHECK_STR(line_from(c), "354 go");
	put(c, "Subject: x\r\n\r\nbody\r\n.\r\n");
	CHECK_STR(line_from(m), "Subject: x");
	CHECK_STR(line_from(m), "");
	CHECK_STR(line_from(m), "body");
	CHECK_STR(line_from(m), ".");
	/* The client's next commands cross the MTA's 250 (they are with
	 * the tarpit first), and the MTA is gone. */
	put(c, "MAIL FROM:<a@a.test>\r\nRCPT TO:<b@b.test>\r\nDATA\r\n");
	usleep(100 * 1000);
	put(m, "250 2.0.0 Ok: queued as 4711\r\n");
	close(m);
	CHECK_STR(line_from(c), "250 2.0.0 Ok: queued as 4711");
	CHECK(closed_cleanly(c));
	close(c);
	spin(50);
	CHECK_INT(tarpit_get_counters(f.tp)->joined_open, 0);
	CHECK_INT(tarpit_get_counters(f.tp)->open, 0);
	teardown();
}

/* A replay the MTA refuses while the client pipelines after its RCPT:
 * the client reads the plain deferral, then a clean end. */
static void
test_refused_replay_closes_cleanly(void)
{
	int c, m;

	setup(5000, 2000);
	c = client_after_ehlo();
	put(c, "MAIL FROM:<a@a.test>\r\nRCPT TO:<b@b.test>\r\nDATA\r\n");
	CHECK_STR(line_from(c), "250 2.1.0 Ok");
	spin(20);
	CHECK_INT(f.kind, TARPIT_ASK_RCPT);
	m = hand_off(true);
	CHECK_STR(line_from(m), "EHLO c.test");
	/* More than the tarpit reads while it replays (a line's worth). */
	for (int i = 0; i < 40; i++)
		put(c, "a line of the message, pipelined after DATA\r\n");
	usleep(100 * 1000);
	put(m, "421 mta going away\r\n");
	CHECK(strncmp(line_from(c), "451 4.7.1 <b@b.test>: Passed", 28) == 0);
	CHECK(closed_cleanly(c));
	close(c);
	close(m);
	teardown();
}

/* A joined client that half-closes and then resets, the MTA silent:
 * the join drops the client and waits for the MTA's end without a spin
 * (before, the hang-up the kernel reports whatever one watches for woke
 * the loop at once, every turn, until the MTA closed: a core at 100%). */
static void
test_client_reset_after_half_close(void)
{
	struct linger reset = {1, 0};
	struct timespec t0, t;
	long turns = 0;
	int c, m;

	setup(5000, 2000);
	c = client_at_rcpt("MAIL FROM:<a@a.test>\r\n");
	m = hand_off(true);
	mta_replays(m, true, "MAIL FROM:<a@a.test>");
	put(m, "250 ok\r\n");
	CHECK_STR(line_from(c), "250 ok");
	shutdown(c, SHUT_WR);
	CHECK(closed(m)); /* the half-close passed on */
	CHECK(setsockopt(c, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset)) ==
	      0);
	close(c);
	/* 300 ms of the loop: each turn waits for something to happen (up
	 * to 1 ms), unless something is always ready. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		loop_run_once(f.loop, 1);
		turns++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 +
			 (t.tv_nsec - t0.tv_nsec) / 1000000 <
		 300);
	CHECK(turns < 1000);
	CHECK_INT(tarpit_get_counters(f.tp)->joined_open, 1);
	close(m);
	spin(50);
	CHECK_INT(tarpit_get_counters(f.tp)->joined_open, 0);
	teardown();
}

int
main(void)
{
	RUN(test_replay_then_joined);
	RUN(test_joined_session_told);
	RUN(test_bulk_both_ways);
	RUN(test_pipelined_after_rcpt);
	RUN(test_starttls_handed);
	RUN(test_starttls_handoff_fails_unanswered);
	RUN(test_refused_in_replay);
	RUN(test_mta_silent);
	RUN(test_client_gone_in_replay);
	RUN(test_client_gone_before_handoff);
	RUN(test_null_sender_not_handed);
	RUN(test_late_verdict_finds_nobody);
	RUN(test_refused_replay_closes_cleanly);
	RUN(test_mta_gone_after_data);
	RUN(test_client_reset_after_half_close);
	RUN(test_mta_connection_is_the_tarpits);
	return 0;
}
