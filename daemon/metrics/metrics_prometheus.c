// SPDX-License-Identifier: GPL-2.0-or-later
/* greygated's figures in Prometheus's text format: each family's help and
 * type, the registry's series under it (metrics.c), the histograms. A
 * family of a part that is off (no shared store, no DNS lookups, no
 * store snapshots) is left out. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "metrics-int.h"

#ifndef GREYGATE_VERSION
#define GREYGATE_VERSION "unknown"
#endif

/* Each family's help, in the order the exposition lists them. */
static const struct family {
	const char *name, *help;
	enum metric_type type;
} families[] = {
        {"attempts_total",
         "RCPT attempts decided (tarpit, fast path, policy "
         "door)",
         COUNTER},
        {"decisions_total", "Decisions on attempts, by action and reason",
         COUNTER},
        {"refreshes_total", "Passes refreshed by a passed client's session",
         COUNTER},
        {"fastpath_sessions_total",
         "Passed clients' sessions on the fast "
         "path",
         COUNTER},
        {"set_elements", "Elements in greygate's nft sets (kept counts)",
         GAUGE},
        {"store_records", "Records in the greylist store, by kind", GAUGE},
        {"store_used_bytes", "Bytes of the store's file in use", GAUGE},
        {"store_map_bytes", "Bytes the store's map can hold", GAUGE},
        {"store_operations_total",
         "Store records read, and written or "
         "removed",
         COUNTER},
        {"store_write_errors_total",
         "Store writes or commits that failed for "
         "good",
         COUNTER},
        {"store_transactions_redone_total",
         "Store transactions redone after "
         "a failure (nothing lost)",
         COUNTER},
        {"store_snapshots_total",
         "Snapshots of the store (on tmpfs) to store_snapshot_dir since "
         "greygated started, by result",
         COUNTER},
        {"store_snapshot_bytes", "Bytes of the last snapshot written", GAUGE},
        {"store_snapshot_last_seconds",
         "When the last snapshot was written, in seconds since the epoch "
         "(0: none since greygated started)",
         GAUGE},
        {"shared_store_up",
         "1 while the shared store answers and agrees on the keys", GAUGE},
        {"shared_decisions_total", "Decisions made on the shared store",
         COUNTER},
        {"shared_decisions_unfetched_total",
         "Of those, made from nothing: Redis did not answer", COUNTER},
        {"shared_decisions_from_known_passes_total",
         "Of those, a passed client found among the passes known here",
         COUNTER},
        {"shared_passes_known",
         "Every gateway's passes known here, for decisions while Redis is "
         "away",
         GAUGE},
        {"shared_settings_disagree",
         "1 while the shared store holds other settings than this "
         "gateway's: it writes nothing there and decides from what it knows",
         GAUGE},
        {"shared_passes_restored_total",
         "Passes known here written back into a shared store that lacked "
         "them (emptied)",
         COUNTER},
        {"shared_name_clash",
         "1 while another gateway uses this one's hostname in the shared "
         "store",
         GAUGE},
        {"shared_busy_total",
         "Attempts given the plain deferral: too many decisions under way",
         COUNTER},
        {"shared_writes_total", "Decisions' writes to the shared store",
         COUNTER},
        {"shared_writes_waiting",
         "Decisions' writes waiting for Redis to come back", GAUGE},
        {"shared_writes_dropped_total",
         "Writes dropped: too many waited, or greygated stopped", COUNTER},
        {"shared_records_bad_total",
         "Shared store records that could not be read, skipped", COUNTER},
        {"shared_stream_events_total",
         "Passes and traps read from the shared store's stream", COUNTER},
        {"shared_rebuilds_total",
         "Times the sets were rebuilt from the shared store's keys", COUNTER},
        {"shared_allow_entries_total",
         "Run-time allow entries written to the shared store, not written, "
         "and taken from other gateways",
         COUNTER},
        {"tarpit_connections_open", "Tarpit connections open now", GAUGE},
        {"tarpit_stress_mode", "1 while the tarpit is in stress mode", GAUGE},
        {"tarpit_connections_total", "Connections the tarpit accepted",
         COUNTER},
        {"tarpit_sessions_reached_rcpt_total",
         "Tarpit sessions that got to "
         "RCPT",
         COUNTER},
        {"tarpit_refused_busy_total",
         "Clients refused with 421: too many "
         "connections",
         COUNTER},
        {"tarpit_timeouts_total",
         "Tarpit connections closed for idleness or "
         "the session's deadline",
         COUNTER},
        {"tarpit_bad_commands_total",
         "Unknown, out of order or too long "
         "commands at the tarpit",
         COUNTER},
        {"tarpit_stress_entered_total", "Times stress mode began", COUNTER},
        {"tarpit_verdicts_asked_total",
         "Questions the tarpit asked "
         "greygated",
         COUNTER},
        {"tarpit_verdicts_late_total",
         "Questions answered 451 without a "
         "verdict in time",
         COUNTER},
        {"tarpit_verdicts_unsent_total",
         "Verdicts lost: no child, or its "
         "queue full",
         COUNTER},
        {"handoffs_started_total", "Hand-offs to the MTA begun", COUNTER},
        {"handoffs_joined_total", "Sessions handed to the MTA and joined",
         COUNTER},
        {"handoffs_open", "Handed sessions open now", GAUGE},
        {"handoffs_failed_total",
         "Hand-offs that failed (the client heard "
         "451), by stage",
         COUNTER},
        {"handoffs_abandoned_total",
         "Hand-offs whose client left before the MTA's answer",
         COUNTER},
        {"handoffs_later_recipients_total",
         "Recipients of handed sessions after the one handed, decided as "
         "the fast path's",
         COUNTER},
        {"policy_requests_total", "Policy door requests answered", COUNTER},
        {"policy_deferred_total", "Policy door answers DEFER_IF_PERMIT",
         COUNTER},
        {"policy_whitelisted_total",
         "Policy door passes by postgrey's "
         "whitelist files",
         COUNTER},
        {"policy_connections_total", "Policy door connections accepted",
         COUNTER},
        {"policy_connections_open", "Policy door connections open now", GAUGE},
        {"policy_malformed_total",
         "Policy door connections closed for a "
         "malformed request",
         COUNTER},
        {"policy_refused_total",
         "Policy door connections refused: "
         "max_connections, every one waiting for its decision",
         COUNTER},
        {"policy_connections_closed_total",
         "Policy door connections closed by greygated: the longest idle "
         "of the peer holding the most, for a newcomer; or a request not "
         "whole within 5 s",
         COUNTER},
        {"policy_accept_failed_total",
         "Policy door accepts that found no file descriptor (the listener "
         "rests a second)",
         COUNTER},
        {"capture_packets_total", "Packets the capture saw", COUNTER},
        {"capture_dropped_total",
         "Capture losses: packets the kernel "
         "dropped, events the child could not send",
         COUNTER},
        {"sensor_flows_total", "TCP flows the sensor followed", COUNTER},
        {"sensor_flows_open", "Flows followed now", GAUGE},
        {"sensor_rcpts_total", "RCPT commands the sensor read", COUNTER},
        {"child_restarts_total", "Times greygated started its child again",
         COUNTER},
        {"set_changes_failed_total",
         "Set changes (a pass, a trap, a forget, an allow entry) that did "
         "not reach the kernel: their clients see the tarpit or the "
         "old state until an attempt puts them right",
         COUNTER},
        {"child_records_refused_total",
         "Records from the child refused: malformed, or naming a session "
         "that is not open",
         COUNTER},
        {"dns_questions_total",
         "DNS questions of the signals ([signals] lookups), by what "
         "answered them",
         COUNTER},
        {"dns_failures_total",
         "DNS questions sent that no server answered in time, or that "
         "failed (SERVFAIL, refused, unreadable)",
         COUNTER},
        {"dns_cache_answers", "DNS answers in the resolver's cache now",
         GAUGE},
        {"dns_silent",
         "1 while no DNS server answers (5 questions in a row timed out): "
         "decisions go on without waiting for DNS",
         GAUGE},
        {"dns_silences_total", "Times the DNS servers went silent", COUNTER},
};

