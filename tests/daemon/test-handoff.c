// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of what greygated tells the MTA about a client it hands over:
 * the PROXY v2 header, byte for byte as the spec lays it out (v4 and v6),
 * the xtext of XCLIENT's values, and the MTA's replies read whole; and
 * mode = auto's probe of the MTA, on real sockets over loopback. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config_parts.h"
#include "check.h"
#include "config.h"
#include "handoff.h"
#include "loop.h"
#include "sessions.h"
#include "smtp_reply.h"
#include "timesrc.h"

static void
test_proxy_v2_ipv4(void)
{
	static const uint8_t want[28] = {
	        0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d,
	        0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, /* the signature */
	        0x21,                               /* version 2, PROXY */
	        0x11,                               /* TCP over IPv4 */
	        0x00, 0x0c,                         /* 12 bytes follow */
	        203,  0,    113,  10,               /* source */
	        198,  51,   100,  1,                /* destination */
	        0x30, 0x39,                         /* 12345 */
	        0x00, 0x19                          /* 25 */
	};
	struct sockaddr_in src = {.sin_family = AF_INET,
	                          .sin_port = htons(12345)};
	struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons(25)};
	uint8_t out[HANDOFF_PROXY_MAX];

	inet_pton(AF_INET, "203.0.113.10", &src.sin_addr);
	inet_pton(AF_INET, "198.51.100.1", &dst.sin_addr);
	CHECK_INT(handoff_proxy_header((struct sockaddr *)&src,
	                               (struct sockaddr *)&dst, out),
	          sizeof(want));
	CHECK(memcmp(out, want, sizeof(want)) == 0);
}

static void
test_proxy_v2_ipv6(void)
{
	struct sockaddr_in6 src = {.sin6_family = AF_INET6,
	                           .sin6_port = htons(40000)};
	struct sockaddr_in6 dst = {.sin6_family = AF_INET6,
	                           .sin6_port = htons(25)};
	struct sockaddr_in v4 = {.sin_family = AF_INET};
	uint8_t out[HANDOFF_PROXY_MAX];

	inet_pton(AF_INET6, "2001:db8:1::10", &src.sin6_addr);
	inet_pton(AF_INET6, "2001:db8:1::1", &dst.sin6_addr);
	CHECK_INT(handoff_proxy_header((struct sockaddr *)&src,
	                               (struct sockaddr *)&dst, out),
	          52);
	CHECK_INT(out[12], 0x21);
	CHECK_INT(out[13], 0x21); /* TCP over IPv6 */
	CHECK_INT(out[14] << 8 | out[15], 36);
	CHECK(memcmp(out + 16, &src.sin6_addr, 16) == 0);
	CHECK(memcmp(out + 32, &dst.sin6_addr, 16) == 0);
	CHECK_INT(out[48] << 8 | out[49], 40000);
	CHECK_INT(out[50] << 8 | out[51], 25);
	/* One family or none. */
	CHECK_INT(handoff_proxy_header((struct sockaddr *)&src,
	                               (struct sockaddr *)&v4, out),
	          0);
}

static void
test_xtext(void)
{
	char out[64];

	CHECK_INT(handoff_xtext("mail.example.com", out, sizeof(out)), 16);
	CHECK_STR(out, "mail.example.com");
	CHECK_INT(handoff_xtext("a+b=c d\x01\xc3\xa9", out, sizeof(out)), 22);
	CHECK_STR(out, "a+2Bb+3Dc+20d+01+C3+A9");
	CHECK_INT(handoff_xtext("", out, sizeof(out)), 0);
	CHECK_STR(out, "");
	/* Exactly full (with its NUL), and one over. */
	CHECK_INT(handoff_xtext("abc", out, 4), 3);
	CHECK_INT(handoff_xtext("abcd", out, 4), -1);
	CHECK_INT(handoff_xtext("ab ", out, 5), -1);
}

