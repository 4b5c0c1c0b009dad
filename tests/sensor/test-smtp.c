// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the SMTP conversation parser on hand-written conversations:
 * replies matched in order under PIPELINING, multi-line replies, several
 * transactions, DATA bodies and BDAT chunks skipped, STARTTLS, AUTH never
 * reported in clear, one direction only, and bad input survived. */
#include "check.h"
#include "sensor.h"

static char log_buf[8192];
static size_t log_len;
static struct sensor_counters ctr;

static void
on_event(enum sensor_event_type type, int reply, const char *helo,
	 const char *from, const char *to, void *ctx)
{
	static const char *const names[] = {"", "open", "helo", "rcpt",
					    "starttls", "auth", "close"};

	log_len += (size_t)snprintf(log_buf + log_len, sizeof(log_buf) - log_len,
				    "%s %d %s <%s> <%s>\n", names[type], reply,
				    helo, from, to);
}

static struct smtp_conv *
start(bool from_start)
{
	log_len = 0;
	log_buf[0] = 0;
	memset(&ctr, 0, sizeof(ctr));
	return smtp_conv_new(&ctr, from_start, on_event, NULL);
}

static void
cl(struct smtp_conv *c, const char *s)
{
	smtp_conv_client(c, (const uint8_t *)s, strlen(s));
}

static void
cl_bytes(struct smtp_conv *c, const char *s, size_t len)
{
	smtp_conv_client(c, (const uint8_t *)s, len);
}

static void
sv(struct smtp_conv *c, const char *s)
{
	smtp_conv_server(c, (const uint8_t *)s, strlen(s));
}

static void
test_pipelined_session_with_multiline_replies(void)
{
	struct smtp_conv *c = start(true);

	sv(c, "220 mx.test ESMTP\r\n");
	cl(c, "EHLO client.test\r\n");
	sv(c, "250-mx.test\r\n250-PIPELINING\r\n250 8BITMIME\r\n");
	/* One segment: MAIL, two RCPTs and DATA pipelined. */
	cl(c, "MAIL FROM:<a@a.test> SIZE=10\r\nRCPT TO:<b@b.test>\r\n"
	      "RCPT TO:<c@b.test> NOTIFY=NEVER\r\nDATA\r\n");
	/* Replies split across segments at odd places. */
	sv(c, "250 2.1.0 Ok\r\n250 2.1.5 Ok\r\n55");
	sv(c, "0-5.1.1 no such\r\n550 5.1.1 user\r\n354 go ahead\r\n");
	/* A body with a dot-stuffed line and things that look like
	 * commands; the end split across segments. */
	cl(c, "Subject: x\r\n\r\nRCPT TO:<evil@x.test>\r\n..leading dot\r\n"
	      "\r");
	cl(c, "\n.");
	cl(c, "\r\nMAIL FROM:<>\r\nRCPT TO:<d@b.test>\r\nQUIT\r\n");
	sv(c, "250 queued\r\n250 Ok\r\n451 4.7.1 later\r\n221 Bye\r\n");
	CHECK_STR(log_buf, "helo 250 client.test <> <>\n"
			   "rcpt 250 client.test <a@a.test> <b@b.test>\n"
			   "rcpt 550 client.test <a@a.test> <c@b.test>\n"
			   "rcpt 451 client.test <> <d@b.test>\n");
	CHECK_INT(ctr.garbage, 0);
	smtp_conv_free(c);
}

static void
test_bdat_chunks_skipped(void)
{
	struct smtp_conv *c = start(true);

	sv(c, "220 mx\r\n");
	cl(c, "EHLO x\r\nMAIL FROM:<a@a.test>\r\nRCPT TO:<b@b.test>\r\n"
	      "BDAT 21\r\nRCPT TO:<no@x.test>\r\nBDAT 0 LAST\r\n");
	cl(c, "BDAT -5\r\nBDAT 99999999999999999999999\r\nRCPT TO:<e@b.test>\r\n");
	sv(c, "250 mx\r\n250 ok\r\n250 ok\r\n250 chunk\r\n250 done\r\n"
	      "501 bad\r\n501 bad\r\n250 ok\r\n");
	CHECK_STR(log_buf, "helo 250 x <> <>\n"
			   "rcpt 250 x <a@a.test> <b@b.test>\n"
			   "rcpt 250 x <a@a.test> <e@b.test>\n");
	CHECK_INT(ctr.garbage, 2);
	smtp_conv_free(c);
}

