// SPDX-License-Identifier: GPL-2.0-or-later
/* What greygatectl can ask: status, metrics, list, allow, forget, reload,
 * report.
 * Text in columns by default, one JSON document with --json. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "fmt.h"
#include "gateway-int.h"
#include "json.h"
#include "policy_door.h"
#include "log.h"
#include "metrics.h"
#include "report.h"

#ifndef GREYGATE_VERSION
#define GREYGATE_VERSION "unknown"
#endif

struct args {
	const char *cmd, *what; /* "list" "pass" */
	bool json, svg, reset;
	const char *ttl, *comment;
};


static int
parse_args(int argc, char **argv, struct args *a, char *err, size_t len)
{
	memset(a, 0, sizeof(*a));
	a->cmd = argv[0];
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			a->json = true;
		else if (!strcmp(argv[i], "--svg"))
			a->svg = true;
		else if (!strcmp(argv[i], "--reset"))
			a->reset = true;
		else if (!strcmp(argv[i], "--ttl") && i + 1 < argc)
			a->ttl = argv[++i];
		else if (!strcmp(argv[i], "--comment") && i + 1 < argc)
			a->comment = argv[++i];
		else if (argv[i][0] != '-' && !a->what)
			a->what = argv[i];
		else {
			snprintf(err, len, "%s: unexpected argument '%s'",
				 a->cmd, argv[i]);
			return -EINVAL;
		}
	}
	return 0;
}

/* --- status and metrics: the registry's (metrics.c) --- */

static void
status(struct gateway *gw, const struct args *a, FILE *out)
{
	if (a->json)
		metrics_status_json(gw, out);
	else
		metrics_status_text(gw, out);
}

/* --- list: a long answer, made a piece at a time --- */

/* Rows made per turn of the loop: a few milliseconds of work. */
#define LIST_ROWS_PER_TURN 2000

enum list_what { LIST_GREY, LIST_PASS, LIST_TRAP, LIST_ALLOW };

struct list_ctx {
	struct gateway *gw;
	enum list_what what;
	FILE *out;
	bool json;
	size_t rows;
	int64_t now;
	struct store_pos pos;   /* grey, pass, trap: where the walk is */
	size_t next;            /* allow: the next range */
	uint64_t generation;    /* allow: the lists it started with */
};

static void
row_start(struct list_ctx *l)
{
	if (l->json)
		fputs(l->rows ? ",{" : "{", l->out);
	l->rows++;
}

static int
list_client(const struct grey_client *c, const struct store_client *rec,
	    void *ctx)
{
	struct list_ctx *l = ctx;
	char key[64], a[32], b[32];

	grey_client_format(c, key, sizeof(key));
	row_start(l);
	if (l->json)
		fprintf(l->out,
			"\"client\":\"%s\",\"since\":\"%s\",\"expires\":\"%s\","
			"\"deliveries\":%u,\"sessions\":%u}",
			key, fmt_utc(rec->since, a), fmt_utc(rec->expires, b),
			rec->deliveries, rec->sessions);
	else
		fprintf(l->out, "%-24s %-20s %-20s %10u %8u\n", key,
			fmt_utc(rec->since, a), fmt_utc(rec->expires, b),
			rec->deliveries, rec->sessions);
	return 0;
}

static int
list_triplet(const struct grey_client *c, const char *sender,
	     const char *rcpt, const struct store_triplet *t, void *ctx)
{
	struct list_ctx *l = ctx;
	const struct grey_config *g = &l->gw->cfg->grey;
	int64_t age = l->now - t->first_seen;
	char key[64], a[32], state[32];

	if (age > (int64_t)g->retry_window_sec)
		return 0; /* expired: purge will take it */
	if (t->attempts > 1 && age >= (int64_t)g->delay_sec)
		snprintf(state, sizeof(state), "retried");
	else if (age >= (int64_t)g->delay_sec)
		snprintf(state, sizeof(state), "may-pass");
	else
		snprintf(state, sizeof(state), "wait-%" PRId64 "s",
			 (int64_t)g->delay_sec - age);
	grey_client_format(c, key, sizeof(key));
	row_start(l);
	if (l->json) {
		fprintf(l->out, "\"client\":\"%s\",\"sender\":", key);
		json_put_string(l->out, sender);
		fputs(",\"recipient\":", l->out);
		json_put_string(l->out, rcpt);
		fprintf(l->out,
			",\"first_seen\":\"%s\",\"attempts\":%u,\"state\":"
			"\"%s\"}",
			fmt_utc(t->first_seen, a), t->attempts, state);
	} else {
		fprintf(l->out, "%-20s %-30s %-30s %-20s %8u %s\n", key,
			sender[0] ? sender : "<>", rcpt, fmt_utc(t->first_seen, a),
			t->attempts, state);
	}
	return 0;
}

