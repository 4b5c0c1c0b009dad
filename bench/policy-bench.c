// SPDX-License-Identifier: GPL-2.0-or-later
/* Decisions per second of the real policy core on a stream of events with
 * the article's mix, side by side in one run with the floor: a plain
 * in-process hash-table lookup of the same keys. The policy runs over its
 * LMDB store on disk and on tmpfs (/dev/shm), committing as the daemon
 * does (10,000 writes waiting, or 200 ms since the last commit). Also
 * prints resident
 * memory and store size per million triplets.
 *
 *   policy-bench [EVENTS] [DISK_DIR]    (defaults: 10000000, /var/tmp)
 *
 * The stream, over a simulated month: 76% of new triplets come from
 * fire-and-forget senders (random addresses across many /16s) and never
 * retry; the rest retry after 5 minutes to 2 hours, as real MTAs do; a
 * share of events are deliveries of passed clients on the fast path. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench-store.h"
#include "load-samples.h"
#include "policy.h"
#include "store.h"

#define T0 1700000000LL
#define MONTH (30 * 86400)
#define SENDERS (1 << 20)
#define RCPTS 4096
/* The daemon's rule: commit when 10,000 writes wait or 200 ms passed. */
#define FLUSH_PENDING 10000
#define FLUSH_MS 200

struct event {
	int64_t now;
	uint32_t ip;     /* host order */
	uint32_t sender; /* index into the sender pool */
	uint16_t rcpt;   /* index into the recipient pool */
	uint8_t fast;    /* a fast-path delivery (reply 250) */
};

static char (*senders)[40];
static char (*rcpts)[32];

/* Retries waiting to be emitted: a ring ordered well enough for a
 * benchmark (each retry is emitted at the first event past its time). */
struct retry {
	int64_t due;
	struct event ev;
};

static struct event *
make_stream(size_t n, size_t *legit_triplets)
{
	struct event *evs = malloc(n * sizeof(*evs));
	struct retry *ring = malloc((1u << 20) * sizeof(*ring));
	uint32_t *passed = malloc((1u << 16) * sizeof(*passed));
	size_t head = 0, tail = 0, npassed = 0, legit = 0;

	if (!evs || !ring || !passed) {
		fprintf(stderr, "policy-bench: out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < n; i++) {
		int64_t now = T0 + (int64_t)((double)i / (double)n * MONTH);
		uint64_t r = bench_rand();
		struct event *e = &evs[i];

		if (head != tail && ring[head % (1u << 20)].due <= now) {
			*e = ring[head % (1u << 20)].ev;
			e->now = now;
			head++;
			/* The retry passes: its client delivers later. */
			passed[npassed++ % (1u << 16)] = e->ip;
			continue;
		}
		e->now = now;
		e->fast = 0;
		e->sender = (uint32_t)(r >> 8) % SENDERS;
		e->rcpt = (uint16_t)((r >> 40) % RCPTS);
		if (r % 100 < 15 && npassed) {
			/* a passed client delivering on the fast path */
			e->ip = passed[(r >> 20) % (npassed < (1u << 16)
							     ? npassed
							     : (1u << 16))];
			e->fast = 1;
		} else if (r % 100 < 80) {
			/* a bot: random address anywhere, never retries */
			e->ip = (uint32_t)(bench_rand() >> 32);
		} else {
			/* a real MTA: from one of 65536 /24s, retries */
			e->ip = (uint32_t)(0x0A000000u |
					   ((r >> 16) % 65536) << 8 | (r & 0xff));
			if (tail - head < (1u << 20)) {
				ring[tail % (1u << 20)].due =
					now + 300 + (int64_t)(bench_rand() % 7200);
				ring[tail % (1u << 20)].ev = *e;
				tail++;
				legit++;
			}
		}
	}
	free(ring);
	free(passed);
	*legit_triplets = legit;
	return evs;
}

static long
rss_kib(void)
{
	long kib = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

/* --- the floor: one open-addressing table of key fingerprints --- */

struct slot {
	uint64_t key;
	int64_t first_seen;
};

static uint64_t
fingerprint(uint32_t net, const char *s, const char *r)
{
	uint64_t h = 1469598103934665603ull ^ net;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	h = (h ^ 0xff) * 1099511628211ull;
	for (; *r; r++)
		h = (h ^ (uint8_t)*r) * 1099511628211ull;
	return h | 1;
}

static double
run_floor(const struct event *evs, size_t n, uint64_t *passes)
{
	size_t cap = 1u << 25;
	struct slot *t = calloc(cap, sizeof(*t));
	struct timespec t0;
	double secs;

	*passes = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < n; i++) {
		const struct event *e = &evs[i];
		char s[GREY_ADDR_MAX], r[GREY_ADDR_MAX];
		uint64_t k;
		size_t j;

		/* The same normalisation work as the policy does. */
		grey_normalize_sender(senders[e->sender], s, sizeof(s));
		grey_normalize_rcpt(rcpts[e->rcpt], r, sizeof(r));
		k = fingerprint(e->ip & 0xffffff00u, s, r);
		for (j = k & (cap - 1); t[j].key && t[j].key != k;
		     j = (j + 1) & (cap - 1))
			;
		if (!t[j].key) {
			t[j].key = k;
			t[j].first_seen = e->now;
		} else if (e->now - t[j].first_seen >= 300) {
			(*passes)++;
		}
	}
	secs = bench_seconds_since(&t0);
	free(t);
	return secs;
}

static long
dir_kib(const char *dir)
{
	char path[600];
	struct stat st;

	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	return stat(path, &st) == 0 ? (long)(st.st_blocks / 2) : 0;
}

static double
run_policy(const struct event *evs, size_t n, const char *base,
	   uint64_t *passes, long *store_kib, size_t *triplets, long *rss)
{
	char dir[512], cmd[600];
	struct grey_config cfg;
	struct store *store;
	struct grey *grey;
	struct timespec t0;
	double secs, last_flush = 0;
	long rss0 = rss_kib();

	snprintf(dir, sizeof(dir), "%s/greygate-bench-XXXXXX", base);
	if (!mkdtemp(dir)) {
		perror(dir);
		exit(1);
	}
	if (store_open(dir, false, &store) < 0) {
		fprintf(stderr, "policy-bench: cannot open a store in %s\n", dir);
		exit(1);
	}
	grey_config_defaults(&cfg);
	grey = grey_new(&cfg);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < n; i++) {
		const struct event *e = &evs[i];
		struct grey_addr a = {.family = AF_INET};
		struct grey_decision d;
		uint32_t be = htonl(e->ip);

		memcpy(a.bytes, &be, 4);
		struct grey_attempt at = {
			.kind = GREY_ATTEMPT_RCPT, .now = e->now, .client = a,
			.helo = "", .sender = senders[e->sender],
			.rcpt = rcpts[e->rcpt],
			.path = e->fast ? GREY_PATH_FAST : GREY_PATH_TARPIT,
			.reply = e->fast ? 250 : 451};

		if (store_decide(store, grey, &at, &d) < 0) {
			fprintf(stderr, "policy-bench: store error\n");
			exit(1);
		}
		if ((i & 255) == 0 || store_pending(store) >= FLUSH_PENDING) {
			double t = bench_seconds_since(&t0);

			if (store_pending(store) >= FLUSH_PENDING ||
			    t - last_flush >= FLUSH_MS / 1000.0) {
				bench_store_flush(store);
				last_flush = t;
			}
		}
	}
	bench_store_flush(store);
	secs = bench_seconds_since(&t0);
	*passes = grey_get_counters(grey)->passed_retry;
	*triplets = store_count(store, -1);
	*rss = rss_kib() - rss0;
	grey_free(grey);
	store_close(store);
	*store_kib = dir_kib(dir);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "policy-bench: could not remove %s\n", dir);
	return secs;
}

