// SPDX-License-Identifier: GPL-2.0-or-later
/* The site's report. Each gateway keeps its own figures (in store_dir,
 * as on one machine) and also shares them through a store shared with
 * the others (grey_store_share_report: counters and the latest delays).
 * The site's report walks every gateway's (grey_store_reports) and sums
 * them: counters added, delays pooled (each gateway's latest
 * GREY_DELAYS_SAVED), counting since the earliest start. A record that
 * does not decode is left out and said. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "loop.h"
#include "policy.h"
#include "log.h"
#include "report.h"
#include "grey_store.h"
#include "site_report.h"

/* --- the site's, summed --- */

struct site {
	struct site_report_here here;
	enum site_report_format format;
	struct grey_counters k;
	int64_t since;
	uint32_t *delays;
	size_t ndelays, delays_alloc;
	struct report_gateway *gateways;
	size_t ngateways, gateways_alloc;
	size_t unreadable;
	bool walking, gone, failed; /* gone: the answer's reader */
	int walk_err;
	void *wake;
};

static void
free_site(struct site *s)
{
	free(s->delays);
	free(s->gateways);
	free(s);
}

/* One gateway's figures added. Return: 0 or -ENOMEM. */
static int
add_gateway(struct site *s, const char *name, const struct grey_counters *k,
            int64_t since, int64_t updated, const uint32_t *delays,
            size_t ndelays)
{
	uint64_t *sum = (uint64_t *)&s->k;
	const uint64_t *add = (const uint64_t *)k;
	struct report_gateway *g;

	if (s->ngateways == s->gateways_alloc) {
		size_t n = s->gateways_alloc ? 2 * s->gateways_alloc : 8;
		void *p = realloc(s->gateways, n * sizeof(*s->gateways));

		if (!p)
			return -ENOMEM;
		s->gateways = p;
		s->gateways_alloc = n;
	}
	if (s->ndelays + ndelays > s->delays_alloc) {
		size_t n = s->ndelays + ndelays;
		void *p = realloc(s->delays, n * sizeof(*s->delays));

		if (!p)
			return -ENOMEM;
		s->delays = p;
		s->delays_alloc = n;
	}
	if (ndelays)
		memcpy(s->delays + s->ndelays, delays,
		       ndelays * sizeof(*delays));
	s->ndelays += ndelays;
	for (size_t i = 0; i < sizeof(*k) / sizeof(uint64_t); i++)
		sum[i] += add[i];
	g = &s->gateways[s->ngateways++];
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->since = since;
	g->updated = updated;
	g->attempts = k->attempts;
	g->passed = k->passed;
	if (!s->since || since < s->since)
		s->since = since;
	return 0;
}

static void
on_figures(const char *gateway, const void *figures, size_t len,
           int64_t updated, void *ctx)
{
	struct site *s = ctx;
	struct grey_stats st;

	if (!strcmp(gateway, s->here.hostname))
		return; /* this gateway's own: counted now, not as written */
	if (grey_stats_decode(figures, len, &st) < 0) {
		s->unreadable++;
		return;
	}
	if (add_gateway(s, gateway, &st.counters, st.since, updated, st.delays,
	                st.ndelays) < 0)
		s->failed = true;
	grey_stats_free(&st);
}

static void
on_walked(int err, size_t unreadable, void *ctx)
{
	struct site *s = ctx;

	s->walking = false;
	s->walk_err = err;
	s->unreadable += unreadable;
	if (s->gone) {
		free_site(s);
		return;
	}
	if (s->wake)
		control_stream_wake(s->wake);
	s->wake = NULL;
}

static int
cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct report_gateway *)a)->name,
	              ((const struct report_gateway *)b)->name);
}

static int
site_more(void *state, FILE *out, void *wake)
{
	struct site *s = state;
	struct report r;

	if (s->walking) {
		s->wake = wake;
		return CONTROL_MORE_LATER;
	}
	if (s->walk_err < 0)
		return s->walk_err;
	if (s->failed)
		return -ENOMEM;
	qsort(s->gateways, s->ngateways, sizeof(*s->gateways), cmp_name);
	report_compute_from(&r, &s->k, s->delays, s->ndelays, s->since,
	                    loop_wall_sec(s->here.loop));
	r.gateways = s->gateways;
	r.ngateways = s->ngateways;
	r.unreadable = s->unreadable;
	if (s->format == SITE_REPORT_SVG)
		report_print_svg(out, &r);
	else if (s->format == SITE_REPORT_JSON)
		report_print_json(out, &r);
	else
		report_print_text(out, &r);
	return 0;
}

/* The reader went: a walk under way frees it when it ends. */
static void
site_free(void *state)
{
	struct site *s = state;

	s->gone = true;
	s->wake = NULL;
	if (!s->walking)
		free_site(s);
}

int
site_report_start(const struct site_report_here *here,
                  enum site_report_format format,
                  struct control_stream *stream, char *err, size_t len)
{
	struct site *s;
	const uint32_t *delays;
	size_t ndelays;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->here = *here;
	s->format = format;
	delays = grey_get_pass_delays(here->grey, &ndelays);
	r = add_gateway(s, here->hostname, grey_get_counters(here->grey),
	                here->stats_since, 0, delays, ndelays);
	if (r == 0)
		r = grey_store_reports(here->records, on_figures, on_walked, s);
	if (r < 0) {
		free_site(s);
		if (r == -EOPNOTSUPP)
			snprintf(err, len,
			         "report --site: this gateway's store is not "
			         "shared (store = %s): its report is the "
			         "site's",
			         here->store);
		else if (r == -ENOTCONN)
			snprintf(err, len, "report --site: %s does not answer",
			         grey_store_where(here->records));
		else
			snprintf(err, len, "report --site: %s", strerror(-r));
		return r == -EOPNOTSUPP ? -EINVAL : r;
	}
	s->walking = true;
	stream->state = s;
	stream->more_later = site_more;
	stream->free = site_free;
	return 0;
}
