// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the effectiveness report (daemon/control/report.h): from counters and
 * delays made by hand, the funnel's derived rows (greylisted and never
 * retried, passed otherwise), the delays' median, p90 (nearest rank),
 * mean and max, each delay in its bucket at the edges the labels say;
 * the text, JSON (read back by a JSON parser: python3's) and SVG say the
 * same figures; a site's report names each gateway's share and the
 * records left out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "json_check.h"
#include "report.h"

#define T0 1700000000

static struct grey_counters
counters(void)
{
	struct grey_counters k = {0};

	k.attempts = 1000;
	k.greylisted_new = 400;
	k.retried = 150;
	k.passed = 220;
	k.passed_retry = 150;
	k.passed_trusted = 30;
	k.trapped = 3;
	k.allow_listed = 60;
	return k;
}

/* What out holds once r is printed by print. */
static char *
printed(void (*print)(FILE *, const struct report *), const struct report *r)
{
	static char text[65536];
	FILE *f = fmemopen(text, sizeof(text), "w");

	CHECK(f);
	print(f, r);
	CHECK(!ferror(f));
	fclose(f);
	return text;
}

static void
test_funnel_and_delays(void)
{
	struct grey_counters k = counters();
	/* 10 delays, unordered: sorted 30 60 299 300 301 900 1800 3599
	 * 3600 90000 */
	uint32_t d[] = {3600, 30, 300, 90000, 299, 1800, 60, 301, 3599, 900};
	struct report r;

	report_compute_from(&r, &k, d, 10, T0, T0 + 86400);
	CHECK_INT(r.never_retried, 250);
	CHECK_INT(r.passed_other, 40);
	CHECK_INT(r.ndelays, 10);
	CHECK_INT(r.median, 301);   /* rank 5 of 10 */
	CHECK_INT(r.p90, 3600);     /* rank 9 of 10 */
	CHECK_INT(r.max, 90000);
	CHECK(r.mean > 10088.8 && r.mean < 10089.0); /* 100889 / 10 */
	/* each at its bucket's edges: <1m, 1-5m, 5-10m, ... 1d+ */
	CHECK_INT(r.hist[0], 1);  /* 30 */
	CHECK_INT(r.hist[1], 2);  /* 60, 299 */
	CHECK_INT(r.hist[2], 2);  /* 300, 301 */
	CHECK_INT(r.hist[3], 0);
	CHECK_INT(r.hist[4], 1);  /* 900 */
	CHECK_INT(r.hist[5], 2);  /* 1800, 3599 */
	CHECK_INT(r.hist[6], 1);  /* 3600 */
	CHECK_INT(r.hist[11], 1); /* 90000 */
	CHECK_STR(report_bucket_label(0), "<1m");
	CHECK_STR(report_bucket_label(11), "1d+");
	CHECK_STR(report_bucket_label(12), "?");
	CHECK_STR(report_bucket_label(-1), "?");
}

/* More retries than new triplets (those first seen before a restart):
 * never retried is 0, not a wrapped number; no delays: all zero. */
static void
test_edges(void)
{
	struct grey_counters k = {0};
	struct report r;

	k.greylisted_new = 5;
	k.retried = 9;
	report_compute_from(&r, &k, NULL, 0, T0, T0 + 60);
	CHECK_INT(r.never_retried, 0);
	CHECK_INT(r.ndelays, 0);
	CHECK_INT(r.median, 0);
	CHECK_INT(r.max, 0);
	CHECK(strstr(printed(report_print_text, &r), "none yet"));
	/* one delay: it is the median, the p90 and the max */
	report_compute_from(&r, &k, (uint32_t[]){420}, 1, T0, T0 + 60);
	CHECK_INT(r.median, 420);
	CHECK_INT(r.p90, 420);
	CHECK_INT(r.max, 420);
}

static void
test_text(void)
{
	struct grey_counters k = counters();
	uint32_t d[] = {300, 600};
	struct report r;
	const char *t;

	report_compute_from(&r, &k, d, 2, T0, T0 + 3600);
	t = printed(report_print_text, &r);
	CHECK(strstr(t, "greygate report, "));
	CHECK(strstr(t, "delivery attempts (RCPT)"));
	CHECK(strstr(t, "  greylisted, never retried"));
	CHECK(strstr(t, "250"));
	CHECK(strstr(t, "25.0% of attempts")); /* never retried */
	CHECK(strstr(t, "median 5m 00s, mean 7m 30s, p90 10m 00s, max "
	                "10m 00s"));
	CHECK(strstr(t, "(2 deliveries"));
}

/* The JSON is JSON, and says the same figures. */
static void
test_json(void)
{
	struct grey_counters k = counters();
	uint32_t d[] = {300, 600, 90000};
	struct report r;
	const char *j;

	report_compute_from(&r, &k, d, 3, T0, T0 + 3600);
	j = printed(report_print_json, &r);
	json_check(j,
	           "f = r['funnel']\nd = r['delay']\n"
	           "assert f['attempts'] == 1000 and "
	           "f['never_retried'] == 250 and f['passed_other'] == 40, f\n"
	           "assert d['passes'] == 3 and d['median'] == 600 and "
	           "d['max'] == 90000, d\n"
	           "h = {b['bucket']: b['count'] for b in d['histogram']}\n"
	           "assert h['5-10m'] == 1 and h['10-15m'] == 1 and "
	           "h['1d+'] == 1 and len(h) == 12, h");
}

/* A site: each gateway's share named, the unreadable said. */
static void
test_site(void)
{
	struct grey_counters k = counters();
	struct report_gateway g[2] = {
	        {.name = "mx1.test", .since = T0, .updated = T0 + 50,
	         .attempts = 600, .passed = 120},
	        {.name = "mx2.test", .since = T0 + 10, .updated = 0,
	         .attempts = 400, .passed = 100},
	};
	struct report r;
	const char *t;

	report_compute_from(&r, &k, NULL, 0, T0, T0 + 3600);
	r.gateways = g;
	r.ngateways = 2;
	r.unreadable = 1;
	t = printed(report_print_text, &r);
	CHECK(strstr(t, "site of 2 gateways, "));
	CHECK(strstr(t, "mx1.test"));
	CHECK(strstr(t, "mx2.test"));
	CHECK(strstr(t, "(1 gateway record(s) could not be read"));
	t = printed(report_print_json, &r);
	CHECK(strstr(t, "\"gateways\":[{\"name\":\"mx1.test\""));
	t = printed(report_print_svg, &r);
	CHECK(!strncmp(t, "<svg", 4) || strstr(t, "<svg"));
	CHECK(strstr(t, "</svg>"));
}

int
main(void)
{
	RUN(test_funnel_and_delays);
	RUN(test_edges);
	RUN(test_text);
	RUN(test_json);
	RUN(test_site);
	return 0;
}
