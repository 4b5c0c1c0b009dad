// SPDX-License-Identifier: GPL-2.0-or-later
/* A UDP relay for DNS that holds each answer for a fixed delay before
 * passing it on: a slow link to the DNS server, for a benchmark on a
 * kernel without sch_netem (tc qdisc ... netem delay), as
 * bench/delay-relay.c is for TCP. A question goes on at once; its
 * answer waits DELAY_US from when it was read, in order. Answers find
 * their asker by the message's ID (16 bits: a benchmark's questions in
 * flight are far fewer).
 *
 *   dns-delay-relay LISTEN_ADDRESS PORT SERVER_ADDRESS PORT DELAY_US
 *
 * IPv4 addresses; one thread and poll(); runs until killed. For
 * benchmarks only: TCP is not relayed (an answer truncated over UDP,
 * which the asker then asks again over TCP, does not come through). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "load-samples.h"

#define MSG_MAX 4096
#define HELD_MAX 1024

/* An answer held, and when it may go on. */
struct held {
	int64_t due_ns;
	struct sockaddr_in to;
	size_t len;
	char data[MSG_MAX];
};

static struct held held[HELD_MAX]; /* a ring: oldest at first */
static size_t first, count;
static struct sockaddr_in asker[65536]; /* by message ID */

static unsigned
message_id(const char *p)
{
	return (unsigned)(uint8_t)p[0] << 8 | (uint8_t)p[1];
}

/* A question from an asker: noted, and sent on at once. */
static void
on_question(int listener, int upstream)
{
	char buf[MSG_MAX];
	struct sockaddr_in from;
	socklen_t fl = sizeof(from);
	ssize_t n = recvfrom(listener, buf, sizeof(buf), 0,
	                     (struct sockaddr *)&from, &fl);

	if (n < 12)
		return;
	asker[message_id(buf)] = from;
	(void)send(upstream, buf, (size_t)n, 0);
}

/* An answer from the server: held for the delay. */
static void
on_answer(int upstream, int64_t delay_ns)
{
	struct held *h;
	ssize_t n;

	if (count == HELD_MAX) { /* (full: this one is lost, as on a link) */
		char drop[MSG_MAX];

		(void)recv(upstream, drop, sizeof(drop), 0);
		return;
	}
	h = &held[(first + count) % HELD_MAX];
	n = recv(upstream, h->data, sizeof(h->data), 0);
	if (n < 12)
		return;
	h->len = (size_t)n;
	h->to = asker[message_id(h->data)];
	h->due_ns = (int64_t)bench_now_ns() + delay_ns;
	count++;
}

/* Answers whose delay is over, sent on; the wait until the next, in
 * ms (-1: none held). */
static int
release_due(int listener)
{
	int64_t now = (int64_t)bench_now_ns();

	while (count && held[first].due_ns <= now) {
		struct held *h = &held[first];

		(void)sendto(listener, h->data, h->len, 0,
		             (struct sockaddr *)&h->to, sizeof(h->to));
		first = (first + 1) % HELD_MAX;
		count--;
	}
	if (!count)
		return -1;
	return (int)((held[first].due_ns - now + 999999) / 1000000);
}

int
main(int argc, char **argv)
{
	struct sockaddr_in listen_at, server;
	int listener, upstream;
	int64_t delay_ns;

	if (argc != 6 ||
	    bench_ipv4_address(argv[1], argv[2], &listen_at) < 0 ||
	    bench_ipv4_address(argv[3], argv[4], &server) < 0) {
		fprintf(stderr, "usage: dns-delay-relay LISTEN_ADDRESS PORT "
		                "SERVER_ADDRESS PORT DELAY_US\n");
		return 2;
	}
	delay_ns = atoll(argv[5]) * 1000;
	listener = socket(AF_INET, SOCK_DGRAM, 0);
	upstream = socket(AF_INET, SOCK_DGRAM, 0);
	if (listener < 0 || upstream < 0 ||
	    bind(listener, (struct sockaddr *)&listen_at, sizeof(listen_at)) <
	            0 ||
	    connect(upstream, (struct sockaddr *)&server, sizeof(server)) < 0) {
		perror("dns-delay-relay");
		return 1;
	}
	for (;;) {
		struct pollfd fds[2] = {{.fd = listener, .events = POLLIN},
		                        {.fd = upstream, .events = POLLIN}};
		int wait = release_due(listener);

		if (poll(fds, 2, wait) < 0 && errno != EINTR) {
			perror("poll");
			return 1;
		}
		if (fds[0].revents & POLLIN)
			on_question(listener, upstream);
		if (fds[1].revents & POLLIN)
			on_answer(upstream, delay_ns);
	}
}