/* A proxy's connection to the MTA (greygate's own hand-off): what it
 * relays is the client's, already seen where the client connected. */
static void
test_proxied_flows_not_followed(void)
{
	static const char v2[] = "\r\n\r\n\0\r\nQUIT\n\x21\x11\0\x0c"
				 "\xcb\0\x71\x0a\xc6\x33\x64\x01\x30\x39\0\x19";
	struct smtp_conv *c = start(true);

	sv(c, "220 mx\r\n");
	cl(c, "EHLO gw\r\n");
	sv(c, "250-mx\r\n250 XCLIENT ADDR NAME HELO\r\n");
	cl(c, "XCLIENT ADDR=203.0.113.10 HELO=x\r\n");
	sv(c, "220 mx\r\n");
	cl(c, "EHLO x\r\nMAIL FROM:<a@a.test>\r\nRCPT TO:<b@b.test>\r\n");
	sv(c, "250 mx\r\n250 ok\r\n250 ok\r\n");
	CHECK(smtp_conv_is_done(c));
	CHECK_STR(log_buf, "helo 250 gw <> <>\n");
	CHECK_INT(ctr.proxied_flows, 1);
	smtp_conv_free(c);

	c = start(true);
	cl_bytes(c, v2, sizeof(v2) - 1);
	sv(c, "220 mx\r\n");
	cl(c, "EHLO x\r\nMAIL FROM:<a@a.test>\r\nRCPT TO:<b@b.test>\r\n");
	sv(c, "250 mx\r\n250 ok\r\n250 ok\r\n");
	CHECK(smtp_conv_is_done(c));
	CHECK_STR(log_buf, "");
	CHECK_INT(ctr.proxied_flows, 1);
	smtp_conv_free(c);

	c = start(true);
	cl(c, "PROXY TCP4 203.0.113.10 198.51.100.1 12345 25\r\n");
	cl(c, "EHLO x\r\nMAIL FROM:<a@a.test>\r\nRCPT TO:<b@b.test>\r\n");
	sv(c, "220 mx\r\n250 mx\r\n250 ok\r\n250 ok\r\n");
	CHECK_STR(log_buf, "");
	CHECK_INT(ctr.proxied_flows, 1);
	smtp_conv_free(c);
}

static void
test_starttls_ends_visibility(void)
{
	struct smtp_conv *c = start(true);

	sv(c, "220 mx\r\n");
	cl(c, "EHLO x\r\nSTARTTLS\r\n");
	sv(c, "250 mx\r\n220 2.0.0 Ready\r\n");
	CHECK(smtp_conv_is_done(c));
	cl(c, "\x16\x03\x01 binary handshake MAIL FROM:<a@a.test>\r\n");
	CHECK_STR(log_buf, "helo 250 x <> <>\nstarttls 220 x <> <>\n");
	CHECK_INT(ctr.tls_flows, 1);
	smtp_conv_free(c);

	/* The tarpit's 454: the dialogue goes on in plain text. */
	c = start(true);
	sv(c, "220 mx\r\n");
	cl(c, "EHLO x\r\nSTARTTLS\r\n");
	sv(c, "250 mx\r\n454 4.7.0 TLS not available\r\n");
	cl(c, "MAIL FROM:<a@a.test>\r\nRCPT TO:<b@b.test>\r\n");
	sv(c, "250 ok\r\n451 later\r\n");
	CHECK_STR(log_buf, "helo 250 x <> <>\nstarttls 454 x <> <>\n"
			   "rcpt 451 x <a@a.test> <b@b.test>\n");
	smtp_conv_free(c);
}

static void
test_auth_exchange_not_parsed(void)
{
	struct smtp_conv *c = start(true);

	sv(c, "220 mx\r\n");
	cl(c, "EHLO x\r\nAUTH LOGIN\r\n");
	sv(c, "250 mx\r\n334 VXNlcm5hbWU6\r\n");
	cl(c, "RCPT TO:<looks@like.cmd>\r\n");
	sv(c, "334 UGFzc3dvcmQ6\r\n");
	cl(c, "c2VjcmV0\r\n");
	sv(c, "235 2.7.0 Authentication successful\r\n");
	cl(c, "MAIL FROM:<a@a.test>\r\nRCPT TO:<b@b.test>\r\n");
	sv(c, "250 ok\r\n250 ok\r\n");
	CHECK_STR(log_buf, "helo 250 x <> <>\nauth 235 x <> <>\n"
			   "rcpt 250 x <a@a.test> <b@b.test>\n");
	smtp_conv_free(c);
}

