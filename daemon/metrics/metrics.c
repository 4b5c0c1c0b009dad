// SPDX-License-Identifier: GPL-2.0-or-later
/* The registry of greygated's figures, what the counters carry over a
 * child's restart, and the Prometheus exposition (greygatectl status's
 * text and JSON are metrics_status.c; see metrics.h). Every figure is read once
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

#ifndef GREYGATE_VERSION
#define GREYGATE_VERSION "unknown"
#endif

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
};

const size_t metrics_registry_n =
        sizeof(metrics_registry) / sizeof(*metrics_registry);
#define NMETRICS metrics_registry_n

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
};

#define NFAMILIES (sizeof(families) / sizeof(*families))

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

/* --- Prometheus --- */

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
		for (size_t i = 0; i < NMETRICS; i++) {
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
