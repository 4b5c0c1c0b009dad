/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The unit tests' few asserts: a failed check prints where and why and
 * ends the test program with status 1, so meson counts it as failed. */
#ifndef GREYGATE_CHECK_H
#define GREYGATE_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: %s: check failed: %s\n",       \
				__FILE__, __LINE__, __func__, #cond);          \
			exit(1);                                               \
		}                                                              \
	} while (0)

#define CHECK_INT(got, want)                                                   \
	do {                                                                   \
		long long g_ = (long long)(got), w_ = (long long)(want);       \
		if (g_ != w_) {                                                \
			fprintf(stderr, "%s:%d: %s: %s is %lld, want %lld\n",  \
				__FILE__, __LINE__, __func__, #got, g_, w_);   \
			exit(1);                                               \
		}                                                              \
	} while (0)

#define CHECK_STR(got, want)                                                   \
	do {                                                                   \
		const char *g_ = (got), *w_ = (want);                          \
		if (!g_ || strcmp(g_, w_) != 0) {                              \
			fprintf(stderr, "%s:%d: %s: %s is \"%s\", want "       \
					"\"%s\"\n",                            \
				__FILE__, __LINE__, __func__, #got,            \
				g_ ? g_ : "(null)", w_);                       \
			exit(1);                                               \
		}                                                              \
	} while (0)

/* RUN(test_fn) runs one case and says so, for readable test logs. */
#define RUN(fn)                                                                \
	do {                                                                   \
		fn();                                                          \
		printf("ok %s\n", #fn);                                        \
	} while (0)

/* check_now_sec - the monotonic clock, in seconds: what a test times
 * ("it answered at once", "the loop slept"). */
static inline double
check_now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
