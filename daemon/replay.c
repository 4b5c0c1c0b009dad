// SPDX-License-Identifier: GPL-2.0-or-later
/* Replay of a capture through the sensor and the policy (see replay.h).
 * There is no tarpit to tell the paths apart, so every RCPT is decided as
 * greylisting would have: from the state, as if it came first to the
 * tarpit unless its client had passed. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allow.h"
#include "attempt.h"
#include "json.h"
#include "replay.h"
#include "report.h"

struct replay {
	const struct replay_opts *o;
	struct store *store; /* a throw-away one */
	struct grey *grey;
	int64_t first, last; /* packet time span */
	int store_errors;
};

static void
print_decision(const struct sensor_event *ev, const struct grey_decision *d)
{
	char ip[INET6_ADDRSTRLEN];

	inet_ntop(ev->family, ev->client, ip, sizeof(ip));
	printf("{\"ts\":%lld.%06ld,\"client\":\"%s\",\"helo\":",
	       (long long)ev->ts.tv_sec, (long)ev->ts.tv_usec, ip);
	json_put_string(stdout, ev->helo);
	fputs(",\"from\":", stdout);
	json_put_string(stdout, ev->from);
	fputs(",\"to\":", stdout);
	json_put_string(stdout, ev->to);
	printf(",\"reply\":%d,\"action\":\"%s\",\"reason\":\"%s\"}\n",
	       ev->reply,
	       d->action == GREY_ACTION_NONE ? "none"
					     : grey_action_name(d->action),
	       d->reason == GREY_REASON_NONE ? "none"
					     : grey_reason_name(d->reason));
}

static void
on_event(const struct sensor_event *ev, void *ctx)
{
	struct replay *rp = ctx;
	struct grey_attempt a;
	struct grey_decision d;
	int64_t now = ev->ts.tv_sec;

	/* Packet time is the clock of a replay. */
	if (!attempt_of_event(ev, now, &a))
		return;
	if (!rp->first)
		rp->first = now;
	rp->last = now;
	/* No tarpit to tell the paths apart: decided from the state, as if
	 * an unproven client came to the tarpit (which offers STARTTLS when
	 * tls_pass is not no). */
	a.path = GREY_PATH_UNKNOWN;
	if (store_decide(rp->store, rp->grey, &a, &d) < 0) {
		rp->store_errors++;
		return;
	}
	if (a.kind == GREY_ATTEMPT_RCPT && rp->o->output == REPLAY_EVENTS_JSON)
		print_decision(ev, &d);
}

static int
write_svg(const char *path, const struct report *r)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "greygated: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	report_print_svg(f, r);
	if (fclose(f) != 0) {
		fprintf(stderr, "greygated: %s: %s\n", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

int
replay_run(const struct config *cfg, const struct replay_opts *o)
{
	struct replay rp = {.o = o};
	struct sensor_capture *cap = NULL;
	struct sensor *sensor = NULL;
	struct store *store = NULL;
	char err[256] = "";
	struct report rep;
	int r, flushed = 0;

	r = sensor_capture_open_file(o->file, &cfg->sensor, &cap, err);
	if (r < 0) {
		fprintf(stderr, "greygated: %s\n", err);
		return 2;
	}
	/* The greylist lives in a throw-away store: nothing of a replay
	 * reaches the real one. */
	r = store_open_temp(&store);
	rp.store = store;
	rp.grey = r == 0 ? grey_new(&cfg->grey) : NULL;
	sensor = rp.grey ? sensor_new(&cfg->sensor, on_event, &rp) : NULL;
	if (!sensor) {
		fprintf(stderr, "greygated: replay: cannot set up: %s\n",
			strerror(r < 0 ? -r : ENOMEM));
		r = 2;
		goto out;
	}
	for (int i = 0; i < cfg->nexempt; i++)
		grey_exempt_add(rp.grey, cfg->exempt[i]);
	for (int i = 0; i < cfg->ntraps; i++)
		grey_trap_add(rp.grey, cfg->traps[i]);
	allow_load_to_policy(rp.grey, cfg->allow_dir);
	while ((r = sensor_capture_dispatch(cap, sensor, -1)) > 0)
		/* A commit now and then keeps LMDB's dirty pages bounded. */
		if (store_pending(store) > 10000 &&
		    (flushed = store_flush(store)) < 0)
			break;
	sensor_finish(sensor);
	if (flushed < 0) {
		fprintf(stderr, "greygated: replay: the store cannot be "
				"written: %s\n",
			strerror(-flushed));
		r = 2;
		goto out;
	}
	if (r < 0) {
		fprintf(stderr, "greygated: %s: read failed\n", o->file);
		r = 2;
		goto out;
	}
	if (rp.store_errors)
		fprintf(stderr, "greygated: replay: %d decisions skipped on "
				"store errors\n",
			rp.store_errors);
	report_compute(&rep, rp.grey, rp.first, rp.last);
	if (o->output == REPLAY_REPORT_TEXT)
		report_print_text(stdout, &rep);
	else if (o->output == REPLAY_REPORT_JSON)
		report_print_json(stdout, &rep);
	r = o->svg && write_svg(o->svg, &rep) < 0 ? 2 : 0;
out:
	sensor_free(sensor);
	grey_free(rp.grey);
	store_close(store);
	sensor_capture_close(cap);
	return r;
}