static void
test_one_direction_and_mid_session(void)
{
	/* Only the client's side: triplets come out, reply 0, at the end. */
	struct smtp_conv *c = start(true);

	cl(c, "EHLO x\r\nMAIL FROM:<a@a.test>\r\nRCPT TO:<b@b.test>\r\n"
	      "DATA\r\nbody\r\n.\r\nMAIL FROM:<c@a.test>\r\n"
	      "RCPT TO:<d@b.test>\r\nQUIT\r\n");
	CHECK_STR(log_buf, "");
	smtp_conv_free(c);
	CHECK_STR(log_buf, "rcpt 0 x <a@a.test> <b@b.test>\n"
			   "rcpt 0 x <c@a.test> <d@b.test>\n");

	/* Seen from mid-session (no greeting): replies still line up. */
	c = start(false);
	cl(c, "RCPT TO:<b@b.test>\r\n");
	sv(c, "451 later\r\n");
	CHECK_STR(log_buf, "rcpt 451  <> <b@b.test>\n");
	smtp_conv_free(c);
}

static void
test_bad_input_survived(void)
{
	struct smtp_conv *c = start(true);
	char big[5000];

	memset(big, 'A', sizeof(big));
	sv(c, "220 mx\r\n");
	smtp_conv_client(c, (const uint8_t *)big, sizeof(big));
	smtp_conv_client(c, (const uint8_t *)"\r\nHE\0LO\r\n", 9);
	cl(c, "EHLO x\nRCPT TO:<no-mail@x>\r\n");
	cl(c, "MAIL FROM:<a@a.test\r\nMAIL FROM:<a@a.test>\r\n"
	      "RCPT TO:<b@b.test>\r\n");
	sv(c, "500 too long\r\n502 what\r\n250 x\r\n503 need mail\r\n"
	      "garbage reply\r\n501 bad\r\n250 ok\r\n451 later\r\n");
	CHECK_INT(ctr.long_lines, 1);
	CHECK_INT(ctr.nul_bytes, 1);
	CHECK_INT(ctr.bare_lf, 1);
	CHECK(ctr.garbage >= 3);
	/* RCPT before MAIL still reports its (empty) sender. */
	CHECK_STR(log_buf, "helo 250 x <> <>\n"
			   "rcpt 503 x <> <no-mail@x>\n"
			   "rcpt 451 x <a@a.test> <b@b.test>\n");
	/* A gap on the server side: pending are reported unanswered. */
	cl(c, "RCPT TO:<c@b.test>\r\n");
	smtp_conv_gap(c, false);
	sv(c, "250 ok\r\n");
	CHECK(strstr(log_buf, "rcpt 0 x <a@a.test> <c@b.test>\n"));
	smtp_conv_free(c);
}

/* The longest line as the tarpit takes it (smtp_line.h): up to
 * SMTP_LINE_MAX bytes without its CRLF or bare LF, whole or split across
 * segments; one byte more is too long, also with a bare LF (which leaves
 * the CR's room free). */
static void
test_line_limit_as_the_tarpit(void)
{
	static const struct {
		size_t len;
		const char *end;
		bool kept;
	} rows[] = {
	        {SMTP_LINE_MAX, "\r\n", true},
	        {SMTP_LINE_MAX, "\n", true},
	        {SMTP_LINE_MAX + 1, "\n", false},
	        {SMTP_LINE_MAX + 1, "\r\n", false},
	        {1012, "\r\n", true}, /* RFC 3461's RCPT with ORCPT */
	};
	static char line[SMTP_LINE_MAX + 8];

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++)
		for (size_t split = 0; split < 3; split++) {
			struct smtp_conv *c = start(true);
			size_t n = rows[r].len, total;
			size_t cut = split == 0 ? 0 : split == 1 ? n / 2 : n;

			memset(line, 'x', n);
			memcpy(line, "RCPT TO:<b@b.test> X=", 21);
			total = n + (size_t)snprintf(line + n, 3, "%s",
			                             rows[r].end);
			sv(c, "220 mx\r\n");
			cl(c, "EHLO c\r\nMAIL FROM:<a@a.test>\r\n");
			sv(c, "250 mx\r\n250 ok\r\n");
			/* whole, or cut in two where a segment ends */
			if (cut)
				cl_bytes(c, line, cut);
			cl_bytes(c, line + cut, total - cut);
			sv(c, "451 later\r\n");
			CHECK_INT(strstr(log_buf, "rcpt 451 c <a@a.test> "
			                          "<b@b.test>") != NULL,
			          rows[r].kept);
			CHECK_INT(ctr.long_lines, !rows[r].kept);
			smtp_conv_free(c);
		}
}

