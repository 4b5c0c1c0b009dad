// SPDX-License-Identifier: GPL-2.0-or-later
/* The tarpit on a loop with a listener on loopback, for the hand-off's
 * tests (tarpit_rig.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "tarpit_rig.h"

struct fixture f;

static int
on_ask(const struct tarpit_attempt *a, void *ctx)
{
	f.session = a->session;
	f.question = a->question;
	f.kind = a->kind;
	f.asks++;
	return 0;
}

void
setup(uint32_t wait_ms, uint32_t handoff_ms)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
	                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sin);
	int fd;

	memset(&f, 0, sizeof(f));
	f.loop = loop_new(timesrc_system());
	tarpit_config_defaults(&f.cfg);
	f.cfg.hostname = "tp.test";
	f.cfg.null_sender_at_data = true;
	f.tp = tarpit_new(&f.cfg, f.loop);
	CHECK(f.loop && f.tp);
	tarpit_set_asker(f.tp,
			 &(struct tarpit_asker){.ask = on_ask, .wait_ms = wait_ms});
	tarpit_set_handoff(f.tp, handoff_ms);
	fd = tarpit_bind((struct sockaddr *)&sin, sizeof(sin));
	CHECK(fd >= 0);
	CHECK(getsockname(fd, (struct sockaddr *)&sin, &sl) == 0);
	f.port = ntohs(sin.sin_port);
	CHECK_INT(tarpit_adopt(f.tp, fd, false), 0);
}

void
teardown(void)
{
	tarpit_free(f.tp);
	loop_free(f.loop);
}

void
spin(int ms)
{
	for (int i = 0; i < ms; i++)
		loop_run_once(f.loop, 1);
}

int
client_connect(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET,
	                          .sin_port = htons(f.port),
	                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	CHECK(fd >= 0);
	CHECK(connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 ||
	      errno == EINPROGRESS);
	return fd;
}

void
put(int fd, const char *text)
{
	CHECK(send(fd, text, strlen(text), MSG_NOSIGNAL) ==
	      (ssize_t)strlen(text));
}

const char *
line_from(int fd)
{
	static char line[4096];
	size_t n = 0;

	for (int t = 0; t < 3000; t++) {
		ssize_t r;

		loop_run_once(f.loop, 1);
		while ((r = recv(fd, line + n, 1, MSG_DONTWAIT)) == 1) {
			if (line[n] == '\n') {
				line[n > 0 && line[n - 1] == '\r' ? n - 1 : n] =
				        0;
				return line;
			}
			if (++n == sizeof(line) - 1)
				return NULL;
		}
		if (r == 0 || (r < 0 && errno == ECONNRESET)) {
			line[n] = 0;
			return line;
		}
	}
	return NULL;
}

bool
closed(int fd)
{
	char c;

	for (int t = 0; t < 3000; t++) {
		ssize_t r;

		loop_run_once(f.loop, 1);
		r = recv(fd, &c, 1, MSG_DONTWAIT);
		if (r == 0 || (r < 0 && errno == ECONNRESET))
			return true;
		if (r == 1)
			return false;
	}
	return false;
}

int
client_after_ehlo(void)
{
	int c = client_connect();

	CHECK_STR(line_from(c), "220 tp.test ESMTP");
	put(c, "EHLO c.test\r\n");
	while (strncmp(line_from(c), "250 ", 4) != 0)
		;
	return c;
}

int
client_at_rcpt(const char *mail)
{
	int c = client_after_ehlo();

	put(c, mail);
	CHECK_STR(line_from(c), "250 2.1.0 Ok");
	put(c, "RCPT TO:<b@b.test>\r\n");
	for (int t = 0; t < 1000 && f.kind != TARPIT_ASK_RCPT; t++)
		loop_run_once(f.loop, 1);
	CHECK_INT(f.kind, TARPIT_ASK_RCPT);
	return c;
}

int
client_at_starttls(void)
{
	int c = client_after_ehlo();

	put(c, "STARTTLS\r\n");
	spin(20);
	CHECK_INT(f.kind, TARPIT_ASK_STARTTLS);
	return c;
}

int
hand_off_as(bool greeted, bool gated)
{
	int sv[2];
	struct tarpit_verdict v = {TARPIT_PASS, 0, -1, greeted, 0, gated};

	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0);
	v.handoff_fd = sv[0];
	CHECK_INT(tarpit_verdict(f.tp, f.session, f.question, &v), 0);
	return sv[1];
}

int
hand_off(bool greeted)
{
	return hand_off_as(greeted, false);
}

void
mta_replays(int m, bool greeted, const char *mail)
{
	mta_replays_ehlo(m, greeted, mail, "250 mta\r\n");
}

void
mta_replays_ehlo(int m, bool greeted, const char *mail, const char *ehlo)
{
	if (!greeted)
		put(m, "220 mta\r\n");
	CHECK_STR(line_from(m), "EHLO c.test");
	put(m, ehlo);
	CHECK_STR(line_from(m), mail);
	put(m, "250 ok\r\n");
	CHECK_STR(line_from(m), "RCPT TO:<b@b.test>");
}