#define NFAMILIES (sizeof(families) / sizeof(*families))

static void
family_header(const char *name, const char *help, const char *type, FILE *out)
{
	fprintf(out, "# HELP greygate_%s %s.\n# TYPE greygate_%s %s\n", name,
	        help, name, type);
}

/* A histogram's lines: n bounds (seconds) with their cumulative counts,
 * +Inf's (le[n]), the sum (seconds) and the count. */
static void
put_histogram(FILE *out, const char *family, const char *help,
              const double *bounds, const uint64_t *le, size_t n, double sum,
              uint64_t count)
{
	family_header(family, help, "histogram", out);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "greygate_%s_bucket{le=\"%.10g\"} %" PRIu64 "\n",
		        family, bounds[i], le[i]);
	fprintf(out,
	        "greygate_%s_bucket{le=\"+Inf\"} %" PRIu64
	        "\ngreygate_%s_sum %.10g\ngreygate_%s_count %" PRIu64 "\n",
	        family, le[n], family, sum, family, count);
}

static void
delay_histogram(const struct grey_delay_histogram *h, FILE *out)
{
	double bounds[GREY_DELAY_BOUNDS];

	for (int i = 0; i < GREY_DELAY_BOUNDS; i++)
		bounds[i] = grey_delay_bounds[i];
	put_histogram(out, "delivery_delay_seconds",
	              "Delay greylisting added to delivered mail: first "
	              "attempt to the delivery that passed",
	              bounds, h->le, GREY_DELAY_BOUNDS, (double)h->sum_sec,
	              h->count);
}

