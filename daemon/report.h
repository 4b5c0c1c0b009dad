/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The effectiveness report: the funnel (attempts, greylisted and never
 * retried, passed, fast-path deliveries, allow-listed, trapped) and the
 * delay greylisting added to the mail that passed, as text, JSON or an
 * SVG picture. The same figures for greygatectl report and --replay. */
#ifndef GREYGATE_REPORT_H
#define GREYGATE_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "policy.h"

#define REPORT_BUCKETS 12

struct report {
	int64_t since, until; /* the span the counters cover (epoch s) */
	struct grey_counters k;
	uint64_t never_retried; /* greylisted triplets that never came back */
	uint64_t passed_other;  /* passes by STARTTLS or exempt recipient */
	/* the delays of passes by retry, in seconds */
	uint64_t ndelays;
	uint32_t median, p90, max;
	double mean;
	uint64_t hist[REPORT_BUCKETS];
};

/* report_bucket_label - "5-10m" and so on; the last is open ("1d+"). */
const char *report_bucket_label(int bucket);

/* report_compute - the figures from the greylist's counters and kept
 * delays over [since, until]. */
void report_compute(struct report *r, const struct grey *grey, int64_t since,
		    int64_t until);

void report_print_text(FILE *out, const struct report *r);
void report_print_json(FILE *out, const struct report *r);
void report_print_svg(FILE *out, const struct report *r);

#endif