/* Every line split at every byte: the line held across segments (and
 * only then) gives the same events as whole lines. */
static void
test_byte_at_a_time(void)
{
	static const char *const client =
		"EHLO slow.test\r\nMAIL FROM:<a@a.test>\r\nRCPT TO:<b@b.test>\r\n"
		"QUIT\r\n";
	static const char *const server[] = {
		"220 mx.test ESMTP\r\n", "250-mx.test\r\n250 PIPELINING\r\n",
		"250 Ok\r\n", "451 4.7.1 later\r\n", "221 Bye\r\n"};
	struct smtp_conv *c = start(true);
	size_t ci = 0;

	for (size_t r = 0; r < sizeof(server) / sizeof(*server); r++) {
		for (const char *p = server[r]; *p; p++)
			smtp_conv_server(c, (const uint8_t *)p, 1);
		/* Then the client's next line, a byte at a time. */
		while (client[ci]) {
			smtp_conv_client(c, (const uint8_t *)&client[ci], 1);
			if (client[ci++] == '\n')
				break;
		}
	}
	CHECK_STR(log_buf, "helo 250 slow.test <> <>\n"
			   "rcpt 451 slow.test <a@a.test> <b@b.test>\n");
	CHECK_INT(ctr.garbage, 0);
	CHECK_INT(ctr.bare_lf, 0);
	smtp_conv_free(c);
}

/* The end of a body is found whatever the segments: a body full of dots
 * (mid-line, dot-stuffed, a lone "." that is not alone on its line,
 * ".\r" not followed by LF), cut into two segments at every position,
 * and the bare-LF end ".\n" too; the transaction after it is read. */
static void
test_body_end_found_at_every_split(void)
{
	static const char *const bodies[] = {
		("a.b. c.\r\n..stuffed\r\n.x\r\n.\rnot\r\nend.\r\n"
		 "\r\n.\r\nMAIL FROM:<f@a.test>\r\nRCPT TO:<g@b.test>\r\n"),
		"x\n.y\n\n.\nMAIL FROM:<f@a.test>\nRCPT TO:<g@b.test>\n",
		".\r\nMAIL FROM:<f@a.test>\r\nRCPT TO:<g@b.test>\r\n",
	};

	for (size_t b = 0; b < sizeof(bodies) / sizeof(*bodies); b++) {
		size_t len = strlen(bodies[b]);

		for (size_t cut = 0; cut <= len; cut++) {
			struct smtp_conv *c = start(true);

			sv(c, "220 mx\r\n");
			cl(c, "HELO c\r\nMAIL FROM:<a@a.test>\r\n"
			      "RCPT TO:<b@b.test>\r\nDATA\r\n");
			sv(c, "250 hi\r\n250 ok\r\n250 ok\r\n354 go\r\n");
			smtp_conv_client(c, (const uint8_t *)bodies[b], cut);
			smtp_conv_client(c, (const uint8_t *)bodies[b] + cut,
					 len - cut);
			sv(c, "250 queued\r\n250 ok\r\n451 later\r\n");
			if (strcmp(log_buf, "helo 250 c <> <>\n"
					    "rcpt 250 c <a@a.test> <b@b.test>\n"
					    "rcpt 451 c <f@a.test> <g@b.test>\n")) {
				fprintf(stderr, "body %zu cut at %zu:\n%s", b,
					cut, log_buf);
				CHECK(!"the body's end was found");
			}
			smtp_conv_free(c);
		}
	}
}

int
main(void)
{
	RUN(test_pipelined_session_with_multiline_replies);
	RUN(test_bdat_chunks_skipped);
	RUN(test_starttls_ends_visibility);
	RUN(test_proxied_flows_not_followed);
	RUN(test_auth_exchange_not_parsed);
	RUN(test_one_direction_and_mid_session);
	RUN(test_bad_input_survived);
	RUN(test_byte_at_a_time);
	RUN(test_line_limit_as_the_tarpit);
	RUN(test_body_end_found_at_every_split);
	return 0;
}
