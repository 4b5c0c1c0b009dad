// SPDX-License-Identifier: GPL-2.0-or-later
/* A TCP relay that holds what the server answers for a fixed delay
 * before passing it on: the added latency of a link, for a benchmark on
 * a kernel without sch_netem (tc qdisc ... netem delay). What the client
 * sends goes through at once; what the server sends waits DELAY_US from
 * when it was read, in order, as netem on the server's side would hold
 * it.
 *
 *   delay-relay LISTEN_ADDRESS PORT TARGET_ADDRESS PORT DELAY_US
 *
 * IPv4 addresses; one thread, epoll and a timerfd; runs until killed.
 * For benchmarks only: a write that would block blocks. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "load-samples.h"

#define MAX_PAIRS 64
#define CHUNK_MAX 65536

/* What the server sent, and when it may go on. */
struct chunk {
	struct chunk *next;
	int64_t due_ns;
	size_t len;
	char data[];
};

/* One client's connection and its own to the server. */
struct pair {
	int client, server; /* -1: free */
	struct chunk *head, *tail;
};

static struct pair pairs[MAX_PAIRS];
static int epfd, timer;
static int64_t delay_ns;

static int
send_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void
nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Watch fd; its events carry the pair and which end (0 client, 1
 * server). */
static void
watch(int fd, size_t pair, int end)
{
	struct epoll_event ev = {.events = EPOLLIN,
	                         .data.u64 = (uint64_t)pair * 2 + 2 + end};

	epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void
close_pair(struct pair *p)
{
	struct chunk *c;

	close(p->client);
	close(p->server);
	while ((c = p->head)) {
		p->head = c->next;
		free(c);
	}
	*p = (struct pair){-1, -1, NULL, NULL};
}

/* The timer at the earliest chunk still held (disarmed if none). */
static void
arm_timer(void)
{
	struct itimerspec its = {0};
	int64_t first = 0;

	for (size_t i = 0; i < MAX_PAIRS; i++)
		if (pairs[i].head &&
		    (!first || pairs[i].head->due_ns < first))
			first = pairs[i].head->due_ns;
	if (first) {
		its.it_value.tv_sec = first / 1000000000;
		its.it_value.tv_nsec = first % 1000000000;
	}
	timerfd_settime(timer, TFD_TIMER_ABSTIME, &its, NULL);
}

/* Every chunk due by now goes to its client. */
static void
release_due(void)
{
	int64_t now = (int64_t)bench_now_ns();

	for (size_t i = 0; i < MAX_PAIRS; i++) {
		struct pair *p = &pairs[i];
		struct chunk *c;

		while ((c = p->head) && c->due_ns <= now) {
			p->head = c->next;
			if (!p->head)
				p->tail = NULL;
			if (send_all(p->client, c->data, c->len) < 0) {
				free(c);
				close_pair(p);
				break;
			}
			free(c);
		}
	}
	arm_timer();
}

static void
accept_one(int listener, const struct sockaddr_in *target)
{
	int client = accept(listener, NULL, NULL), server;
	size_t i;

	if (client < 0)
		return;
	for (i = 0; i < MAX_PAIRS && pairs[i].client >= 0; i++)
		;
	server = socket(AF_INET, SOCK_STREAM, 0);
	if (i == MAX_PAIRS || server < 0 ||
	    connect(server, (const struct sockaddr *)target,
	            sizeof(*target)) < 0) {
		fprintf(stderr, "delay-relay: no pair for a client: %s\n",
		        i == MAX_PAIRS ? "too many" : strerror(errno));
		close(client);
		if (server >= 0)
			close(server);
		return;
	}
	nodelay(client);
	nodelay(server);
	pairs[i] = (struct pair){client, server, NULL, NULL};
	watch(client, i, 0);
	watch(server, i, 1);
}

/* Something to read at one end of pair i. */
static void
relay(size_t i, int end)
{
	struct pair *p = &pairs[i];
	static char buf[CHUNK_MAX];
	struct chunk *c;
	ssize_t n;

	if (p->client < 0)
		return;
	n = recv(end ? p->server : p->client, buf, sizeof(buf), 0);
	if (n <= 0) {
		close_pair(p);
		arm_timer();
		return;
	}
	if (!end) {
		if (send_all(p->server, buf, (size_t)n) < 0)
			close_pair(p);
		return;
	}
	c = malloc(sizeof(*c) + (size_t)n);
	if (!c) {
		close_pair(p);
		return;
	}
	c->next = NULL;
	c->due_ns = (int64_t)bench_now_ns() + delay_ns;
	c->len = (size_t)n;
	memcpy(c->data, buf, (size_t)n);
	if (p->tail)
		p->tail->next = c;
	else
		p->head = c;
	p->tail = c;
	if (p->head == c)
		arm_timer();
}

int
main(int argc, char **argv)
{
	struct sockaddr_in listen_at, target;
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0};
	int listener, one = 1;

	if (argc != 6 ||
	    bench_ipv4_address(argv[1], argv[2], &listen_at) < 0 ||
	    bench_ipv4_address(argv[3], argv[4], &target) < 0) {
		fprintf(stderr, "usage: delay-relay LISTEN_ADDRESS PORT "
		                "TARGET_ADDRESS PORT DELAY_US\n");
		return 2;
	}
	delay_ns = atoll(argv[5]) * 1000;
	for (size_t i = 0; i < MAX_PAIRS; i++)
		pairs[i] = (struct pair){-1, -1, NULL, NULL};
	listener = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (listener < 0 ||
	    bind(listener, (const struct sockaddr *)&listen_at,
	         sizeof(listen_at)) < 0 ||
	    listen(listener, 16) < 0) {
		perror("delay-relay: listen");
		return 1;
	}
	epfd = epoll_create1(0);
	timer = timerfd_create(CLOCK_MONOTONIC, 0);
	epoll_ctl(epfd, EPOLL_CTL_ADD, listener, &ev);
	ev.data.u64 = 1;
	epoll_ctl(epfd, EPOLL_CTL_ADD, timer, &ev);
	for (;;) {
		struct epoll_event got[32];
		int n = epoll_wait(epfd, got, 32, -1);

		for (int k = 0; k < n; k++) {
			uint64_t tag = got[k].data.u64, expirations;

			if (tag == 0)
				accept_one(listener, &target);
			else if (tag == 1 &&
			         read(timer, &expirations, sizeof(expirations)) >=
			                 0)
				release_due();
			else if (tag >= 2)
				relay((size_t)(tag - 2) / 2, (int)((tag - 2) % 2));
		}
	}
}
