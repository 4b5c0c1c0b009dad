// SPDX-License-Identifier: GPL-2.0-or-later
/* The registry of greygated's figures and what the counters carry over a
 * child's restart (the Prometheus exposition is metrics_prometheus.c,
 * greygatectl status's text and JSON metrics_status.c; see metrics.h). Every figure is read once
 * into a snapshot (by the root: daemon/gateway.c), then each entry of the
 * registry names its place there. Nothing here asks a service. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "fmt.h"
#include "json.h"
#include "metrics-int.h"

#define AT(f) offsetof(struct snapshot, f), sizeof(((struct snapshot *)0)->f)
#define CHILD(f) AT(child.f)

const struct metric metrics_registry[] = {
        {"child", "restarts", NULL, "child_restarts_total", NULL, COUNTER,
         AT(child_restarts)},
        {"child", "records_refused", NULL, "child_records_refused_total",
         NULL, COUNTER, AT(records_refused)},

        {"sets", "allow4", "allow4 #", "set_elements", "set=\"allow4\"", GAUGE,
         AT(sets[NFTSET_ALLOW][0])},
        {"sets", "allow6", "allow6 #", "set_elements", "set=\"allow6\"", GAUGE,
         AT(sets[NFTSET_ALLOW][1])},
        {"sets", "pass4", "pass4 #", "set_elements", "set=\"pass4\"", GAUGE,
         AT(sets[NFTSET_PASS][0])},
        {"sets", "pass6", "pass6 #", "set_elements", "set=\"pass6\"", GAUGE,
         AT(sets[NFTSET_PASS][1])},
        {"sets", "trap4", "trap4 #", "set_elements", "set=\"trap4\"", GAUGE,
         AT(sets[NFTSET_TRAP][0])},
        {"sets", "trap6", "trap6 #", "set_elements", "set=\"trap6\"", GAUGE,
         AT(sets[NFTSET_TRAP][1])},
        {"sets", "failed", "# changes that failed", "set_changes_failed_total",
         NULL, COUNTER, AT(set_changes_failed)},

        {"store", "triplets", "# triplets", "store_records", "kind=\"triplet\"",
         GAUGE, AT(triplets)},
        {"store", "passed", "# passed", "store_records", "kind=\"pass\"", GAUGE,
         AT(passes)},
        {"store", "trapped", "# trapped", "store_records", "kind=\"trap\"",
         GAUGE, AT(traps)},
        {"store", "used_bytes", "# bytes used", "store_used_bytes", NULL, GAUGE,
         AT(store.used_bytes)},
        {"store", "map_bytes", "# bytes mapped", "store_map_bytes", NULL, GAUGE,
         AT(store.map_bytes)},
        {"store", "reads", "# reads", "store_operations_total", "op=\"read\"",
         COUNTER, AT(store.reads)},
        {"store", "writes", "# writes", "store_operations_total",
         "op=\"write\"", COUNTER, AT(store.writes)},
        {"store", "write_errors", "# write errors", "store_write_errors_total",
         NULL, COUNTER, AT(store.write_errors)},
        {"store", "replayed", "# transactions redone",
         "store_transactions_redone_total", NULL, COUNTER, AT(store.replayed)},

        {"store_snapshot", "taken", "# taken", "store_snapshots_total",
         "result=\"taken\"", COUNTER, AT(snapshots.taken)},
        {"store_snapshot", "failed", "# failed", "store_snapshots_total",
         "result=\"failed\"", COUNTER, AT(snapshots.failed)},
        {"store_snapshot", "unchanged", "# not written (nothing changed)",
         "store_snapshots_total", "result=\"unchanged\"", COUNTER,
         AT(snapshots.skipped)},
        {"store_snapshot", "bytes", "the last # bytes",
         "store_snapshot_bytes", NULL, GAUGE, AT(snapshots.bytes)},
        {"store_snapshot", "last_taken", NULL,
         "store_snapshot_last_seconds", NULL, GAUGE, AT(snapshots.last_taken)},

        {"shared", "up", NULL, "shared_store_up", NULL, GAUGE, AT(shared_up)},
        {"shared", "decisions", "# decisions", "shared_decisions_total", NULL,
         COUNTER, AT(shared.decisions)},
        {"shared", "unfetched", "# from nothing (Redis away)",
         "shared_decisions_unfetched_total", NULL, COUNTER,
         AT(shared.from_nothing)},
        {"shared", "from_known", "# of those from a pass known here",
         "shared_decisions_from_known_passes_total", NULL, COUNTER,
         AT(shared.from_known)},
        {"shared", "passes_known", "# passes known", "shared_passes_known",
         NULL, GAUGE, AT(shared.passes_known)},
        {"shared", "name_clash", NULL, "shared_name_clash", NULL, GAUGE,
         AT(shared.name_clash)},
        {"shared", "disagrees", NULL, "shared_settings_disagree", NULL, GAUGE,
         AT(shared_disagreed)},
        {"shared", "restored", "# passes written back",
         "shared_passes_restored_total", NULL, COUNTER, AT(shared.restored)},
        {"shared", "busy", "# busy", "shared_busy_total", NULL, COUNTER,
         AT(shared.busy)},
        {"shared", "writes", "# written", "shared_writes_total",
         "result=\"ok\"", COUNTER, AT(shared.writes)},
        {"shared", "writes_failed", "# failed", "shared_writes_total",
         "result=\"failed\"", COUNTER, AT(shared.writes_failed)},
        {"shared", "waiting", "# waiting", "shared_writes_waiting", NULL, GAUGE,
         AT(shared.waiting)},
        {"shared", "dropped", "# dropped", "shared_writes_dropped_total", NULL,
         COUNTER, AT(shared.waiting_dropped)},
        {"shared", "records_bad", "# unreadable", "shared_records_bad_total",
         NULL, COUNTER, AT(shared.records_bad)},
        {"shared", "events", "# passes and traps from others",
         "shared_stream_events_total", "by=\"other\"", COUNTER,
         AT(shared.events)},
        {"shared", "own_events", "# own", "shared_stream_events_total",
         "by=\"self\"", COUNTER, AT(shared.own_events)},
        {"shared", "rebuilds", "# rebuilds of the sets",
         "shared_rebuilds_total", NULL, COUNTER, AT(shared.reconciles)},
        {"shared", "allows_sent", "# allow entries shared",
         "shared_allow_entries_total", "how=\"sent\"", COUNTER,
         AT(shared.allows_sent)},
        {"shared", "allows_failed", "# not shared",
         "shared_allow_entries_total", "how=\"failed\"", COUNTER,
         AT(shared.allows_failed)},
        {"shared", "allows_taken", "# taken from others",
         "shared_allow_entries_total", "how=\"taken\"", COUNTER,
         AT(shared.allows_taken)},

        {"decisions", "attempts", "# attempts", "attempts_total", NULL, COUNTER,
         AT(decided.attempts)},
        {"decisions", "greylisted_new", "# greylisted new", "decisions_total",
         "action=\"greylist\",reason=\"new\"", COUNTER,
         AT(decided.greylisted_new)},
        {"decisions", "greylisted_early", "# greylisted early",
         "decisions_total", "action=\"greylist\",reason=\"early_retry\"",
         COUNTER, AT(decided.greylisted_early)},
        {"decisions", "passed_retry", "# passed by a retry", "decisions_total",
         "action=\"pass\",reason=\"retry\"", COUNTER, AT(decided.passed_retry)},
        {"decisions", "passed_other", "# passed otherwise (STARTTLS)",
         "decisions_total", "action=\"pass\",reason=\"other\"", COUNTER,
         AT(passed_other)},
        {"decisions", "passed_trusted", "# passed at once (DNS signals)",
         "decisions_total", "action=\"pass\",reason=\"trusted\"", COUNTER,
         AT(decided.passed_trusted)},
        {"decisions", "refused_recipient", "# refused (unknown recipient)",
         "decisions_total", "action=\"refuse\",reason=\"unknown_recipient\"",
         COUNTER, AT(decided.refused_recipient)},
        {"decisions", "refused_spf", "# refused (SPF fail)",
         "decisions_total", "action=\"refuse\",reason=\"spf_fail\"",
         COUNTER, AT(decided.refused_spf)},
        {"decisions", "refused_sender_domain",
         "# refused (the sender's domain takes no mail)", "decisions_total",
         "action=\"refuse\",reason=\"sender_domain\"", COUNTER,
         AT(decided.refused_sender_domain)},
        {"decisions", "tls_greylisted", "# greylisted at STARTTLS",
         "decisions_total", "action=\"greylist\",reason=\"starttls\"",
         COUNTER, AT(decided.tls_greylisted)},
        {"decisions", "handed_unpassed", "# handed over unpassed",
         "decisions_total", "action=\"hand\",reason=\"tls_strict\"", COUNTER,
         AT(decided.tls_handed)},
        {"decisions", "trapped", "# trapped", "decisions_total",
         "action=\"trap\",reason=\"trapped\"", COUNTER, AT(decided.trapped)},
        {"decisions", "allow_listed", "# allow-listed", "decisions_total",
         "action=\"pass\",reason=\"allow_list\"", COUNTER,
         AT(decided.allow_listed)},
        {"decisions", "refreshed", "# refreshed", "refreshes_total", NULL,
         COUNTER, AT(decided.refreshed)},
        {"decisions", "fastpath_sessions", "# fast-path sessions",
         "fastpath_sessions_total", NULL, COUNTER,
         AT(decided.fastpath_sessions)},

        {"tarpit", "open", "# open", "tarpit_connections_open", NULL, GAUGE,
         CHILD(tarpit.open)},
        {"tarpit", "stressed", "# in stress mode", "tarpit_stress_mode", NULL,
         GAUGE, CHILD(tarpit.stressed)},
        {"tarpit", "connections", "# connections", "tarpit_connections_total",
         NULL, COUNTER, CHILD(tarpit.connections)},
        {"tarpit", "reached_rcpt", "# reached RCPT",
         "tarpit_sessions_reached_rcpt_total", NULL, COUNTER,
         CHILD(tarpit.reached_rcpt)},
        {"tarpit", "busy", "# busy", "tarpit_refused_busy_total", NULL, COUNTER,
         CHILD(tarpit.busy)},
        {"tarpit", "timeouts", "# timeouts", "tarpit_timeouts_total", NULL,
         COUNTER, CHILD(tarpit.timeouts)},
        {"tarpit", "bad_commands", "# bad commands",
         "tarpit_bad_commands_total", NULL, COUNTER,
         CHILD(tarpit.bad_commands)},
        {"tarpit", "stress_entered", "stress # times",
         "tarpit_stress_entered_total", NULL, COUNTER,
         CHILD(tarpit.stress_entered)},
        {"tarpit", "asked", "# asked", "tarpit_verdicts_asked_total", NULL,
         COUNTER, CHILD(tarpit.asked)},
        {"tarpit", "verdicts_late", "# answered late",
         "tarpit_verdicts_late_total", NULL, COUNTER,
         CHILD(tarpit.verdicts_late)},
        {"tarpit", "verdicts_unsent", "# verdicts unsent",
         "tarpit_verdicts_unsent_total", NULL, COUNTER, AT(verdicts_unsent)},

        {"handoff", "started", "# started", "handoffs_started_total", NULL,
         COUNTER, AT(handoffs_started)},
        {"handoff", "joined", "# joined", "handoffs_joined_total", NULL,
         COUNTER, CHILD(tarpit.handoffs_joined)},
        {"handoff", "open", "# open", "handoffs_open", NULL, GAUGE,
         CHILD(tarpit.joined_open)},
        {"handoff", "not_opened", "# not opened", "handoffs_failed_total",
         "stage=\"connect\"", COUNTER, AT(handoffs_failed)},
        {"handoff", "replay_failed", "# failed in the replay",
         "handoffs_failed_total", "stage=\"replay\"", COUNTER,
         CHILD(tarpit.handoffs_failed)},
        {"handoff", "unjoined", "# not joined (late, or no room)",
         "handoffs_failed_total", "stage=\"join\"", COUNTER,
         CHILD(tarpit.handoffs_unjoined)},
        {"handoff", "abandoned", "# left by the client",
         "handoffs_abandoned_total", NULL, COUNTER,
         CHILD(tarpit.handoffs_abandoned)},
        {"handoff", "later_rcpts", "# later recipients",
         "handoffs_later_recipients_total", NULL, COUNTER,
         CHILD(tarpit.joined_rcpts)},

        {"policy", "requests", "# requests", "policy_requests_total", NULL,
         COUNTER, AT(door.requests)},
        {"policy", "deferred", "# deferred", "policy_deferred_total", NULL,
         COUNTER, AT(door.deferred)},
        {"policy", "whitelisted", "# by whitelist files",
         "policy_whitelisted_total", NULL, COUNTER, AT(door.whitelisted)},
        {"policy", "connections", "# connections", "policy_connections_total",
         NULL, COUNTER, AT(door.connections)},
        {"policy", "open", "# open", "policy_connections_open", NULL, GAUGE,
         AT(door.open)},
        {"policy", "malformed", "# malformed", "policy_malformed_total", NULL,
         COUNTER, AT(door.malformed)},
        {"policy", "refused", "# refused", "policy_refused_total", NULL,
         COUNTER, AT(door.refused)},
        {"policy", "evicted", "# closed for a newcomer",
         "policy_connections_closed_total", "why=\"evicted\"", COUNTER,
         AT(door.evicted)},
        {"policy", "slow", "# closed: slow request",
         "policy_connections_closed_total", "why=\"slow\"", COUNTER,
         AT(door.slow)},
        {"policy", "no_fd", "# accepts without a descriptor",
         "policy_accept_failed_total", NULL, COUNTER, AT(door.no_fd)},

        {"sensor", "packets", "# packets", "capture_packets_total", NULL,
         COUNTER, CHILD(sensor.packets)},
        {"sensor", "flows", "# flows", "sensor_flows_total", NULL, COUNTER,
         CHILD(sensor.flows)},
        {"sensor", "flows_open", "# open", "sensor_flows_open", NULL, GAUGE,
         CHILD(sensor.flows_open)},
        {"sensor", "rcpts", "# RCPTs", "sensor_rcpts_total", NULL, COUNTER,
         CHILD(sensor.rcpts)},
        {"sensor", "pcap_dropped", "# packets dropped by the kernel",
         "capture_dropped_total", "where=\"kernel\"", COUNTER,
         CHILD(pcap_dropped)},
        {"sensor", "events_dropped", "# events not delivered to greygated",
         "capture_dropped_total", "where=\"events\"", COUNTER,
         CHILD(events_dropped)},

        {"dns", "asked", "# questions sent", "dns_questions_total",
         "answered=\"server\"", COUNTER, AT(dns.asked)},
        {"dns", "cached", "# answered from the cache", "dns_questions_total",
         "answered=\"cache\"", COUNTER, AT(dns.cached)},
        {"dns", "joined", "# joined one in flight", "dns_questions_total",
         "answered=\"in_flight\"", COUNTER, AT(dns.joined)},
        {"dns", "timeouts", "# timed out", "dns_failures_total",
         "why=\"timeout\"", COUNTER, AT(dns.timeouts)},
        {"dns", "failures", "# failed", "dns_failures_total",
         "why=\"servfail\"", COUNTER, AT(dns.failures)},
        {"dns", "held", "# answers cached", "dns_cache_answers", NULL, GAUGE,
         AT(dns.held)},
        {"dns", "silent", "not answering: #", "dns_silent", NULL, GAUGE,
         AT(dns.silent)},
        {"dns", "silences", "# times silent", "dns_silences_total", NULL,
         COUNTER, AT(dns.silences)},
};

const size_t metrics_registry_n =
        sizeof(metrics_registry) / sizeof(*metrics_registry);
#define NMETRICS metrics_registry_n

uint64_t
metrics_value_of(const struct snapshot *s, const struct metric *m)
{
	const char *p = (const char *)s + m->off;

	if (m->size == sizeof(uint32_t)) {
		uint32_t v;

		memcpy(&v, p, sizeof(v));
		return v;
	}
	{
		uint64_t v;

		memcpy(&v, p, sizeof(v));
		return v;
	}
}

static bool
is_child_counter(const struct metric *m)
{
	return m->type == COUNTER &&
	       m->off >= offsetof(struct snapshot, child) &&
	       m->off < offsetof(struct snapshot, child) +
	                        sizeof(struct ipc_stats);
}

/* to[off] += from[off], for one field of either width. */
static void
add_field(void *to, const void *from, size_t off, size_t size)
{
	if (size == sizeof(uint32_t)) {
		uint32_t a, b;

		memcpy(&a, (char *)to + off, sizeof(a));
		memcpy(&b, (const char *)from + off, sizeof(b));
		a += b;
		memcpy((char *)to + off, &a, sizeof(a));
	} else {
		uint64_t a, b;

		memcpy(&a, (char *)to + off, sizeof(a));
		memcpy(&b, (const char *)from + off, sizeof(b));
		a += b;
		memcpy((char *)to + off, &a, sizeof(a));
	}
}

