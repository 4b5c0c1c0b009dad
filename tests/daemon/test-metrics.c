// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of greygated's figures through metrics.h alone: a snapshot made
 * here (no gateway, no service) rendered as greygatectl status's text
 * and JSON and as Prometheus's exposition, which must say the same
 * numbers; and the carry that keeps counters monotonic over child
 * restarts and report resets. promtool reads a live exposition in
 * tests/integration/test-metrics.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "metrics.h"

static struct config config;
static const struct config *cfg = &config;

static char *
rendered(void (*render)(const struct metrics_snapshot *, FILE *),
         const struct metrics_snapshot *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	CHECK(out);
	render(s, out);
	CHECK_INT(fclose(out), 0);
	return buf;
}

static struct grey_delay_histogram delays;
static struct decider_fetch_latency fetch;

static void
snapshot_of(struct metrics_snapshot *s)
{
	memset(s, 0, sizeof(*s));
	delays.le[GREY_DELAY_BOUNDS] = 3;
	delays.count = 3;
	delays.sum_sec = 1500;
	s->delays = &delays;
	/* two fetches: 80 µs and 340 µs */
	memset(&fetch, 0, sizeof(fetch));
	fetch.le[0] = 1;
	for (int i = 1; i <= DECIDER_FETCH_BOUNDS; i++)
		fetch.le[i] = 2;
	fetch.count = 2;
	fetch.sum_us = 420;
	s->fetch = &fetch;
	s->cfg = cfg;
	s->now = 1800000100;
	s->started = 1800000000;
	s->child_pid = 4242;
	s->child_starts = 3;
	s->child_since = 1800000050;
	s->child_restarts = 2;
	s->decided.attempts = 17;
	s->decided.greylisted_new = 11;
	s->decided.passed = 5;
	s->decided.passed_retry = 4;
	s->passed_other = 1;
	s->sets[NFTSET_PASS][0] = 6;
	s->triplets = 9;
}

static void
test_same_numbers(void)
{
	struct metrics_snapshot s;
	char *text, *json, *prom;

	snapshot_of(&s);
	text = rendered(metrics_status_text, &s);
	json = rendered(metrics_status_json, &s);
	prom = rendered(metrics_exposition, &s);
	/* the text */
	CHECK(strstr(text, "up 100 s"));
	CHECK(strstr(text, "child:     pid 4242, up 50 s, started 3 time(s)"));
	CHECK(strstr(text, "17 attempts"));
	CHECK(strstr(text, "11 greylisted new"));
	CHECK(strstr(text, "4 passed by a retry"));
	CHECK(strstr(text, "pass4 6"));
	CHECK(strstr(text, "9 triplets"));
	/* the JSON */
	CHECK(strstr(json, "\"uptime\":100"));
	CHECK(strstr(json, "\"pid\":4242,\"running\":true,\"starts\":3"));
	CHECK(strstr(json, "\"attempts\":17"));
	CHECK(strstr(json, "\"triplets\":9"));
	CHECK(json[strlen(json) - 1] == '\n' && json[strlen(json) - 2] == '}');
	/* Prometheus: each family with its HELP and TYPE, the same numbers */
	CHECK(strstr(prom, "greygate_start_time_seconds 1800000000\n"));
	CHECK(strstr(prom, "greygate_attempts_total 17\n"));
	CHECK(strstr(prom, "greygate_child_restarts_total 2\n"));
	CHECK(strstr(prom, "greygate_set_elements{set=\"pass4\"} 6\n"));
	CHECK(strstr(prom, "# TYPE greygate_attempts_total counter\n"));
	CHECK(strstr(prom, "# TYPE greygate_set_elements gauge\n"));
	CHECK(strstr(prom, "greygate_delivery_delay_seconds_count 3\n"));
	CHECK(strstr(prom, "greygate_delivery_delay_seconds_sum 1500\n"));
	CHECK(strstr(prom, "greygate_delivery_delay_seconds_bucket{le=\"+Inf\"} 3\n"));
	CHECK(strstr(prom, "greygate_delivery_delay_seconds_bucket{le=\"300\"} "));
	/* the store's latency: bounds in seconds, the sum too */
	CHECK(strstr(prom, "# TYPE greygate_store_fetch_seconds histogram\n"));
	CHECK(strstr(prom, "greygate_store_fetch_seconds_bucket{le=\"0.0001\"} 1\n"));
	CHECK(strstr(prom, "greygate_store_fetch_seconds_bucket{le=\"0.0005\"} 2\n"));
	CHECK(strstr(prom, "greygate_store_fetch_seconds_bucket{le=\"+Inf\"} 2\n"));
	CHECK(strstr(prom, "greygate_store_fetch_seconds_sum 0.00042\n"));
	CHECK(strstr(prom, "greygate_store_fetch_seconds_count 2\n"));
	/* no shared store: none of its families */
	CHECK(!strstr(prom, "greygate_shared_"));
	CHECK(!strstr(json, "\"shared\":"));
	/* no store_snapshot_dir: no snapshot's */
	CHECK(!strstr(prom, "greygate_store_snapshot"));
	CHECK(!strstr(json, "\"store_snapshot\":"));
	CHECK(!strstr(text, "snapshot:"));
	free(text);
	free(json);
	free(prom);
}

