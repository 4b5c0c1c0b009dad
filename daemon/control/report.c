// SPDX-License-Identifier: GPL-2.0-or-later
/* The effectiveness report (see report.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fmt.h"
#include "json.h"
#include "report.h"

/* Upper bounds (exclusive) of the histogram's buckets, in seconds: the
 * steps a mail admin thinks in, from "under a minute" to "over a day". */
static const uint32_t bucket_upper[REPORT_BUCKETS - 1] = {
	60, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 43200, 86400,
};
static const char *const bucket_labels[REPORT_BUCKETS] = {
	"<1m",   "1-5m", "5-10m", "10-15m", "15-30m", "30m-1h",
	"1-2h",  "2-4h", "4-8h",  "8-12h",  "12h-1d", "1d+",
};

const char *
report_bucket_label(int bucket)
{
	return bucket >= 0 && bucket < REPORT_BUCKETS ? bucket_labels[bucket]
						      : "?";
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int
bucket_of(uint32_t sec)
{
	int b = 0;

	while (b < REPORT_BUCKETS - 1 && sec >= bucket_upper[b])
		b++;
	return b;
}

void
report_compute(struct report *r, const struct grey *grey, int64_t since,
	       int64_t until)
{
	size_t n;
	const uint32_t *kept = grey_get_pass_delays(grey, &n);

	report_compute_from(r, grey_get_counters(grey), kept, n, since, until);
}

void
report_compute_from(struct report *r, const struct grey_counters *k,
		    const uint32_t *kept, size_t n, int64_t since,
		    int64_t until)
{
	uint32_t *d = n ? malloc(n * sizeof(*d)) : NULL;
	double sum = 0;

	memset(r, 0, sizeof(*r));
	r->since = since;
	r->until = until;
	r->k = *k;
	/* A triplet first seen before a restart can be retried after it. */
	r->never_retried = r->k.greylisted_new > r->k.retried
				   ? r->k.greylisted_new - r->k.retried
				   : 0;
	r->passed_other = r->k.passed - r->k.passed_retry - r->k.passed_trusted;
	for (size_t i = 0; i < n; i++) {
		sum += kept[i];
		r->hist[bucket_of(kept[i])]++;
	}
	r->ndelays = n;
	if (!n)
		return;
	r->mean = sum / (double)n;
	if (!d) {
		/* No memory to sort: the median and p90 stay 0. */
		for (size_t i = 0; i < n; i++)
			r->max = kept[i] > r->max ? kept[i] : r->max;
		return;
	}
	memcpy(d, kept, n * sizeof(*d));
	qsort(d, n, sizeof(*d), cmp_u32);
	/* Nearest rank: the smallest delay at or above p percent of them. */
	r->median = d[(n - 1) / 2];
	r->p90 = d[(n * 90 + 99) / 100 - 1];
	r->max = d[n - 1];
	free(d);
}

/* "5m 02s", "1h 10m", "2d 3h": delays the way people say them. */
static const char *
human(uint32_t sec, char *buf, size_t len)
{
	if (sec < 60)
		snprintf(buf, len, "%us", sec);
	else if (sec < 3600)
		snprintf(buf, len, "%um %02us", sec / 60, sec % 60);
	else if (sec < 86400)
		snprintf(buf, len, "%uh %02um", sec / 3600, sec % 3600 / 60);
	else
		snprintf(buf, len, "%ud %uh", sec / 86400, sec % 86400 / 3600);
	return buf;
}


static double
percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

#define FUNNEL_ROWS 17
/* The rows up to here count RCPTs: a share of the attempts. */
#define FUNNEL_ROWS_OF_ATTEMPTS 13

/* One funnel row: what it counts, and the figure. */
struct funnel_row {
	const char *key, *label;
	uint64_t value;
};

static int
funnel_rows(const struct report *r, struct funnel_row *rows)
{
	int n = 0;

	rows[n++] = (struct funnel_row){"attempts", "delivery attempts (RCPT)",
					r->k.attempts};
	rows[n++] = (struct funnel_row){"refused_recipient",
					"refused: unknown recipient",
					r->k.refused_recipient};
	rows[n++] = (struct funnel_row){"refused_spf", "refused: SPF fail",
					r->k.refused_spf};
	rows[n++] = (struct funnel_row){"refused_sender_domain",
	                                "refused: sender domain takes no mail",
	                                r->k.refused_sender_domain};
	rows[n++] = (struct funnel_row){"greylisted", "greylisted (new triplets)",
					r->k.greylisted_new};
	rows[n++] = (struct funnel_row){"never_retried",
					"  greylisted, never retried",
					r->never_retried};
	rows[n++] = (struct funnel_row){"passed_retry",
					"  passed greylisting (retry)",
					r->k.passed_retry};
	rows[n++] = (struct funnel_row){"passed_other",
					"passed by STARTTLS",
					r->passed_other};
	rows[n++] = (struct funnel_row){"tls_greylisted",
					"greylisted at STARTTLS (addresses)",
					r->k.tls_greylisted};
	rows[n++] = (struct funnel_row){"passed_trusted",
					"passed at once (DNS signals)",
					r->k.passed_trusted};
	rows[n++] = (struct funnel_row){"fastpath_deliveries",
					"fast-path deliveries (seen)",
					r->k.fastpath_deliveries};
	rows[n++] = (struct funnel_row){"allow_listed", "allow-listed",
					r->k.allow_listed};
	rows[n++] = (struct funnel_row){"trapped", "trapped", r->k.trapped};
	rows[n++] = (struct funnel_row){"fastpath_sessions",
					"fast-path sessions of passed clients",
					r->k.fastpath_sessions};
	rows[n++] = (struct funnel_row){"fastpath_tls",
					"  in TLS (recipients unseen)",
					r->k.fastpath_tls};
	rows[n++] = (struct funnel_row){"policy_attempts",
					"asked by the MTA (policy door)",
					r->k.policy_attempts};
	rows[n++] = (struct funnel_row){"policy_passed",
					"  of passed clients",
					r->k.policy_passed};
	return n;
}

/* "site of 3 gateways, " or "". */
static const char *
scope(const struct report *r, char *buf, size_t len)
{
	buf[0] = 0;
	if (r->gateways)
		snprintf(buf, len, "site of %zu gateway%s, ", r->ngateways,
			 r->ngateways == 1 ? "" : "s");
	return buf;
}

/* A site's gateways, one line each. */
static void
print_gateways(FILE *out, const struct report *r)
{
	char a[32], ago[32];

	fprintf(out, "%-32s %-20s %-12s %10s %8s\n", "GATEWAY",
		"COUNTING-SINCE", "UPDATED", "ATTEMPTS", "PASSED");
	for (size_t i = 0; i < r->ngateways; i++) {
		const struct report_gateway *g = &r->gateways[i];

		char t[24];

		if (!g->updated)
			snprintf(ago, sizeof(ago), "now");
		else
			snprintf(ago, sizeof(ago), "%s ago",
				 human(r->until > g->updated
					       ? (uint32_t)(r->until -
							    g->updated)
					       : 0,
				       t, sizeof(t)));
		fprintf(out, "%-32s %-20s %-12s %10llu %8llu\n", g->name,
			fmt_utc(g->since, a), ago,
			(unsigned long long)g->attempts,
			(unsigned long long)g->passed);
	}
	if (r->unreadable)
		fprintf(out, "(%zu gateway record(s) could not be read: left "
			     "out)\n",
			r->unreadable);
	fputc('\n', out);
}

void
report_print_text(FILE *out, const struct report *r)
{
	struct funnel_row rows[FUNNEL_ROWS];
	int n = funnel_rows(r, rows);
	char a[32], b[32], m[4][32], s[64];
	uint64_t top = 0;

	fprintf(out, "greygate report, %s%s to %s\n\n",
		scope(r, s, sizeof(s)), fmt_utc(r->since, a),
		fmt_utc(r->until, b));
	if (r->gateways)
		print_gateways(out, r);
	for (int i = 0; i < n; i++) {
		fprintf(out, "%-36s %10llu", rows[i].label,
			(unsigned long long)rows[i].value);
		if (i > 0 && r->k.attempts && i < FUNNEL_ROWS_OF_ATTEMPTS)
			fprintf(out, "  %5.1f%% of attempts",
				percent(rows[i].value, r->k.attempts));
		fputc('\n', out);
	}
	/* What the sensor cannot see, said where the figures are read. */
	if (r->k.fastpath_tls)
		fprintf(out, "\n%llu fast-path sessions were in TLS: what they "
			     "delivered, and any retry of a greylisted triplet "
			     "among it, cannot be seen (such retries count as "
			     "never retried); their visits still refresh the "
			     "pass.\n",
			(unsigned long long)r->k.fastpath_tls);
	fprintf(out, "\ndelay to delivery of mail that passed, first attempt "
		     "to delivery (%llu deliveries%s):\n",
		(unsigned long long)r->ndelays,
		r->k.fastpath_tls ? "; those in TLS after a pass are not seen"
				  : "");
	if (!r->ndelays) {
		fprintf(out, "  none yet\n");
		return;
	}
	fprintf(out, "  median %s, mean %s, p90 %s, max %s\n",
		human(r->median, m[0], 32),
		human((uint32_t)(r->mean + 0.5), m[1], 32),
		human(r->p90, m[2], 32), human(r->max, m[3], 32));
	for (int i = 0; i < REPORT_BUCKETS; i++)
		top = r->hist[i] > top ? r->hist[i] : top;
	for (int i = 0; i < REPORT_BUCKETS; i++) {
		int bar = top ? (int)((40 * r->hist[i] + top - 1) / top) : 0;

		fprintf(out, "  %-7s %8llu  %.*s\n", bucket_labels[i],
			(unsigned long long)r->hist[i], bar,
			"########################################");
	}
}

void
report_print_json(FILE *out, const struct report *r)
{
	struct funnel_row rows[FUNNEL_ROWS];
	int n = funnel_rows(r, rows);
	char a[32], b[32];

	fprintf(out, "{\"since\":\"%s\",\"until\":\"%s\",\"funnel\":{",
		fmt_utc(r->since, a),
		fmt_utc(r->until, b));
	for (int i = 0; i < n; i++)
		fprintf(out, "%s\"%s\":%llu", i ? "," : "", rows[i].key,
			(unsigned long long)rows[i].value);
	fprintf(out,
		"},\"delay\":{\"passes\":%llu,\"median\":%u,\"mean\":%.1f,"
		"\"p90\":%u,\"max\":%u,\"histogram\":[",
		(unsigned long long)r->ndelays, r->median, r->mean, r->p90,
		r->max);
	for (int i = 0; i < REPORT_BUCKETS; i++) {
		fprintf(out, "%s{\"bucket\":", i ? "," : "");
		json_put_string(out, bucket_labels[i]);
		fprintf(out, ",\"count\":%llu}",
			(unsigned long long)r->hist[i]);
	}
	fputs("]}", out);
	if (r->gateways) {
		fputs(",\"gateways\":[", out);
		for (size_t i = 0; i < r->ngateways; i++) {
			const struct report_gateway *g = &r->gateways[i];

			fputs(i ? ",{\"name\":" : "{\"name\":", out);
			json_put_string(out, g->name);
			fprintf(out, ",\"since\":\"%s\",\"updated\":",
				fmt_utc(g->since, a));
			if (g->updated)
				fprintf(out, "\"%s\"", fmt_utc(g->updated, b));
			else
				fputs("null", out);
			fprintf(out, ",\"attempts\":%llu,\"passed\":%llu}",
				(unsigned long long)g->attempts,
				(unsigned long long)g->passed);
		}
		fprintf(out, "],\"unreadable\":%zu", r->unreadable);
	}
	fputs("}\n", out);
}

/* Text in SVG: the few characters XML reserves, escaped. */
static void
put_xml(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", out);
		else if (*s == '>')
			fputs("&gt;", out);
		else if (*s == '&')
			fputs("&amp;", out);
		else
			fputc(*s, out);
	}
}

