// SPDX-License-Identifier: GPL-2.0-or-later
/* Drives the nft manager from a script, for the integration tests: opens
 * greygate's table, then reads commands from stdin, one a line:
 *   add KIND CIDR [TIMEOUT_MS [COMMENT]]   queue an add (KIND: allow,
 *   del KIND CIDR                          pass, trap)
 *   flush KIND
 *   commit                                 prints "committed N refused"
 *   bulk N                                 queue N adds of single IPv6
 *                                          addresses in 2001:db8:ffff::/48
 *                                          to allow6
 *   batches                                prints "batches N" (sent so far)
 *   list KIND                              prints "CIDR TIMEOUT EXPIRES C"
 *                                          (allow: any range, LO-HI)
 * and answers "ready" once the table exists. Arguments: [TABLE [MARK
 * [persist]]]. It keeps the table (and its
 * socket) until stdin closes or it is killed. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "nftset.h"

static int
parse_kind(const char *s)
{
	if (strcmp(s, "allow") == 0)
		return NFTSET_ALLOW;
	if (strcmp(s, "pass") == 0)
		return NFTSET_PASS;
	if (strcmp(s, "trap") == 0)
		return NFTSET_TRAP;
	if (strcmp(s, "trust") == 0)
		return NFTSET_TRUST;
	return -1;
}

static int
parse_prefix(const char *text, struct nftset_prefix *p)
{
	char ip[64];
	const char *slash = strchr(text, '/');
	size_t n = slash ? (size_t)(slash - text) : strlen(text);

	if (n >= sizeof(ip))
		return -1;
	memcpy(ip, text, n);
	ip[n] = 0;
	memset(p, 0, sizeof(*p));
	if (inet_pton(AF_INET, ip, p->bytes) == 1)
		p->family = AF_INET;
	else if (inet_pton(AF_INET6, ip, p->bytes) == 1)
		p->family = AF_INET6;
	else
		return -1;
	p->prefix = (uint8_t)(slash ? atoi(slash + 1)
				    : p->family == AF_INET ? 32 : 128);
	return 0;
}

static void
on_fail(enum nftset_kind kind, const struct ip_range *range, int err,
	void *ctx)
{
	char text[IP_RANGE_TEXT_MAX];

	printf("refused %s: %s\n", ip_range_format(range, text),
	       strerror(-err));
}

static int
print_elem(const struct nftset_elem *e, void *ctx)
{
	char text[IP_RANGE_TEXT_MAX];

	printf("%s %llu %llu %s\n", ip_range_format(&e->range, text),
	       (unsigned long long)e->timeout_ms,
	       (unsigned long long)e->expires_ms,
	       e->comment[0] ? e->comment : "-");
	return 0;
}

/* A change the queue refused is said (the batch's refusals are said at
 * commit). */
static void
queued(int r)
{
	if (r < 0)
		printf("error: not queued: %s\n", strerror(-r));
}

int
main(int argc, char **argv)
{
	struct nftset_config cfg = {.table = "greygate", .smtp_port = 25,
				    .tarpit_port = 2525, .pass_prefix4 = 24,
				    .pass_prefix6 = 64};
	struct nftset *nft;
	char line[512];
	int r;

	if (argc > 1)
		cfg.table = argv[1];
	if (argc > 2)
		cfg.exempt_mark = (uint32_t)strtoul(argv[2], NULL, 0);
	if (argc > 3 && strcmp(argv[3], "persist") == 0)
		cfg.persist = true;
	setvbuf(stdout, NULL, _IOLBF, 0);
	r = nftset_open(&cfg, &nft);
	if (r) {
		fprintf(stderr, "nft-driver: %s: %s\n", strerror(-r),
			nftset_explain(r));
		return 2;
	}
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		char cmd[16] = "", kind[16] = "", cidr[64] = "", comment[128] = "";
		unsigned long long timeout = 0;
		struct nftset_prefix p;
		int k;

		if (sscanf(line, "%15s %15s %63s %llu %127[^\n]", cmd, kind, cidr,
			   &timeout, comment) < 1)
			continue;
		k = parse_kind(kind);
		if (strcmp(cmd, "commit") == 0) {
			r = nftset_commit(nft, on_fail, NULL);
			printf("committed %d refused\n", r);
		} else if (strcmp(cmd, "batches") == 0) {
			printf("batches %llu\n",
			       (unsigned long long)nftset_batches_sent(nft));
		} else if (strcmp(cmd, "bulk") == 0) {
			long n = strtol(kind, NULL, 10);

			for (long i = 0; i < n; i++) {
				struct nftset_prefix b = {.family = AF_INET6,
							  .prefix = 128};

				inet_pton(AF_INET6, "2001:db8:ffff::", b.bytes);
				b.bytes[14] = (uint8_t)(i >> 8);
				b.bytes[15] = (uint8_t)i;
				queued(nftset_add(nft, NFTSET_ALLOW, &b, 0,
				                  "bulk"));
			}
		} else if (k < 0) {
			printf("error: bad kind '%s'\n", kind);
		} else if (strcmp(cmd, "flush") == 0) {
			queued(nftset_flush(nft, (enum nftset_kind)k));
		} else if (strcmp(cmd, "list") == 0) {
			r = nftset_list(nft, (enum nftset_kind)k, print_elem,
					NULL);
			printf("end %d\n", r);
		} else if (k == NFTSET_ALLOW && strchr(cidr, '-')) {
			struct nftset_prefix lo, hi;
			struct ip_range range = {0};
			char *dash = strchr(cidr, '-');

			*dash = 0;
			if (parse_prefix(cidr, &lo) < 0 ||
			    parse_prefix(dash + 1, &hi) < 0) {
				printf("error: bad range\n");
				continue;
			}
			range.family = lo.family;
			memcpy(range.lo, lo.bytes, 16);
			memcpy(range.hi, hi.bytes, 16);
			if (!strcmp(cmd, "add"))
				queued(nftset_add_range(
				        nft, &range, timeout,
				        comment[0] ? comment : NULL));
			else
				printf("error: ranges are added only\n");
		} else if (parse_prefix(cidr, &p) < 0) {
			printf("error: bad prefix '%s'\n", cidr);
		} else if (strcmp(cmd, "add") == 0) {
			queued(nftset_add(nft, (enum nftset_kind)k, &p,
			                  timeout, comment[0] ? comment : NULL));
		} else if (strcmp(cmd, "del") == 0) {
			queued(nftset_del(nft, (enum nftset_kind)k, &p));
		}
	}
	nftset_close(nft);
	return 0;
}
