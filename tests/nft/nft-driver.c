// SPDX-License-Identifier: GPL-2.0-or-later
/* Drives the nft manager from a script, for the integration tests: opens
 * greygate's table, then reads commands from stdin, one a line:
 *   add KIND CIDR [TIMEOUT_MS [COMMENT]]   queue an add (KIND: allow,
 *   del KIND CIDR                          pass, trap)
 *   flush KIND
 *   commit                                 prints "committed N refused"
 *   list KIND                              prints "CIDR TIMEOUT EXPIRES C"
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
on_fail(enum nftset_kind kind, const struct nftset_prefix *p, int err,
	void *ctx)
{
	char ip[64];

	inet_ntop(p->family, p->bytes, ip, sizeof(ip));
	printf("refused %s/%u: %s\n", ip, p->prefix, strerror(-err));
}

static int
print_elem(const struct nftset_elem *e, void *ctx)
{
	char ip[64];

	inet_ntop(e->prefix.family, e->prefix.bytes, ip, sizeof(ip));
	printf("%s/%u %llu %llu %s\n", ip, e->prefix.prefix,
	       (unsigned long long)e->timeout_ms,
	       (unsigned long long)e->expires_ms,
	       e->comment[0] ? e->comment : "-");
	return 0;
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
		} else if (k < 0) {
			printf("error: bad kind '%s'\n", kind);
		} else if (strcmp(cmd, "flush") == 0) {
			nftset_flush(nft, (enum nftset_kind)k);
		} else if (strcmp(cmd, "list") == 0) {
			r = nftset_list(nft, (enum nftset_kind)k, print_elem,
					NULL);
			printf("end %d\n", r);
		} else if (parse_prefix(cidr, &p) < 0) {
			printf("error: bad prefix '%s'\n", cidr);
		} else if (strcmp(cmd, "add") == 0) {
			nftset_add(nft, (enum nftset_kind)k, &p, timeout,
				   comment[0] ? comment : NULL);
		} else if (strcmp(cmd, "del") == 0) {
			nftset_del(nft, (enum nftset_kind)k, &p);
		}
	}
	nftset_close(nft);
	return 0;
}
