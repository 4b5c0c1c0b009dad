// SPDX-License-Identifier: GPL-2.0-or-later
/* The store interface's report side over Redis (grey_store.h:
 * share_report, reports): each gateway writes its report figures, every
 * few seconds when they changed, as PREFIXreport:HOSTNAME (a record
 * grey_stats_encode made); greygatectl report --site walks them all
 * (site_report.c sums them). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grey_store.h"
#include "log.h"
#include "shared-int.h"

/* --- this gateway's share, written --- */

static void
on_report_written(int err, void *ctx)
{
	struct shared *sh = ctx;

	sh->report_writing = false;
	if (!err)
		return;
	sh->report_unsent = true; /* again at the next save */
	if (err != -EIO)          /* (-EIO: Redis away, said already) */
		log_warnx("report: the shared store refused this gateway's "
		          "figures: %s",
		          strerror(-err));
}

void
shared_share_report(struct grey_store *store, const struct grey *grey,
                    int64_t since, bool changed)
{
	struct shared *sh = shared_of(store);
	void *rec;
	size_t len;
	int r;

	if (changed)
		sh->report_unsent = true;
	if (!sh->report_unsent || !sh->agreed || sh->report_writing)
		return;
	r = grey_stats_encode(grey, since, &rec, &len);
	if (r < 0)
		return;
	r = store_redis_put_report(sh->c, SHARED_PREFIX, sh->cfg.hostname,
	                           rec, len, loop_wall_sec(sh->loop),
	                           on_report_written, sh);
	free(rec);
	if (r < 0)
		return;
	sh->report_unsent = false;
	sh->report_writing = true;
}

/* --- every gateway's, walked: told as they come --- */

struct reports_walk {
	grey_store_report_fn *fn;
	grey_store_reports_done_fn *done;
	void *ctx;
};

static void
on_reports_walked(int err, const struct store_redis_scan_counts *n, void *ctx)
{
	struct reports_walk *w = ctx;

	w->done(err, n->bad, w->ctx);
	free(w);
}

static void
on_report(const char *gateway, const void *figures, size_t len,
          int64_t updated, void *ctx)
{
	struct reports_walk *w = ctx;

	w->fn(gateway, figures, len, updated, w->ctx);
}

int
shared_reports(struct grey_store *store, grey_store_report_fn *fn,
               grey_store_reports_done_fn *done, void *ctx)
{
	struct shared *sh = shared_of(store);
	struct reports_walk *w;
	int r;

	if (!sh->agreed)
		return -ENOTCONN;
	w = malloc(sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fn = fn;
	w->done = done;
	w->ctx = ctx;
	r = store_redis_scan_reports(sh->c, SHARED_PREFIX, on_report,
	                             on_reports_walked, w);
	if (r < 0)
		free(w);
	return r;
}