/* One merged allow range, as the kernel holds it. */
static void
list_range(struct list_ctx *l, const struct allow_range *r)
{
	char net[IP_RANGE_TEXT_MAX], left[32] = "never";

	ip_range_format(&r->range, net);
	if (r->expires)
		snprintf(left, sizeof(left), "%" PRId64 "s",
			 r->expires > l->now ? r->expires - l->now : 0);
	row_start(l);
	if (l->json) {
		fprintf(l->out, "\"client\":\"%s\",\"expires_in\":%" PRId64
				",\"comment\":",
			net, r->expires > l->now ? r->expires - l->now : 0);
		json_put_string(l->out, r->comment);
		fputc('}', l->out);
	} else {
		fprintf(l->out, "%-24s %-12s %s\n", net, left, r->comment);
	}
}

static int
list_more(void *state, FILE *out)
{
	struct list_ctx *l = state;
	struct gateway *gw = l->gw;
	bool done;
	int r = 0;

	l->out = out;
	switch (l->what) {
	case LIST_GREY:
		r = store_each_triplet_from(gw->store, &l->pos,
					    LIST_ROWS_PER_TURN, list_triplet,
					    l);
		done = l->pos.done;
		break;
	case LIST_PASS:
	case LIST_TRAP:
		r = store_each_client_from(gw->store,
					   l->what == LIST_PASS ? STORE_PASS
								: STORE_TRAP,
					   l->now, &l->pos, LIST_ROWS_PER_TURN,
					   list_client, l);
		done = l->pos.done;
		break;
	default:
		/* A reload meanwhile: the rest would be of other lists. */
		if (l->generation != gw->allow_generation)
			return -ESTALE;
		for (size_t n = 0;
		     n < LIST_ROWS_PER_TURN && l->next < gw->nallow; n++)
			list_range(l, &gw->allow[l->next++]);
		done = l->next == gw->nallow;
	}
	if (r < 0)
		return r;
	if (done && l->json)
		fputs("]\n", out);
	return done ? 0 : 1;
}

static int
list(struct gateway *gw, const struct args *a, FILE *out,
     struct control_stream *stream, char *err, size_t len)
{
	const char *what = a->what ? a->what : "";
	struct list_ctx *l;

