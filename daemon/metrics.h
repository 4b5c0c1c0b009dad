/* SPDX-License-Identifier: GPL-2.0-or-later */
/* greygated's figures, one registry: each counter and gauge once, with
 * its status group and field, its words in the status text, its
 * Prometheus family and labels, and where its value comes from.
 * greygatectl status (text and --json) and the Prometheus exposition
 * (greygatectl metrics, the metrics listener) are all rendered from it,
 * so they never disagree.
 *
 * Counters are monotonic for the life of greygated: the child's carry
 * over its restarts (metrics_child_gone), the decisions over the
 * report's resets (metrics_report_reset); the report's own resettable
 * figures stay the report's. */
#ifndef GREYGATE_METRICS_H
#define GREYGATE_METRICS_H

#include <stdint.h>
#include <stdio.h>

#include "ipc.h"
#include "policy.h"

struct gateway;

/* What greygated's figures keep beside their sources (gw->figures):
 * when greygated started, and what the counters carry over. */
struct metrics_figures;

/* metrics_figures_new - greygated started at started (epoch seconds).
 * Return: NULL (ENOMEM) or them. _free: NULL is fine. */
struct metrics_figures *metrics_figures_new(int64_t started);
void metrics_figures_free(struct metrics_figures *f);

/* metrics_started_at - when greygated started (epoch seconds). */
int64_t metrics_started_at(const struct gateway *gw);

/* metrics_started - the decision counters count from now: what the
 * report restored from the store is not this greygated's. */
void metrics_started(struct gateway *gw);

/* metrics_child_gone - the child's counters so far go into the carry
 * before a new child starts from zero. */
struct ipc_stats;
void metrics_child_gone(struct gateway *gw, const struct ipc_stats *last);

/* metrics_report_reset - the report's figures go to zero; the decision
 * counters must not (call before they are zeroed). */
void metrics_report_reset(struct gateway *gw);

/* metrics_status_text, metrics_status_json - greygatectl status. */
void metrics_status_text(struct gateway *gw, FILE *out);
void metrics_status_json(struct gateway *gw, FILE *out);

/* metrics_exposition - Prometheus's text format (version 0.0.4). */
void metrics_exposition(struct gateway *gw, FILE *out);

#endif