int
main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
	const char *disk = argc > 2 ? argv[2] : "/var/tmp";
	const char *bases[] = {disk, "/dev/shm"};
	const char *names[] = {"policy, LMDB on disk", "policy, LMDB on tmpfs"};
	size_t legit;
	struct event *evs;
	uint64_t passes;
	double floor_s;

	senders = malloc((size_t)SENDERS * sizeof(*senders));
	rcpts = malloc(RCPTS * sizeof(*rcpts));
	for (size_t i = 0; i < SENDERS; i++) {
		/* some with BATV and VERP tags, as list mail has */
		if (i % 10 == 0)
			snprintf(senders[i], sizeof(senders[i]),
				 "prvs=%04zx=user%zu@s%zu.test", i & 0xffff, i,
				 i % 5000);
		else if (i % 10 == 1)
			snprintf(senders[i], sizeof(senders[i]),
				 "bounce-%zu-list@l%zu.test", i, i % 300);
		else
			snprintf(senders[i], sizeof(senders[i]),
				 "User%zu@S%zu.test", i, i % 50000);
	}
	for (size_t i = 0; i < RCPTS; i++)
		snprintf(rcpts[i], sizeof(rcpts[i]), "rcpt%zu@example.org", i);
	evs = make_stream(n, &legit);
	printf("policy-bench: %zu events over a simulated month, %zu of them "
	       "first sights of retrying senders\n\n",
	       n, legit);
	printf("%-26s %12s %14s %10s %14s %12s\n", "", "seconds",
	       "decisions/s", "passes", "store KiB/Mtr", "RSS KiB");
	floor_s = run_floor(evs, n, &passes);
	printf("%-26s %12.2f %14.0f %10llu %14s %12s\n",
	       "floor: hash-table lookup", floor_s, (double)n / floor_s,
	       (unsigned long long)passes, "-", "-");
	for (int i = 0; i < 2; i++) {
		long kib, rss;
		size_t triplets;
		double s = run_policy(evs, n, bases[i], &passes, &kib,
				      &triplets, &rss);

		printf("%-26s %12.2f %14.0f %10llu %14.0f %12ld\n", names[i], s,
		       (double)n / s, (unsigned long long)passes,
		       triplets ? (double)kib * 1e6 / (double)triplets : 0.0,
		       rss);
		if (i == 0)
			printf("  (%zu triplets stored; %.1fx the floor's "
			       "time)\n",
			       triplets, s / floor_s);
	}
	free(evs);
	return 0;
}