static void
test_shared_and_retiring(void)
{
	struct metrics_snapshot s;
	char *text, *json, *prom;

	snapshot_of(&s);
	s.shared.remote = true;
	s.shared.where = "redis://198.51.100.2:6379/0";
	s.shared.last_error = "no answer within 1000 ms";
	s.shared.down_since = 1800000095;
	s.sets_uncounted = true;
	s.sets[NFTSET_PASS][0] = 0;
	s.retiring[0] = (struct metrics_retiring){777, 1800000090};
	s.nretiring = 1;
	s.child_pid = 0;
	text = rendered(metrics_status_text, &s);
	json = rendered(metrics_status_json, &s);
	prom = rendered(metrics_exposition, &s);
	CHECK(strstr(text, "child:     down (restarting), started 3 time(s)"));
	CHECK(strstr(text, "pid 777 (before the reload): finishing the "
	                   "sessions it handed to the MTA, for 10 s"));
	CHECK(strstr(text, "store:     redis://198.51.100.2:6379/0, AWAY for "
	                   "5 s: no answer within 1000 ms"));
	/* passes counted nowhere here: left out, not shown as 0 */
	CHECK(strstr(text, "counted nowhere here"));
	CHECK(!strstr(prom, "greygate_set_elements{set=\"pass4\"}"));
	CHECK(strstr(prom, "greygate_shared_store_up 0\n"));
	CHECK(strstr(json, "\"draining_pid\":777"));
	CHECK(strstr(json, "\"shared\":{\"where\":\"redis://198.51.100.2:6379/0\""));
	free(text);
	free(json);
	free(prom);
}

/* Counters never go back: a child's counts carry over its restart, the
 * decisions over the report's reset, and what the store held at the
 * start is not counted. */
static void
test_carry(void)
{
	struct metrics_figures *f = metrics_figures_new(1800000000);
	struct metrics_snapshot s;
	struct grey_counters held = {.attempts = 100};
	struct ipc_stats last;

	CHECK(f);
	CHECK_INT(metrics_figures_started(f), 1800000000);
	metrics_figures_begin(f, &held);
	snapshot_of(&s);
	s.decided.attempts = 117; /* 100 restored + 17 decided here */
	metrics_figures_carry(f, &s);
	CHECK_INT(s.decided.attempts, 17);
	CHECK_INT(s.started, 1800000000);
	/* the report reset (its counters go to 0) */
	held.attempts = 117;
	metrics_figures_report_reset(f, &held);
	snapshot_of(&s);
	s.decided.attempts = 3;
	metrics_figures_carry(f, &s);
	CHECK_INT(s.decided.attempts, 20);
	/* a child gone with 40 tarpit connections; the new one has 2 */
	memset(&last, 0, sizeof(last));
	last.tarpit.connections = 40;
	last.pcap_dropped = 1000;
	metrics_figures_child_gone(f, &last);
	snapshot_of(&s);
	s.child.tarpit.connections = 2;
	s.child.pcap_dropped = 10;
	metrics_figures_carry(f, &s);
	CHECK_INT(s.child.tarpit.connections, 42);
	CHECK_INT(s.child.pcap_dropped, 1010);
	metrics_figures_free(f);
}

/* The hand-off's line: auto off and why, auto waiting and answering,
 * a mode chosen; the JSON says the setting, what auto came to and
 * whether it hands passes over. And the networks greylisted at STARTTLS
 * counted apart. */
