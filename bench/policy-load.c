// SPDX-License-Identifier: GPL-2.0-or-later
/* A load generator for Postfix policy servers (greygate's policy door,
 * postgrey): C connections, each sending a full Postfix request (about
 * 640 bytes, the attributes Postfix 3.7 sends at RCPT) and waiting for
 * its answer before the next, for S seconds or N requests. Each request
 * is a new triplet from a client /64 of its own, or, for a share of them,
 * a triplet sent before (a retry: the store holds it). Prints requests,
 * the rate, and latency p50/p99.
 *   policy-load HOST PORT CONNS SECONDS [MAX_REQUESTS [RETRY_PERCENT]] */
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
#include <time.h>
#include <unistd.h>

#include "load-samples.h"

#define RECENT 65536 /* triplets a retry is drawn from */

struct conn {
	int fd;
	uint64_t sent_ns;
	char in[1024];
	size_t in_len;
};

static uint64_t next_triplet, recent[RECENT];
static struct bench_samples lat_us;

/* A request for triplet t: its client, sender and recipient follow
 * from t, so a retry is the same triplet. */
static int
make_request(char *buf, size_t len, uint64_t t, uint64_t seq)
{
	return snprintf(
	        buf, len,
	        "request=smtpd_access_policy\nprotocol_state=RCPT\n"
	        "protocol_name=ESMTP\nclient_address=2001:db8:%x:%x::25\n"
	        "client_name=mail%llu.example.com\n"
	        "reverse_client_name=mail%llu.example.com\nclient_port=%u\n"
	        "helo_name=mail%llu.example.com\nsender=user%llu@example.com\n"
	        "recipient=rcpt%llu@example.org\nrecipient_count=0\n"
	        "queue_id=\ninstance=%llx.%llx.0\nsize=0\netrn_domain=\n"
	        "stress=\nsasl_method=\nsasl_username=\nsasl_sender=\n"
	        "ccert_subject=\nccert_issuer=\nccert_fingerprint=\n"
	        "ccert_pubkey_fingerprint=\nencryption_protocol=TLSv1.3\n"
	        "encryption_cipher=TLS_AES_256_GCM_SHA384\n"
	        "encryption_keysize=256\nserver_address=2001:db8::1\n"
	        "server_port=25\npolicy_context=\ncompatibility_level=3.6\n"
	        "mail_version=3.7.11\n\n",
	        (unsigned)(t >> 16) & 0xffff, (unsigned)t & 0xffff,
	        (unsigned long long)t, (unsigned long long)t,
	        (unsigned)(1024 + seq % 60000), (unsigned long long)t,
	        (unsigned long long)t, (unsigned long long)(t % 1000),
	        (unsigned long long)seq, (unsigned long long)t);
}

static uint64_t
pick_triplet(unsigned retry_percent)
{
	uint64_t t;

	if (next_triplet > 0 && (unsigned)(rand() % 100) < retry_percent)
		return recent[(uint64_t)rand() %
		              (next_triplet < RECENT ? next_triplet : RECENT)];
	t = next_triplet++;
	recent[t % RECENT] = t;
	return t;
}

static int
send_next(struct conn *c, uint64_t seq, unsigned retry_percent)
{
	char req[2048];
	int n = make_request(req, sizeof(req), pick_triplet(retry_percent),
	                     seq);

	c->sent_ns = bench_now_ns();
	c->in_len = 0;
	return write(c->fd, req, (size_t)n) == n ? 0 : -1;
}

int
main(int argc, char **argv)
{
	struct sockaddr_in6 sa6 = {.sin6_family = AF_INET6};
	struct sockaddr_in sa4 = {.sin_family = AF_INET};
	struct sockaddr *sa;
	socklen_t sl;
	int nconns, ep, one = 1;
	double seconds;
	uint64_t max_req, seq = 0, done = 0, start, end;
	unsigned retry_percent;
	struct conn *conns;

	if (argc < 5) {
		fprintf(stderr, "usage: policy-load HOST PORT CONNS SECONDS "
		                "[MAX_REQUESTS [RETRY_PERCENT]]\n");
		return 2;
	}
	if (inet_pton(AF_INET, argv[1], &sa4.sin_addr) == 1) {
		sa4.sin_port = htons((uint16_t)atoi(argv[2]));
		sa = (struct sockaddr *)&sa4;
		sl = sizeof(sa4);
	} else if (inet_pton(AF_INET6, argv[1], &sa6.sin6_addr) == 1) {
		sa6.sin6_port = htons((uint16_t)atoi(argv[2]));
		sa = (struct sockaddr *)&sa6;
		sl = sizeof(sa6);
	} else {
		fprintf(stderr, "policy-load: %s: not an address\n", argv[1]);
		return 2;
	}
	nconns = atoi(argv[3]);
	seconds = atof(argv[4]);
	max_req = argc > 5 ? strtoull(argv[5], NULL, 10) : 0;
	retry_percent = argc > 6 ? (unsigned)atoi(argv[6]) : 25;
	if (nconns < 1 || seconds <= 0)
		return 2;
	srand(1);
	conns = calloc((size_t)nconns, sizeof(*conns));
	ep = epoll_create1(0);
	if (!conns || ep < 0)
		return 1;
	for (int i = 0; i < nconns; i++) {
		struct epoll_event ev = {.events = EPOLLIN,
		                         .data.ptr = &conns[i]};

		conns[i].fd = socket(sa->sa_family, SOCK_STREAM, 0);
		if (conns[i].fd < 0 || connect(conns[i].fd, sa, sl) < 0) {
			perror("policy-load: connect");
			return 1;
		}
		setsockopt(conns[i].fd, IPPROTO_TCP, TCP_NODELAY, &one,
		           sizeof(one));
		epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev);
	}
	start = bench_now_ns();
	end = start + (uint64_t)(seconds * 1e9);
	for (int i = 0; i < nconns; i++)
		if (send_next(&conns[i], seq++, retry_percent) < 0)
			return 1;
	while (bench_now_ns() < end && (!max_req || done < max_req)) {
		struct epoll_event evs[64];
		int n = epoll_wait(ep, evs, 64, 100);

		for (int i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;
			ssize_t r = read(c->fd, c->in + c->in_len,
			                 sizeof(c->in) - c->in_len - 1);

			if (r <= 0) {
				fprintf(stderr, "policy-load: the server "
				                "closed a connection\n");
				return 1;
			}
			c->in_len += (size_t)r;
			c->in[c->in_len] = 0;
			if (!strstr(c->in, "\n\n"))
				continue;
			if (bench_samples_add(&lat_us,
			                      (bench_now_ns() - c->sent_ns) /
			                              1000) < 0)
				return 1;
			done++;
			if ((!max_req || seq < max_req) &&
			    send_next(c, seq++, retry_percent) < 0)
				return 1;
		}
	}
	{
		double took = (double)(bench_now_ns() - start) / 1e9;

		bench_samples_sort(&lat_us);
		printf("requests=%llu seconds=%.1f rate=%.0f p50_us=%llu "
		       "p99_us=%llu triplets=%llu\n",
		       (unsigned long long)done, took, (double)done / took,
		       (unsigned long long)bench_samples_at(&lat_us, 500),
		       (unsigned long long)bench_samples_at(&lat_us, 990),
		       (unsigned long long)next_triplet);
	}
	return 0;
}
