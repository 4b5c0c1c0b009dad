// SPDX-License-Identifier: GPL-2.0-or-later
/* A stand-in for a compromised child, for test-privsep.sh: it opens a
 * live capture as the child does, enters the child's very sandbox
 * (sandbox.h: its user, no capabilities, its seccomp filter) and then
 * tries one thing the child must not be able to do. It prints "done: ..."
 * if the attempt came back at all; the seccomp filter kills it instead
 * (SIGSYS) when it holds.
 *   sandbox-probe [--no-sandbox] IFACE USER ACTION [ARG]
 * ACTION: forge (a UDP frame from 198.51.100.66 on the capture socket,
 * with sendto), forge-write (the same with write), forge-high (write on
 * the capture socket's number with high bits set: the kernel drops them,
 * a filter comparing all 64 would not), dup (the capture
 * socket to another number, then write), unix-socket, connect PATH
 * (greygatectl's socket), read (allowed: polls the capture), linger
 * (SO_LINGER set on its standard output: refused by the filter with
 * EPERM before the kernel could say it is no socket; no socket option
 * may be set once sandboxed). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "sandbox.h"
#include "sensor.h"

/* Ethernet broadcast, IPv4 198.51.100.66 -> 203.0.113.10, UDP to port 9
 * with "forged" as payload. */
static size_t
forged_frame(uint8_t *f)
{
	struct ether_header *eth = (void *)f;
	struct iphdr *ip = (void *)(f + sizeof(*eth));
	struct udphdr *udp = (void *)(ip + 1);
	static const char payload[] = "forged";
	uint32_t sum = 0;

	memset(f, 0, 128);
	memset(eth->ether_dhost, 0xff, 6);
	eth->ether_shost[0] = 0x02;
	eth->ether_type = htons(ETHERTYPE_IP);
	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->tot_len = htons(sizeof(*ip) + sizeof(*udp) + sizeof(payload));
	inet_pton(AF_INET, "198.51.100.66", &ip->saddr);
	inet_pton(AF_INET, "203.0.113.10", &ip->daddr);
	for (int i = 0; i < 10; i++)
		sum += ((uint16_t *)ip)[i];
	ip->check = (uint16_t) ~((sum & 0xffff) + (sum >> 16));
	udp->source = htons(4000);
	udp->dest = htons(9);
	udp->len = htons(sizeof(*udp) + sizeof(payload));
	memcpy(udp + 1, payload, sizeof(payload));
	return sizeof(*eth) + ntohs(ip->tot_len);
}

int
main(int argc, char **argv)
{
	struct sensor_config scfg;
	struct sensor_capture *cap;
	struct sockaddr_ll sll = {.sll_family = AF_PACKET};
	bool sandbox = true;
	char err[256] = "";
	uint8_t frame[128];
	size_t len = forged_frame(frame);
	const char *action;
	ssize_t n = 0;
	int fd;

	if (argc > 1 && !strcmp(argv[1], "--no-sandbox")) {
		sandbox = false;
		argv++;
		argc--;
	}
	if (argc < 4) {
		fprintf(stderr, "usage: sandbox-probe [--no-sandbox] IFACE "
		                "USER ACTION [ARG]\n");
		return 2;
	}
	action = argv[3];
	sensor_config_defaults(&scfg);
	if (sensor_capture_open_live(argv[1], 1 << 20, &scfg, &cap, err) < 0) {
		fprintf(stderr, "capture: %s\n", err);
		return 2;
	}
	fd = sensor_capture_fd(cap);
	sll.sll_ifindex = (int)if_nametoindex(argv[1]);
	sll.sll_halen = 6;
	memset(sll.sll_addr, 0xff, 6);
	if (sandbox && (sandbox_drop_to_user(argv[2], err) < 0 ||
	                sandbox_seccomp(fd) < 0)) {
		fprintf(stderr, "sandbox: %s\n", err);
		return 2;
	}
	if (!strcmp(action, "forge")) {
		n = sendto(fd, frame, len, 0, (struct sockaddr *)&sll,
		           sizeof(sll));
	} else if (!strcmp(action, "forge-write")) {
		n = write(fd, frame, len);
	} else if (!strcmp(action, "forge-high")) {
		n = syscall(SYS_write, (1ull << 32) | (unsigned)fd, frame, len);
	} else if (!strcmp(action, "dup")) {
		int copy = fcntl(fd, F_DUPFD, 100);

		n = copy < 0 ? -1 : write(copy, frame, len);
	} else if (!strcmp(action, "dup-cloexec")) {
		/* allowed on the tarpit's sockets, never on the capture */
		int copy = fcntl(fd, F_DUPFD_CLOEXEC, 100);

		n = copy < 0 ? -1 : write(copy, frame, len);
	} else if (!strcmp(action, "dup-other")) {
		int copy = fcntl(1, F_DUPFD_CLOEXEC, 100);

		n = copy < 0 ? -1 : close(copy);
	} else if (!strcmp(action, "unix-socket")) {
		n = socket(AF_UNIX, SOCK_STREAM, 0);
	} else if (!strcmp(action, "connect") && argc > 4) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[4]);
		/* A socket it already has (the capture) is all it could use. */
		n = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	} else if (!strcmp(action, "linger")) {
		struct linger lg = {1, 40};

		n = setsockopt(1, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	} else if (!strcmp(action, "read")) {
		struct pollfd p = {fd, POLLIN, 0};

		n = poll(&p, 1, 10);
	} else {
		fprintf(stderr, "unknown action %s\n", action);
		return 2;
	}
	printf("done: %s returned %zd%s%s\n", action, n, n < 0 ? ": " : "",
	       n < 0 ? strerror(errno) : "");
	return 0;
}