/* SVG: the funnel as horizontal bars, the histogram as columns below. */
#define SVG_W 720
#define SVG_ROW 26
#define SVG_BAR_X 300
#define SVG_BAR_W 330
#define SVG_HIST_H 180

void
report_print_svg(FILE *out, const struct report *r)
{
	struct funnel_row rows[FUNNEL_ROWS];
	int n = funnel_rows(r, rows);
	int hist_top = 60 + n * SVG_ROW + 50;
	int height = hist_top + SVG_HIST_H + 60;
	int col_w = (SVG_W - 80) / REPORT_BUCKETS;
	uint64_t top = 0;
	char a[32], b[32], m[4][32], s[64];

	fprintf(out,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" font-family=\"sans-serif\" font-size=\"13\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		"<text x=\"20\" y=\"28\" font-size=\"17\">greygate: %s%s to "
		"%s</text>\n",
		SVG_W, height, scope(r, s, sizeof(s)), fmt_utc(r->since, a),
		fmt_utc(r->until, b));
	for (int i = 0; i < n; i++) {
		int y = 50 + i * SVG_ROW;
		/* RCPT rows against the attempts, session rows against the
		 * sessions. */
		uint64_t whole = i < FUNNEL_ROWS_OF_ATTEMPTS
					 ? r->k.attempts
					 : rows[FUNNEL_ROWS_OF_ATTEMPTS].value;
		int w = whole ? (int)((double)SVG_BAR_W *
				      (double)rows[i].value / (double)whole)
			      : 0;

		fprintf(out,
			"<text x=\"20\" y=\"%d\">%s</text>\n"
			"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"18\" "
			"fill=\"%s\"/>\n"
			"<text x=\"%d\" y=\"%d\">%llu</text>\n",
			y + 14, rows[i].label, SVG_BAR_X, y, w,
			i == 2 ? "#c0392b" : "#2e86c1", SVG_BAR_X + w + 6,
			y + 14, (unsigned long long)rows[i].value);
	}
	fprintf(out,
		"<text x=\"20\" y=\"%d\" font-size=\"15\">Delay added to "
		"passed mail: median %s, mean %s, p90 %s, max %s</text>\n",
		hist_top - 14, human(r->median, m[0], 32),
		human((uint32_t)(r->mean + 0.5), m[1], 32),
		human(r->p90, m[2], 32), human(r->max, m[3], 32));
	for (int i = 0; i < REPORT_BUCKETS; i++)
		top = r->hist[i] > top ? r->hist[i] : top;
	for (int i = 0; i < REPORT_BUCKETS; i++) {
		int h = top ? (int)((double)SVG_HIST_H * (double)r->hist[i] /
				    (double)top)
			    : 0;
		int x = 40 + i * col_w;
		int base = hist_top + SVG_HIST_H;

		fprintf(out,
			"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
			"fill=\"#27ae60\"/>\n"
			"<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%llu"
			"</text>\n"
			"<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">",
			x, base - h, col_w - 6, h, x + (col_w - 6) / 2,
			base - h - 4, (unsigned long long)r->hist[i],
			x + (col_w - 6) / 2, base + 18);
		put_xml(out, bucket_labels[i]);
		fputs("</text>\n", out);
	}
	fprintf(out, "</svg>\n");
}