/* The MTA's replies as the hand-off reads them. */
static void
test_reply_whole(void)
{
	static const char multi[] = "250-mx.test\r\n250-XCLIENT ADDR\r\n"
				    "250 8BITMIME\r\n220 next";
	int code = -1;

	CHECK_INT(smtp_reply_whole(multi, strlen(multi), &code),
		  strlen(multi) - strlen("220 next"));
	CHECK_INT(code, 250);
	CHECK_INT(smtp_reply_whole(multi, 14, &code), 0);
	CHECK_INT(smtp_reply_whole("220\r\n", 5, &code), 5);
	CHECK_INT(code, 220);
	CHECK_INT(smtp_reply_whole("421 bye\n", 8, &code), 8);
	CHECK_INT(code, 421);
	/* A line that is no reply ends it, code 0: the caller's "not 2xx",
	 * at once (it waited for the timeout on "25" before) */
	CHECK_INT(smtp_reply_whole("\r\n\r\nQUIT\n", 9, &code), 2);
	CHECK_INT(code, 0);
	CHECK_INT(smtp_reply_whole("25\r\n", 4, &code), 4);
	CHECK_INT(code, 0);
	CHECK_INT(smtp_reply_whole("250-a\r\n250x\r\n", 13, &code), 13);
	CHECK_INT(code, 0);
	CHECK_INT(smtp_reply_whole("250-a\r\n25", 9, &code), 0);
}

/* The tarpit's EHLO lists what the MTA offers too, SIZE with its limit. */
static void
test_common_caps(void)
{
	static const char postfix[] =
		"250-mx.test.example\r\n250-PIPELINING\r\n250-SIZE 10240000\r\n"
		"250-VRFY\r\n250-ETRN\r\n250-STARTTLS\r\n"
		"250-ENHANCEDSTATUSCODES\r\n250-8BITMIME\r\n250-DSN\r\n"
		"250-SMTPUTF8\r\n250 CHUNKING\r\n";
	static const char bare[] = "250-sizeless.test\r\n250-size\r\n"
				   "250 PIPELINING-X\r\n";
	static const char mine[] =
		"PIPELINING, SIZE 52428800, 8BITMIME, ENHANCEDSTATUSCODES";
	char out[256];
	bool tls;

	handoff_common_caps(mine, postfix, strlen(postfix), out, sizeof(out),
			    &tls);
	CHECK_STR(out, "PIPELINING, SIZE 10240000, 8BITMIME, "
		       "ENHANCEDSTATUSCODES");
	CHECK(tls);
	/* A keyword is a whole word (PIPELINING-X is not PIPELINING), in
	 * any case; the greeting's host is not a keyword. */
	handoff_common_caps("PIPELINING, SIZE 52428800, SIZELESS.TEST",
			    bare, strlen(bare), out, sizeof(out), &tls);
	CHECK_STR(out, "size");
	CHECK(!tls);
	handoff_common_caps(mine, "250 mx\r\n", 8, out, sizeof(out), &tls);
	CHECK_STR(out, "");
	/* Cut at a whole keyword when out is small. */
	handoff_common_caps(mine, postfix, strlen(postfix), out, 16, &tls);
	CHECK_STR(out, "PIPELINING");
}

static int caps_told;

static void
count_caps(void *ctx)
{
	caps_told++;
}

static void
no_verdict(void *ctx, uint64_t session, uint32_t question,
	   const struct tarpit_verdict *v)
{
}

static void
no_handed(void *ctx, uint64_t session)
{
}

/* A session's ends, going to addr:port (client 127.0.0.9). */
static struct session_ends
ends_to(const char *addr, uint16_t port)
{
	struct session_ends e;
	struct sockaddr_in *dst = (struct sockaddr_in *)&e.dst;
	struct sockaddr_in *client = (struct sockaddr_in *)&e.client;

	memset(&e, 0, sizeof(e));
	dst->sin_family = client->sin_family = AF_INET;
	dst->sin_port = htons(port);
	inet_pton(AF_INET, addr, &dst->sin_addr);
	inet_pton(AF_INET, "127.0.0.9", &client->sin_addr);
	return e;
}

/* text, whole, on fd. */
static bool
put_text(int fd, const char *text)
{
	size_t n = strlen(text);

	return send(fd, text, n, 0) == (ssize_t)n;
}