/* grey_counters is uint64_t fields only: to += sign * from, each. */
static void
add_counters(struct grey_counters *to, const struct grey_counters *from,
             int sign)
{
	uint64_t *t = (uint64_t *)to;
	const uint64_t *f = (const uint64_t *)from;

	for (size_t i = 0; i < sizeof(*to) / sizeof(uint64_t); i++)
		t[i] += sign > 0 ? f[i] : -f[i];
}

struct metrics_figures {
	int64_t started;              /* epoch seconds */
	struct ipc_stats child;       /* the ended children's counters */
	struct grey_counters decided; /* the report's resets, less what the
	                                 store held at start */
};

struct metrics_figures *
metrics_figures_new(int64_t started)
{
	struct metrics_figures *f = calloc(1, sizeof(*f));

	if (f)
		f->started = started;
	return f;
}

void
metrics_figures_free(struct metrics_figures *f)
{
	free(f);
}

int64_t
metrics_figures_started(const struct metrics_figures *f)
{
	return f->started;
}

void
metrics_figures_begin(struct metrics_figures *f,
                      const struct grey_counters *held)
{
	memset(&f->decided, 0, sizeof(f->decided));
	add_counters(&f->decided, held, -1);
}

void
metrics_figures_report_reset(struct metrics_figures *f,
                             const struct grey_counters *now)
{
	add_counters(&f->decided, now, 1);
}

