// SPDX-License-Identifier: GPL-2.0-or-later
/* smtp-load: botnet-like SMTP sessions against a server, as fast as it
 * answers: connect, EHLO, MAIL, RCPT (expecting 4xx), QUIT, wait for the
 * server to close; C sessions at a time for S seconds, from the source
 * addresses given in turn. Prints sessions per second and the session
 * time's median and p99. Postfix's smtp-source would be the natural
 * driver, but it exits at the first recipient refused with a 4xx, so it
 * cannot keep sessions going against a greylisting server. Also the
 * RCPT's own time (sent to answered: the decision) as rcpt_median_ms
 * and rcpt_p99_ms.
 *   smtp-load HOST PORT CONCURRENCY SECONDS SRC...
 * SMTP_LOAD_ONCE=1: each source once, then it ends (every session a
 * new client to the server); SMTP_LOAD_SENDER_DOMAIN=DOMAIN: the sender
 * is bot@sN.DOMAIN, N the source's place in the list (a new client, a
 * new sender domain), instead of bot@spam.example. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "load-samples.h"

enum step { S_BANNER, S_EHLO, S_MAIL, S_RCPT, S_QUIT, S_EOF };

struct session {
	int fd;
	enum step step;
	uint64_t started_ns, rcpt_ns;
	int source; /* its place in sources */
	size_t len;
	char buf[2048];
};

static struct sockaddr_in server;
static struct in_addr *sources;
static int nsources, next_source;
static int epfd;
static uint64_t done, failed;
static struct bench_samples times, rcpt_times;
static bool once;
static const char *sender_domain;

static void
start(struct session *s)
{
	struct sockaddr_in src = {.sin_family = AF_INET};
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = s};
	int one = 1;

	s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (s->fd < 0) {
		perror("socket");
		exit(1);
	}
	setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	s->source = next_source++ % nsources;
	src.sin_addr = sources[s->source];
	if (bind(s->fd, (struct sockaddr *)&src, sizeof(src)) < 0) {
		perror("bind");
		exit(1);
	}
	s->step = S_BANNER;
	s->len = 0;
	s->started_ns = bench_now_ns();
	if (connect(s->fd, (struct sockaddr *)&server, sizeof(server)) < 0 &&
	    errno != EINPROGRESS) {
		perror("connect");
		exit(1);
	}
	epoll_ctl(epfd, EPOLL_CTL_ADD, s->fd, &ev);
}

static void
finish(struct session *s, bool ok)
{
	close(s->fd);
	if (ok) {
		done++;
		if (bench_samples_add(&times,
				      bench_now_ns() - s->started_ns) < 0)
			exit(1);
	} else {
		failed++;
	}
}

/* The reply's code once a whole reply (its last line) is in, else 0. */
static int
reply_code(struct session *s)
{
	char *line = s->buf, *end;

	while ((end = memchr(line, '\n', s->len - (size_t)(line - s->buf)))) {
		if (end - line >= 4 && line[3] == ' ') {
			int code = atoi(line);

			s->len = 0;
			return code ? code : -1;
		}
		line = end + 1;
	}
	return 0;
}

static bool
say(struct session *s, const char *text)
{
	size_t n = strlen(text);

	return send(s->fd, text, n, MSG_NOSIGNAL) == (ssize_t)n;
}

