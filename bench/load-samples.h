/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the load generators and benchmarks share: a monotonic clock, a
 * fast deterministic random stream (xorshift: the same events every run),
 * and latency samples kept as they come and read as quantiles at the
 * end. */
#ifndef GREYGATE_BENCH_LOAD_SAMPLES_H
#define GREYGATE_BENCH_LOAD_SAMPLES_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline uint64_t
bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* An IPv4 address and a port, as given on a command line, into sa.
 * Return: 0, or -1 (not an IPv4 address). */
static inline int
bench_ipv4_address(const char *ip, const char *port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)atoi(port));
	return inet_pton(AF_INET, ip, &sa->sin_addr) == 1 ? 0 : -1;
}

/* Seconds since t0 (CLOCK_MONOTONIC). */
static inline double
bench_seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) +
	       (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static inline uint64_t
bench_rand(void)
{
	static uint64_t rng = 0x9e3779b97f4a7c15ull;

	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct bench_samples {
	uint64_t *v;
	size_t n, cap;
};

/* bench_samples_add - keep one. Return: 0, or -1 (out of memory). */
static inline int
bench_samples_add(struct bench_samples *s, uint64_t value)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 65536;
		uint64_t *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = value;
	return 0;
}

static inline int
bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* bench_samples_sort - sort them, for bench_samples_at. */
static inline void
bench_samples_sort(struct bench_samples *s)
{
	qsort(s->v, s->n, sizeof(*s->v), bench_cmp_u64);
}

/* bench_samples_at - the sample at permille (500: the median, 990: p99)
 * once sorted; 0 without samples. */
static inline uint64_t
bench_samples_at(const struct bench_samples *s, unsigned permille)
{
	return s->n ? s->v[s->n * permille / 1000] : 0;
}

#endif