static void
test_handoff_lines(void)
{
	struct metrics_snapshot s;
	char *text, *json, *prom;

	config_defaults(&config);
	snprintf(config.handoff.auto_why, sizeof(config.handoff.auto_why),
		 "tls_pass = no would deliver the passing attempt in the "
		 "clear");
	config_derive(&config);
	snapshot_of(&s);
	s.decided.tls_greylisted = 7;
	text = rendered(metrics_status_text, &s);
	json = rendered(metrics_status_json, &s);
	prom = rendered(metrics_exposition, &s);
	CHECK(strstr(text, "\nhand-off:  auto: off: tls_pass = no would "
			   "deliver the passing attempt in the clear\n"));
	CHECK(strstr(json, "\"handoff\":{\"mode\":\"off\",\"setting\":\"auto\","
			   "\"auto\":\"tls_pass = no would deliver the "
			   "passing attempt in the clear\",\"ready\":false"));
	CHECK(strstr(prom, "greygate_decisions_total{action=\"greylist\","
			   "reason=\"starttls\"} 7\n"));
	CHECK(strstr(text, "7 greylisted at STARTTLS"));
	free(text);
	free(json);
	free(prom);
	/* auto on, the MTA answering */
	config.handoff.auto_on = true;
	config_derive(&config);
	snapshot_of(&s);
	snprintf(s.handoff_auto, sizeof(s.handoff_auto),
		 "the MTA at 203.0.113.1:25 answers");
	s.handoff_ready = true;
	s.handoffs_started = 2;
	text = rendered(metrics_status_text, &s);
	json = rendered(metrics_status_json, &s);
	CHECK(strstr(text, "\nhand-off:  auto: the MTA at 203.0.113.1:25 "
			   "answers: 2 started"));
	CHECK(strstr(json, "\"mode\":\"transparent\",\"setting\":\"auto\","
			   "\"auto\":\"the MTA at 203.0.113.1:25 answers\","
			   "\"ready\":true,\"started\":2"));
	free(text);
	free(json);
	/* a mode chosen: no word of auto */
	config.handoff.setting = HANDOFF_PROXY_V2;
	snprintf(config.handoff.address, sizeof(config.handoff.address),
		 "127.0.0.1:10025");
	config_derive(&config);
	snapshot_of(&s);
	text = rendered(metrics_status_text, &s);
	json = rendered(metrics_status_json, &s);
	CHECK(strstr(text, "\nhand-off:  proxy-v2 to 127.0.0.1:10025: "));
	CHECK(strstr(json, "\"mode\":\"proxy-v2\",\"setting\":\"proxy-v2\","
			   "\"started\""));
	free(text);
	free(json);
	config_defaults(&config);
}

/* A store on tmpfs with its snapshots (store_snapshot_dir): one line of
 * status, one object of JSON, three families. */
static void
test_snapshots(void)
{
	struct metrics_snapshot s;
	struct config c = *cfg;
	char *text, *json, *prom;

	snapshot_of(&s);
	snprintf(c.store_snapshot.dir, sizeof(c.store_snapshot.dir),
	         "/etc/greygate/store");
	c.store_snapshot.interval_ms = 6 * 3600000;
	s.cfg = &c;
	s.snapshot_on = true;
	s.snapshots = (struct store_snapshot_counters){
	        .taken = 3, .failed = 1, .skipped = 2, .bytes = 1331200,
	        .last_taken = 1800000060};
	text = rendered(metrics_status_text, &s);
	json = rendered(metrics_status_json, &s);
	prom = rendered(metrics_exposition, &s);
	CHECK(strstr(text, "\nsnapshot:  to /etc/greygate/store every 21600 s: "
	                   "3 taken, 1 failed, 2 not written (nothing "
	                   "changed), the last 1331200 bytes; the last at "
	                   "2027-01-15T08:01:00Z\n"));
	CHECK(strstr(json, "\"store_snapshot\":{\"dir\":\"/etc/greygate/store\","
	                   "\"taken\":3,\"failed\":1,\"unchanged\":2,"
	                   "\"bytes\":1331200,\"last_taken\":1800000060}"));
	CHECK(strstr(prom, "greygate_store_snapshots_total{result=\"taken\"} 3\n"));
	CHECK(strstr(prom, "greygate_store_snapshots_total{result=\"failed\"} 1\n"));
	CHECK(strstr(prom, "greygate_store_snapshots_total{result=\"unchanged\"} 2\n"));
	CHECK(strstr(prom, "# TYPE greygate_store_snapshot_bytes gauge\n"
	                   "greygate_store_snapshot_bytes 1331200\n"));
	CHECK(strstr(prom, "greygate_store_snapshot_last_seconds 1800000060\n"));
	s.snapshots = (struct store_snapshot_counters){0};
	free(text);
	text = rendered(metrics_status_text, &s);
	CHECK(strstr(text, "the last 0 bytes; none yet since the start\n"));
	free(text);
	free(json);
	free(prom);
}

int
main(void)
{
	config_defaults(&config);
	RUN(test_same_numbers);
	RUN(test_shared_and_retiring);
	RUN(test_carry);
	RUN(test_handoff_lines);
	RUN(test_snapshots);
	return 0;
}