/* One step of the session; false when it ended (and was counted). */
static bool
advance(struct session *s)
{
	ssize_t n = recv(s->fd, s->buf + s->len, sizeof(s->buf) - s->len - 1, 0);
	int code;

	if (n < 0 && errno == EAGAIN)
		return true;
	if (n <= 0) {
		finish(s, s->step == S_EOF);
		return false;
	}
	s->len += (size_t)n;
	if (s->step == S_EOF)
		return true;
	code = reply_code(s);
	if (!code)
		return true;
	switch (s->step) {
	case S_BANNER:
		if (code != 220 || !say(s, "EHLO bot.example\r\n"))
			break;
		s->step = S_EHLO;
		return true;
	case S_EHLO: {
		char mail[300];

		if (sender_domain)
			snprintf(mail, sizeof(mail), "MAIL FROM:<bot@s%d.%s>\r\n",
			         s->source, sender_domain);
		else
			snprintf(mail, sizeof(mail),
			         "MAIL FROM:<bot@spam.example>\r\n");
		if (code != 250 || !say(s, mail))
			break;
		s->step = S_MAIL;
		return true;
	}
	case S_MAIL:
		if (code != 250 || !say(s, "RCPT TO:<bob@example.org>\r\n"))
			break;
		s->rcpt_ns = bench_now_ns();
		s->step = S_RCPT;
		return true;
	case S_RCPT:
		if (bench_samples_add(&rcpt_times,
		                      bench_now_ns() - s->rcpt_ns) < 0)
			exit(1);
		if (code / 100 != 4 || !say(s, "QUIT\r\n"))
			break;
		s->step = S_QUIT;
		return true;
	case S_QUIT:
		if (code != 221)
			break;
		s->step = S_EOF; /* the server closes first */
		return true;
	case S_EOF:
		return true;
	}
	finish(s, false);
	return false;
}

int
main(int argc, char **argv)
{
	struct epoll_event evs[256];
	struct session *pool;
	int conc, secs;
	uint64_t t0, deadline;

	if (argc < 6) {
		fprintf(stderr, "usage: smtp-load HOST PORT CONCURRENCY SECONDS "
				"SRC...\n");
		return 2;
	}
	server.sin_family = AF_INET;
	server.sin_port = htons((uint16_t)atoi(argv[2]));
	if (inet_pton(AF_INET, argv[1], &server.sin_addr) != 1)
		return 2;
	conc = atoi(argv[3]);
	secs = atoi(argv[4]);
	nsources = argc - 5;
	sources = calloc((size_t)nsources, sizeof(*sources));
	pool = calloc((size_t)conc, sizeof(*pool));
	if (!sources || !pool || conc <= 0 || secs <= 0)
		return 2;
	for (int i = 0; i < nsources; i++)
		if (inet_pton(AF_INET, argv[5 + i], &sources[i]) != 1)
			return 2;
	once = getenv("SMTP_LOAD_ONCE") && !strcmp(getenv("SMTP_LOAD_ONCE"), "1");
	sender_domain = getenv("SMTP_LOAD_SENDER_DOMAIN");
	if (once && conc > nsources)
		conc = nsources;
	epfd = epoll_create1(0);
	t0 = bench_now_ns();
	deadline = t0 + (uint64_t)secs * 1000000000u;
	for (int i = 0; i < conc; i++)
		start(&pool[i]);
	while (bench_now_ns() < deadline &&
	       (!once || done + failed < (uint64_t)nsources)) {
		int n = epoll_wait(epfd, evs, 256, 100);

		for (int i = 0; i < n; i++) {
			struct session *s = evs[i].data.ptr;

			if (!advance(s) && (!once || next_source < nsources))
				start(s);
		}
	}
	{
		double el = (double)(bench_now_ns() - t0) / 1e9;

		bench_samples_sort(&times);
		bench_samples_sort(&rcpt_times);
		printf("sessions=%llu failed=%llu seconds=%.1f rate=%.0f "
		       "median_ms=%.2f p99_ms=%.2f rcpt_median_ms=%.2f "
		       "rcpt_p99_ms=%.2f\n",
		       (unsigned long long)done, (unsigned long long)failed, el,
		       (double)done / el,
		       (double)bench_samples_at(&times, 500) / 1e6,
		       (double)bench_samples_at(&times, 990) / 1e6,
		       (double)bench_samples_at(&rcpt_times, 500) / 1e6,
		       (double)bench_samples_at(&rcpt_times, 990) / 1e6);
	}
	return failed > done / 100 ? 1 : 0;
}
