// SPDX-License-Identifier: GPL-2.0-or-later
/* What greygatectl can ask: status, list, allow, forget, reload, report.
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
#include "gateway-int.h"
#include "json.h"
#include "policy_door.h"
#include "log.h"
#include "report.h"

#ifndef GREYGATE_VERSION
#define GREYGATE_VERSION "unknown"
#endif

struct args {
	const char *cmd, *what; /* "list" "pass" */
	bool json, svg, reset;
	const char *ttl, *comment;
};

static const char *
iso(int64_t t, char *buf)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) ||
	    !strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, 32, "%" PRId64, t);
	return buf;
}

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

/* --- status --- */

struct set_sizes {
	size_t n[3][2]; /* kind, v4/v6 */
};

/* Kept counts, never a dump of the kernel's sets (a million allow
 * entries took minutes): the merged allow ranges greygated sent, and the
 * store's pass and trap records (the kernel's elements expire with
 * them). */
static void
set_sizes(struct gateway *gw, struct set_sizes *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < gw->nallow; i++)
		s->n[NFTSET_ALLOW][gw->allow[i].range.family == AF_INET6]++;
	for (int f = 0; f < 2; f++) {
		int family = f ? AF_INET6 : AF_INET;

		s->n[NFTSET_PASS][f] =
			store_count_clients(gw->store, STORE_PASS, family);
		s->n[NFTSET_TRAP][f] =
			store_count_clients(gw->store, STORE_TRAP, family);
	}
}

