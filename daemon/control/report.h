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

/* One gateway's share of a site's report. */
struct report_gateway {
	char name[256];
	int64_t since;   /* when its counting began */
	int64_t updated; /* when its figures were written (0: counted now) */
	uint64_t attempts, passed;
};

struct report {
	int64_t since, until; /* the span the counters cover (epoch s) */
	/* a site's report (the sum of every gateway's figures): each
	 * gateway's share, and the records that could not be read and are
	 * left out; NULL for one gateway's report */
	const struct report_gateway *gateways;
	size_t ngateways, unreadable;
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

/* report_compute_from - the same from counters and delays (n of them,
 * any order) gathered elsewhere: a site's, from every gateway's share. */
void report_compute_from(struct report *r, const struct grey_counters *k,
			 const uint32_t *delays, size_t n, int64_t since,
			 int64_t until);

void report_print_text(FILE *out, const struct report *r);
void report_print_json(FILE *out, const struct report *r);
void report_print_svg(FILE *out, const struct report *r);

#endif
