/* SPDX-License-Identifier: GPL-2.0-or-later */
/* greygated's figures, one registry: each counter and gauge once, with
 * its status group and field, its words in the status text, its
 * Prometheus family and labels, and where its value comes from.
 * greygatectl status (text and --json) and the Prometheus exposition
 * (greygatectl metrics, the metrics listener) are all rendered from it,
 * so they never disagree.
 *
 * Counters are monotonic for the life of greygated: the child's carry
 * over its restarts (metrics_figures_child_gone), the decisions over the
 * report's resets (metrics_figures_report_reset); the report's own
 * resettable figures stay the report's. */
#ifndef GREYGATE_METRICS_H
#define GREYGATE_METRICS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "config.h"
#include "decide.h"
#include "grey_store.h"
#include "ipc.h"
#include "nftset_config.h"
#include "policy.h"
#include "policy_door.h"
#include "store_snapshot.h"

/* Children finishing their hand-offs after a reload, shown at most. */
#define METRICS_RETIRING_MAX 8

/* Every figure, read at one moment, and what the renderings show beside
 * them: the root collects it (gateway_figures, daemon/gateway.c) from
 * each service; this module only renders it, so it knows no service. */
struct metrics_snapshot {
	struct grey_counters decided; /* for the life of greygated */
	uint64_t passed_other;        /* passes not by a retry */
	struct ipc_stats child;       /* counters for the life of greygated */
	struct policy_door_stats door;
	struct store_counters store;
	/* store_snapshot_dir set: the snapshots of the store to it */
	bool snapshot_on;
	struct store_snapshot_counters snapshots;
	uint64_t sets[NFTSET_KINDS][2]; /* kind, v4/v6 */
	uint64_t triplets, passes, traps;
	uint64_t child_restarts, handoffs_started, handoffs_failed;
	char handoff_auto[160]; /* [handoff] mode = auto: what it does now */
	bool handoff_ready;     /* ... and whether it hands passes over */
	uint64_t verdicts_unsent, records_refused, set_changes_failed;
	struct grey_store_status shared; /* a shared store's (zero: none) */
	uint64_t shared_up, shared_disagreed;
	bool sets_uncounted; /* passes and traps: kept in no count here */
	/* the running child (pid 0: none, restarting) and those retiring */
	pid_t child_pid;
	unsigned child_starts;
	int64_t child_since;
	struct metrics_retiring {
		pid_t pid;
		int64_t since;
	} retiring[METRICS_RETIRING_MAX]; /* newest first */
	size_t nretiring;
	/* the moment, greygated's start, the settings shown */
	int64_t now, started;
	const struct config *cfg;
	bool policy_door_on;
	const struct grey_delay_histogram *delays;
	const struct decider_fetch_latency *fetch; /* the store's latency */
	/* [signals] lookups: on, and the resolver's counters */
	bool dns_on;
	struct {
		uint64_t asked, cached, joined, timeouts, failures, held;
		uint64_t silent, silences; /* silent: 1 while no server
					      answers (resolver.h) */
	} dns;
};

/* What greygated's figures keep beside their sources (gw->figures):
 * when greygated started, and what the counters carry over. */
struct metrics_figures;

/* metrics_figures_new - greygated started at started (epoch seconds).
 * Return: NULL (ENOMEM) or them. _free: NULL is fine. */
struct metrics_figures *metrics_figures_new(int64_t started);
void metrics_figures_free(struct metrics_figures *f);

/* metrics_figures_started - when greygated started (epoch seconds). */
int64_t metrics_figures_started(const struct metrics_figures *f);

/* metrics_figures_begin - the decision counters count from now: held,
 * what the report restored from the store, is not this greygated's. */
void metrics_figures_begin(struct metrics_figures *f,
                           const struct grey_counters *held);

/* metrics_figures_child_gone - the child's counters so far go into the
 * carry before a new child starts from zero. */
void metrics_figures_child_gone(struct metrics_figures *f,
                                const struct ipc_stats *last);

/* metrics_figures_report_reset - the report's figures (now) go to zero;
 * the decision counters must not (call before they are zeroed). */
void metrics_figures_report_reset(struct metrics_figures *f,
                                  const struct grey_counters *now);

/* metrics_figures_carry - s, read from the services (its decided and
 * child counters as they are now), made monotonic for the life of
 * greygated with the carry; its started set. */
void metrics_figures_carry(const struct metrics_figures *f,
                           struct metrics_snapshot *s);

/* metrics_status_text, metrics_status_json - greygatectl status. */
void metrics_status_text(const struct metrics_snapshot *s, FILE *out);
void metrics_status_json(const struct metrics_snapshot *s, FILE *out);

/* metrics_exposition - Prometheus's text format (version 0.0.4). */
void metrics_exposition(const struct metrics_snapshot *s, FILE *out);

#endif
