// SPDX-License-Identifier: GPL-2.0-or-later
/* The nft manager's element updates: elements/s with batches of 1, 100 and
 * 1,000, and the latency of one pass (queue, commit, kernel's ack: the
 * element is then visible to packets). Run inside a throw-away network
 * namespace (bench/nft-bench.sh does): it creates greygate's table there.
 *   nft-bench ELEMENTS */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "nftset.h"

static double
now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The n-th /24 from base: the pass set's keys. */
static struct nftset_prefix
addr_n(uint32_t n, uint32_t base)
{
	struct nftset_prefix p = {.family = AF_INET, .prefix = 24};
	uint32_t be = htonl(base + (n << 8));

	memcpy(p.bytes, &be, 4);
	return p;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	struct nftset_config cfg = {.table = "greygate", .smtp_port = 25,
				    .tarpit_port = 2525, .pass_prefix4 = 24,
				    .pass_prefix6 = 64};
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000;
	static const size_t batches[] = {1, 100, 1000};
	struct nftset *nft;
	double lat[1000];
	int r = nftset_open(&cfg, &nft);

	if (r < 0) {
		fprintf(stderr, "nft-bench: %s\n", nftset_explain(r));
		return 2;
	}
	for (size_t b = 0; b < 3; b++) {
		/* Batches of 1 are slow: a tenth as many elements. */
		size_t count = batches[b] == 1 ? n / 10 : n;
		uint32_t base = (uint32_t)(20 + 2 * b) << 24;
		double t0 = now_s(), t;

		for (size_t i = 0; i < count; i++) {
			struct nftset_prefix p = addr_n((uint32_t)i, base);

			if (nftset_add(nft, NFTSET_PASS, &p, 3600000, NULL) <
			            0 ||
			    ((i + 1) % batches[b] == 0 &&
			     nftset_commit(nft, NULL, NULL) != 0)) {
				fprintf(stderr, "nft-bench: add failed\n");
				return 1;
			}
		}
		if (nftset_commit(nft, NULL, NULL) != 0) {
			fprintf(stderr, "nft-bench: commit failed\n");
			return 1;
		}
		t = now_s() - t0;
		printf("greygate, batches of %-5zu %9zu elements %8.3f s "
		       "%10.0f elements/s\n",
		       batches[b], count, t, (double)count / t);
	}
	for (size_t i = 0; i < 1000; i++) {
		struct nftset_prefix p = addr_n((uint32_t)i, 30u << 24);
		double t0 = now_s();

		if (nftset_add(nft, NFTSET_PASS, &p, 3600000, "greygate pass") <
		            0 ||
		    nftset_commit(nft, NULL, NULL) != 0) {
			fprintf(stderr, "nft-bench: add failed\n");
			return 1;
		}
		lat[i] = (now_s() - t0) * 1000;
	}
	qsort(lat, 1000, sizeof(*lat), cmp_double);
	printf("pass decision to kernel ack (element visible): median %.3f ms, "
	       "p99 %.3f ms, max %.3f ms\n",
	       lat[500], lat[990], lat[999]);
	nftset_close(nft);
	return 0;
}