static void
fetch_histogram(const struct decider_fetch_latency *h, FILE *out)
{
	double bounds[DECIDER_FETCH_BOUNDS];

	for (int i = 0; i < DECIDER_FETCH_BOUNDS; i++)
		bounds[i] = decider_fetch_bounds_us[i] / 1e6;
	put_histogram(out, "store_fetch_seconds",
	              "Time the greylist's store took to give a decision its "
	              "records (LMDB in memory, Redis a round trip)",
	              bounds, h->le, DECIDER_FETCH_BOUNDS, h->sum_us / 1e6,
	              h->count);
}

void
metrics_exposition(const struct snapshot *s, FILE *out)
{

	family_header("build_info", "greygate's version", "gauge", out);
	fprintf(out, "greygate_build_info{version=\"%s\"} 1\n",
	        GREYGATE_VERSION);
	family_header("start_time_seconds",
	              "When greygated started, in seconds since the epoch",
	              "gauge", out);
	fprintf(out, "greygate_start_time_seconds %" PRId64 "\n", s->started);
	for (size_t f = 0; f < NFAMILIES; f++) {
		if (!s->shared.remote &&
		    !strncmp(families[f].name, "shared_", 7))
			continue; /* no shared store to tell of */
		if (!s->dns_on && !strncmp(families[f].name, "dns_", 4))
			continue; /* no lookups */
		if (!s->snapshot_on &&
		    !strncmp(families[f].name, "store_snapshot", 14))
			continue; /* no store_snapshot_dir */
		family_header(families[f].name, families[f].help,
		              families[f].type == COUNTER ? "counter" : "gauge",
		              out);
		for (size_t i = 0; i < metrics_registry_n; i++) {
			const struct metric *m = &metrics_registry[i];

			if (strcmp(m->family, families[f].name) ||
			    !metrics_shown(s, m))
				continue;
			fprintf(out, "greygate_%s%s%s%s %" PRIu64 "\n",
			        m->family, m->labels ? "{" : "",
			        m->labels ? m->labels : "",
			        m->labels ? "}" : "", metrics_value_of(s, m));
		}
	}
	delay_histogram(s->delays, out);
	if (s->fetch)
		fetch_histogram(s->fetch, out);
}