	if (gw->shared && strcmp(what, "allow") != 0) {
		snprintf(err, len,
		         "list %s: not yet on a shared store; redis-cli --scan "
		         "--pattern '" SHARED_KEYS "%s:*' lists them",
		         what, !strcmp(what, "pass")   ? "pass"
		               : !strcmp(what, "trap") ? "trap"
		                                       : "grey");
		return -ENOTSUP;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->gw = gw;
	l->json = a->json;
	l->now = loop_wall_sec(gw->loop);
	l->generation = gw->allow_generation;
	if (!strcmp(what, "grey")) {
		l->what = LIST_GREY;
		if (!a->json)
			fprintf(out, "%-20s %-30s %-30s %-20s %8s %s\n",
				"CLIENT", "SENDER", "RECIPIENT", "FIRST-SEEN",
				"ATTEMPTS", "STATE");
	} else if (!strcmp(what, "pass") || !strcmp(what, "trap")) {
		l->what = what[0] == 'p' ? LIST_PASS : LIST_TRAP;
		if (!a->json)
			fprintf(out, "%-24s %-20s %-20s %10s %8s\n", "CLIENT",
				"SINCE", "EXPIRES", "DELIVERIES", "SESSIONS");
	} else if (!strcmp(what, "allow")) {
		l->what = LIST_ALLOW;
		if (!a->json)
			fprintf(out, "%-24s %-12s %s\n", "CLIENT", "EXPIRES-IN",
				"COMMENT");
	} else {
		free(l);
		snprintf(err, len, "list what? grey, pass, allow or trap");
		return -EINVAL;
	}
	if (a->json)
		fputc('[', out);
	stream->more = list_more;
	stream->free = free;
	stream->state = l;
	return 0;
}

/* --- the rest --- */

static int
allow(struct gateway *gw, const struct args *a, FILE *out, char *err,
      size_t len)
{
	uint32_t ttl = 0;
	int r;

	if (!a->what) {
		snprintf(err, len, "allow what? an address or CIDR");
		return -EINVAL;
	}
	r = a->ttl ? config_parse_duration(a->ttl, &ttl) : 0;
	if (r == -EINVAL) {
		snprintf(err, len, "--ttl %s: want seconds, or a number with "
				   "s, m, h or d",
			 a->ttl);
		return -EINVAL;
	}
	r = r < 0 ? r : gateway_allow_runtime(gw, a->what, ttl, a->comment);
	if (r == -EINVAL)
		snprintf(err, len, "'%s' is not an address or CIDR", a->what);
	else if (r == -ERANGE)
		snprintf(err, len, "--ttl %s: at most %ud", a->ttl,
			 ALLOW_TTL_MAX_SEC / 86400);
	else if (r == -EILSEQ)
		snprintf(err, len, "--comment: printable text, shorter than "
				   "%d bytes",
			 ALLOW_COMMENT_MAX);
	else if (r < 0)
		snprintf(err, len, "allow %s: %s", a->what, strerror(-r));
	else
		fprintf(out, "allowed %s%s%s\n", a->what, ttl ? " for " : "",
			ttl ? a->ttl : "");
	return r;
}

static int
forget(struct gateway *gw, const struct args *a, FILE *out, char *err,
       size_t len)
{
	char key[64];
	int r;

	if (!a->what) {
		snprintf(err, len, "forget whom? an address or CIDR");
		return -EINVAL;
	}
	r = gateway_forget(gw, a->what, key, sizeof(key));
	if (r == -EINVAL)
		snprintf(err, len, "'%s' is not an address or CIDR", a->what);
	else if (r == -ERANGE)
		snprintf(err, len, "'%s' is wider than greylisting's key (/%u, "
				   "/%u): forget one address or key at a time",
			 a->what, gw->cfg->grey.prefix4, gw->cfg->grey.prefix6);
	else if (r == -ENOTCONN)
		snprintf(err, len, "forget %s: the shared store does not answer: "
		                   "give it again once it does",
		         a->what);
	else if (r < 0)
		snprintf(err, len, "forget %s: %s", a->what, strerror(-r));
	else if (gw->shared)
		fprintf(out, "forgetting %s (key %s) in the shared store and at "
		             "every gateway (the log counts its records)\n",
		        a->what, key);
	else
		fprintf(out, "forgot %s (key %s): %d records\n", a->what, key,
			r);
	return r < 0 ? r : 0;
}

static int
report(struct gateway *gw, const struct args *a, FILE *out)
{
	struct report r;

	if (a->reset) {
		char t[32];

		gateway_stats_reset(gw);
		fprintf(out, "report reset: counting starts again at %s\n",
			fmt_utc(gw->stats_since, t));
		return 0;
	}
	report_compute(&r, gw->grey, gw->stats_since, loop_wall_sec(gw->loop));
	if (a->svg)
		report_print_svg(out, &r);
	else if (a->json)
		report_print_json(out, &r);
	else
		report_print_text(out, &r);
	return 0;
}

int
commands_run(struct gateway *gw, int argc, char **argv, FILE *out,
	     struct control_stream *stream, char *err, size_t err_len)
{
	struct args a;
	int r;

	/* Nothing a request holds may end a line early in the runtime
	 * list's file or the log. */
	for (int i = 0; i < argc; i++)
		if (!allow_text_ok(argv[i])) {
			snprintf(err, err_len, "argument %d holds a control "
					       "character",
				 i + 1);
			return -EINVAL;
		}
	r = parse_args(argc, argv, &a, err, err_len);
	if (r < 0)
		return r;
	log_debug("control: %s %s", a.cmd, a.what ? a.what : "");
	if (!strcmp(a.cmd, "status")) {
		status(gw, &a, out);
		return 0;
	}
	if (!strcmp(a.cmd, "metrics")) {
		metrics_exposition(gw, out);
		return 0;
	}
	if (!strcmp(a.cmd, "list"))
		return list(gw, &a, out, stream, err, err_len);
	if (!strcmp(a.cmd, "allow"))
		return allow(gw, &a, out, err, err_len);
	if (!strcmp(a.cmd, "forget"))
		return forget(gw, &a, out, err, err_len);
	if (!strcmp(a.cmd, "reload")) {
		char why[512] = "";

		r = gateway_reload(gw, why);
		if (r < 0)
			snprintf(err, err_len, "%s", why);
		else
			fprintf(out, "reloaded %s\n", gw->cfg_path);
		return r;
	}
	if (!strcmp(a.cmd, "report"))
		return report(gw, &a, out);
	snprintf(err, err_len, "unknown command '%s'", a.cmd);
	return -EINVAL;
}
