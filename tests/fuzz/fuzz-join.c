// SPDX-License-Identifier: GPL-2.0-or-later
/* libFuzzer target for the hand-off's replay and join (tarpit/join.c) on
 * the real server and real sockets: a client over loopback reaches a
 * question (RCPT, or STARTTLS as the first byte picks) and is handed to
 * an "MTA", the fuzzer's end of a socket pair, joined or gated (as for an
 * exempt recipient: tarpit/gate.c, each later RCPT asked about and
 * answered here, passed and greylisted in turn). The rest of the input is
 * cut into chunks, each sent by the MTA or the client (its first byte
 * picks which, and whether that side then closes), with the loop run
 * between; whatever the MTA answers and whatever the client sends, the
 * server must not crash, and once both ends are closed nothing may stay
 * open. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "loop.h"
#include "tarpit.h"

static struct loop *loop;
static struct tarpit *tp;
static struct tarpit_config cfg;
static uint16_t port;
static uint64_t session;
static uint32_t question;
static int asked;

static int
on_ask(const struct tarpit_attempt *a, void *ctx)
{
	session = a->session;
	question = a->question;
	asked = 1;
	return 0;
}

/* A joined session's later RCPTs: read (the parser runs over the joined
 * bytes), nothing to do with them. */
static void
on_joined(const struct sensor_event *ev, void *ctx)
{
	(void)ev;
	(void)ctx;
}

static void
setup(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sin);
	int fd;

	loop = loop_new(timesrc_system());
	tarpit_config_defaults(&cfg);
	cfg.hostname = "tp.test";
	cfg.offer_starttls = true;
	tp = tarpit_new(&cfg, loop);
	if (!loop || !tp)
		abort();
	tarpit_set_asker(tp, &(struct tarpit_asker){.ask = on_ask,
						    .wait_ms = 60000});
	tarpit_set_handoff(tp, 60000);
	tarpit_set_joined_events(tp, on_joined, NULL);
	fd = tarpit_bind((struct sockaddr *)&sin, sizeof(sin));
	if (fd < 0 || getsockname(fd, (struct sockaddr *)&sin, &sl) < 0 ||
	    tarpit_adopt(tp, fd, false) < 0)
		abort();
	port = ntohs(sin.sin_port);
}

static void
spin(int turns)
{
	for (int i = 0; i < turns; i++)
		loop_run_once(loop, 0);
}

/* Reads and drops what waits on fd (each side reads what it is sent). */
static void
drain(int fd)
{
	char buf[4096];

	while (fd >= 0 && recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_port = 0,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct tarpit_verdict v = {TARPIT_PASS, 0, -1, false, 0, false};
	const struct tarpit_counters *k;
	const char *preamble;
	int client, sv[2];
	size_t i;

	if (!tp)
		setup();
	if (size < 1)
		return 0;
	sin.sin_port = htons(port);
	client = socket(AF_INET, SOCK_STREAM, 0);
	if (client < 0 || connect(client, (struct sockaddr *)&sin,
				  sizeof(sin)) < 0)
		abort();
	preamble = data[0] & 1 ? "EHLO c.test\r\nSTARTTLS\r\n"
			       : "EHLO c.test\r\nMAIL FROM:<a@a.test>\r\n"
				 "RCPT TO:<b@b.test>\r\n";
	asked = 0;
	send(client, preamble, strlen(preamble), MSG_NOSIGNAL);
	for (int t = 0; t < 1000 && !asked; t++)
		loop_run_once(loop, 1);
	if (!asked || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0,
				 sv) < 0)
		abort();
	v.handoff_fd = sv[0];
	v.greeted = data[0] & 2;
	v.gated = data[0] & 4;
	if (tarpit_verdict(tp, session, question, &v) < 0)
		abort();
	/* The chunks: [who | close | len (6 bits)] then len bytes. */
	for (i = 1; i < size;) {
		uint8_t head = data[i++];
		size_t len = head & 63;
		int fd = head & 128 ? client : sv[1];

		if (len > size - i)
			len = size - i;
		if (fd >= 0 && len)
			send(fd, data + i, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		i += len;
		if (head & 64 && fd >= 0) {
			shutdown(fd, SHUT_WR);
		}
		spin(4);
		if (asked) { /* the gate's question */
			struct tarpit_verdict g = {
			        question & 1 ? TARPIT_PASS : TARPIT_GREYLIST,
			        60, -1, false, 0, false};

			asked = 0;
			tarpit_verdict(tp, session, question, &g);
			spin(2);
		}
		drain(client);
		drain(sv[1]);
	}
	close(client);
	close(sv[1]);
	for (int t = 0; t < 100; t++)
		spin(1);
	k = tarpit_get_counters(tp);
	if (k->open != 0 || k->joined_open != 0)
		abort();
	return 0;
}