static void
status(struct gateway *gw, const struct args *a, FILE *out)
{
	const struct grey_counters *k = grey_get_counters(gw->grey);
	const struct ipc_stats *cs = &gw->child_stats;
	int64_t now = loop_wall_sec(gw->loop);
	struct set_sizes sz;
	struct policy_door_stats ps;
	char t[32];

	set_sizes(gw, &sz);
	policy_door_get_stats(gw->policy_door, &ps);
	if (a->json) {
		fprintf(out,
			"{\"version\":\"%s\",\"since\":\"%s\",\"uptime\":%" PRId64
			",\"child\":{\"pid\":%d,\"running\":%s,\"starts\":%u},"
			"\"sets\":{",
			GREYGATE_VERSION, iso(gw->started, t),
			now - gw->started, (int)gw->child_pid,
			gw->child_pid > 0 ? "true" : "false", gw->child_starts);
		for (int kind = 0; kind < 3; kind++)
			for (int f = 0; f < 2; f++)
				fprintf(out, "%s\"%s\":%zu",
					kind + f ? "," : "",
					nftset_set_name((enum nftset_kind)kind,
							f ? AF_INET6 : AF_INET),
					sz.n[kind][f]);
		fprintf(out,
			"},\"store\":{\"triplets\":%zu,\"passed\":%zu,"
			"\"trapped\":%zu},\"decisions\":{\"since\":\"%s\","
			"\"attempts\":%" PRIu64
			",\"greylisted\":%" PRIu64 ",\"passed\":%" PRIu64
			",\"refreshed\":%" PRIu64 ",\"trapped\":%" PRIu64
			",\"allow_listed\":%" PRIu64 "},\"tarpit\":{\"open\":%u,"
			"\"connections\":%" PRIu64 ",\"reached_rcpt\":%" PRIu64
			",\"busy\":%" PRIu64 ",\"timeouts\":%" PRIu64
			",\"bad_commands\":%" PRIu64 ",\"stress_entered\":%" PRIu64
			",\"stressed\":%u,\"asked\":%" PRIu64
			",\"verdicts_late\":%" PRIu64
			",\"verdicts_unsent\":%" PRIu64 "},\"handoff\":{\"mode\":"
			"\"%s\",\"started\":%" PRIu64 ",\"not_opened\":%" PRIu64
			",\"joined\":%" PRIu64 ",\"replay_failed\":%" PRIu64
			",\"open\":%u},\"policy\":{\"listen\":\"%s\","
			"\"connections\":%" PRIu64 ",\"open\":%" PRIu64
			",\"requests\":%" PRIu64 ",\"deferred\":%" PRIu64
			",\"whitelisted\":%" PRIu64
			",\"malformed\":%" PRIu64 ",\"refused\":%" PRIu64
			"},\"sensor\":{\"packets\":"
			"%" PRIu64 ",\"flows\":%" PRIu64 ",\"flows_open\":%" PRIu64
			",\"rcpts\":%" PRIu64
			",\"pcap_dropped\":%" PRIu64 ",\"events_dropped\":%" PRIu64
			"}}\n",
			store_count(gw->store, -1),
			store_count(gw->store, STORE_PASS),
			store_count(gw->store, STORE_TRAP),
			iso(gw->stats_since, t), k->attempts,
			k->greylisted_new + k->greylisted_early, k->passed,
			k->refreshed, k->trapped, k->allow_listed,
			cs->tarpit.open, cs->tarpit.connections,
			cs->tarpit.reached_rcpt, cs->tarpit.busy,
			cs->tarpit.timeouts, cs->tarpit.bad_commands,
			cs->tarpit.stress_entered, cs->tarpit.stressed,
			cs->tarpit.asked, cs->tarpit.verdicts_late,
			gw->verdicts_unsent, config_handoff_mode_name(gw->cfg->handoff.mode),
			gw->handoffs_started, gw->handoffs_failed,
			cs->tarpit.handoffs_joined, cs->tarpit.handoffs_failed,
			cs->tarpit.joined_open, gw->cfg->policy.listen,
			ps.connections, ps.open, ps.requests, ps.deferred,
			ps.whitelisted, ps.malformed, ps.refused,
			cs->sensor.packets,
			cs->sensor.flows,
			cs->sensor.flows_open, cs->sensor.rcpts,
			cs->pcap_dropped, cs->events_dropped);
		return;
	}
	fprintf(out, "greygated %s, up %" PRId64 " s (since %s)\n",
		GREYGATE_VERSION, now - gw->started, iso(gw->started, t));
	if (!gw->cfg->gateway)
		fprintf(out, "gateway:   off (the policy door alone: no child, "
			     "no capture, no table)\n");
	else if (gw->child_pid > 0)
		fprintf(out, "child:     pid %d, up %" PRId64 " s, started %u "
			     "time(s)\n",
			(int)gw->child_pid, now - gw->child_since,
			gw->child_starts);
	else
		fprintf(out, "child:     down (restarting), started %u "
			     "time(s)\n",
			gw->child_starts);
	fprintf(out,
		"sets:      allow4 %zu, allow6 %zu, pass4 %zu, pass6 %zu, "
		"trap4 %zu, trap6 %zu\n",
		sz.n[0][0], sz.n[0][1], sz.n[1][0], sz.n[1][1], sz.n[2][0],
		sz.n[2][1]);
	fprintf(out, "store:     %zu triplets, %zu passed, %zu trapped\n",
		store_count(gw->store, -1), store_count(gw->store, STORE_PASS),
		store_count(gw->store, STORE_TRAP));
	fprintf(out,
		"decisions: %" PRIu64 " attempts, %" PRIu64
		" greylisted, %" PRIu64 " passed, %" PRIu64
		" refreshed, %" PRIu64 " trapped, %" PRIu64
		" allow-listed (since %s)\n",
		k->attempts, k->greylisted_new + k->greylisted_early,
		k->passed, k->refreshed, k->trapped, k->allow_listed,
		iso(gw->stats_since, t));
	fprintf(out,
		"tarpit:    %u open%s, %" PRIu64 " connections, %" PRIu64
		" reached RCPT, %" PRIu64 " busy, %" PRIu64
		" timeouts, %" PRIu64 " bad commands, stress %" PRIu64
		" times, %" PRIu64 " asked (%" PRIu64 " answered late, %" PRIu64
		" unsent)\n",
		cs->tarpit.open, cs->tarpit.stressed ? " (stress mode)" : "",
		cs->tarpit.connections, cs->tarpit.reached_rcpt,
		cs->tarpit.busy, cs->tarpit.timeouts, cs->tarpit.bad_commands,
		cs->tarpit.stress_entered, cs->tarpit.asked,
		cs->tarpit.verdicts_late, gw->verdicts_unsent);
	if (gw->cfg->handoff.mode == HANDOFF_OFF)
		fprintf(out, "hand-off:  off (a passing attempt hears 451 and "
			     "retries)\n");
	else
		fprintf(out,
			"hand-off:  %s to %s: %" PRIu64 " started, %" PRIu64
			" joined (%u open), %" PRIu64 " not opened, %" PRIu64
			" failed in the replay\n",
			config_handoff_mode_name(gw->cfg->handoff.mode),
			gw->cfg->handoff.mode == HANDOFF_TRANSPARENT
				? "where each client was going, as the client"
				: gw->cfg->handoff.address,
			gw->handoffs_started, cs->tarpit.handoffs_joined,
			cs->tarpit.joined_open, gw->handoffs_failed,
			cs->tarpit.handoffs_failed);
	if (gw->policy_door)
		fprintf(out,
			"policy:    on %s: %" PRIu64 " requests (%" PRIu64
			" deferred, %" PRIu64 " by whitelist files), %" PRIu64
			" connections (%" PRIu64 " open), %" PRIu64
			" malformed, %" PRIu64 " refused\n",
			gw->cfg->policy.listen, ps.requests, ps.deferred,
			ps.whitelisted, ps.connections, ps.open, ps.malformed, ps.refused);
	else
		fprintf(out, "policy:    off\n");
	fprintf(out,
		"sensor:    %" PRIu64 " packets, %" PRIu64 " flows (%" PRIu64
		" open), %" PRIu64 " RCPTs, %" PRIu64
		" packets dropped by the kernel, %" PRIu64
		" events not delivered to greygated\n",
		cs->sensor.packets, cs->sensor.flows, cs->sensor.flows_open,
		cs->sensor.rcpts, cs->pcap_dropped, cs->events_dropped);
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
			key, iso(rec->since, a), iso(rec->expires, b),
			rec->deliveries, rec->sessions);
	else
		fprintf(l->out, "%-24s %-20s %-20s %10u %8u\n", key,
			iso(rec->since, a), iso(rec->expires, b),
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
			iso(t->first_seen, a), t->attempts, state);
	} else {
		fprintf(l->out, "%-20s %-30s %-30s %-20s %8u %s\n", key,
			sender[0] ? sender : "<>", rcpt, iso(t->first_seen, a),
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
	else if (r < 0)
		snprintf(err, len, "forget %s: %s", a->what, strerror(-r));
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
			iso(gw->stats_since, t));
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