void
metrics_figures_child_gone(struct metrics_figures *f,
                           const struct ipc_stats *last)
{
	size_t base = offsetof(struct snapshot, child);

	for (size_t i = 0; i < NMETRICS; i++)
		if (is_child_counter(&metrics_registry[i]))
			add_field(&f->child, last, metrics_registry[i].off - base,
			          metrics_registry[i].size);
}

void
metrics_figures_carry(const struct metrics_figures *f,
                      struct metrics_snapshot *s)
{
	size_t base = offsetof(struct snapshot, child);

	add_counters(&s->decided, &f->decided, 1);
	s->passed_other = s->decided.passed - s->decided.passed_retry -
	                  s->decided.passed_trusted;
	for (size_t i = 0; i < NMETRICS; i++)
		if (is_child_counter(&metrics_registry[i]))
			add_field(&s->child, &f->child, metrics_registry[i].off - base,
			          metrics_registry[i].size);
	s->started = f->started;
}

/* On a shared store the pass and trap sets are fed by every gateway and
 * counted nowhere here (the counts are the LMDB store's): left out
 * rather than shown as 0. */
bool
metrics_shown(const struct snapshot *s, const struct metric *m)
{
	size_t from = offsetof(struct snapshot, sets[NFTSET_PASS]);
	size_t to = offsetof(struct snapshot, sets[NFTSET_TRAP][1]) +
	            sizeof(s->sets[0][0]);

	return !s->sets_uncounted || m->off < from || m->off >= to;
}