/* A line from fd, the loop turning meanwhile (the probe's side). */
static void
read_line_turning(struct loop *loop, int fd, char *line, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		ssize_t r;

		loop_run_once(loop, 20);
		r = recv(fd, line + n, 1, MSG_DONTWAIT);
		if (r == 1 && line[n] == '\n')
			break;
		if (r == 1)
			n++;
	}
	line[n] = 0;
}

/* auto without an address: nothing is asked until a client's
 * destination is known, and only one of this host's; a pass is not
 * handed over until the MTA there answered its EHLO; a mode chosen is
 * always ready. */
static void
test_auto_probe(void)
{
	static struct config cfg;
	struct handoff_settings part;
	struct loop *loop = loop_new(timesrc_system());
	struct handoff_state *hs;
	struct sockaddr_in at = {.sin_family = AF_INET};
	socklen_t len = sizeof(at);
	struct session_ends e;
	char text[200], line[256], want[64];
	int mta = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), fd;
	uint16_t port;

	CHECK(loop && mta >= 0);
	at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK_INT(bind(mta, (struct sockaddr *)&at, sizeof(at)), 0);
	CHECK_INT(listen(mta, 4), 0);
	CHECK_INT(getsockname(mta, (struct sockaddr *)&at, &len), 0);
	port = ntohs(at.sin_port);
	config_defaults(&cfg);
	cfg.nft.smtp_port = port;
	cfg.handoff.auto_on = true;
	config_derive(&cfg);
	CHECK_INT(cfg.handoff.mode, HANDOFF_TRANSPARENT);
	config_handoff_part(&cfg, &part);
	hs = handoff_state_new(loop, &part);
	CHECK(hs);
	handoff_set_child(hs, &(struct handoff_child){no_verdict, count_caps,
						       no_handed, NULL});
	handoff_probe_start(hs);
	CHECK(!handoff_ready(hs));
	handoff_auto_text(hs, text, sizeof(text));
	CHECK(strstr(text, "waiting for a client"));
	/* another host's address, another port: not asked */
	e = ends_to("192.0.2.1", port);
	handoff_learn_destination(hs, &e);
	e = ends_to("127.0.0.1", 2525);
	handoff_learn_destination(hs, &e);
	handoff_auto_text(hs, text, sizeof(text));
	CHECK(strstr(text, "waiting for a client"));
	/* this host's, smtp_port: asked at once */
	e = ends_to("127.0.0.1", port);
	handoff_learn_destination(hs, &e);
	for (int i = 0; i < 50 && (fd = accept(mta, NULL, NULL)) < 0; i++)
		loop_run_once(loop, 20);
	CHECK(fd >= 0);
	handoff_auto_text(hs, text, sizeof(text));
	snprintf(want, sizeof(want), "the MTA at 127.0.0.1:%u", port);
	CHECK(strstr(text, want) && strstr(text, "does not answer yet"));
	CHECK(!handoff_ready(hs));
	CHECK(put_text(fd, "220 mx ESMTP\r\n"));
	read_line_turning(loop, fd, line, sizeof(line));
	CHECK(!strncmp(line, "EHLO ", 5));
	CHECK(put_text(fd, "250-mx\r\n250 STARTTLS\r\n"));
	read_line_turning(loop, fd, line, sizeof(line));
	CHECK_STR(line, "QUIT\r");
	CHECK(handoff_ready(hs));
	CHECK_INT(caps_told, 1);
	handoff_auto_text(hs, text, sizeof(text));
	CHECK(strstr(text, want) && strstr(text, "answers") &&
	      !strstr(text, "not"));
	close(fd);
	handoff_abort_all(hs);
	handoff_state_free(hs);
	/* a mode chosen: ready, whatever the probe says */
	cfg.handoff.setting = HANDOFF_PROXY_V2;
	config_derive(&cfg);
	config_handoff_part(&cfg, &part);
	hs = handoff_state_new(loop, &part);
	CHECK(handoff_ready(hs));
	handoff_state_free(hs);
	close(mta);
	loop_free(loop);
}

int
main(void)
{
	RUN(test_proxy_v2_ipv4);
	RUN(test_proxy_v2_ipv6);
	RUN(test_xtext);
	RUN(test_reply_whole);
	RUN(test_common_caps);
	RUN(test_auto_probe);
	return 0;
}
