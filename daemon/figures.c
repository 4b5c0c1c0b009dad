// SPDX-License-Identifier: GPL-2.0-or-later
/* greygated's figures collected: the root asks each service for its own
 * (the decider's counters, the child's, the door's, the store's, the
 * sets' counts, the hand-off's) into one snapshot, which metrics.c
 * renders without knowing any service. */
#include <string.h>
#include <sys/socket.h>

#include "gateway-int.h"
#include "handoff.h"
#include "metrics.h"
#include "policy_door.h"

/* The sets' counts as greygated keeps them, never a dump of the kernel's
 * sets (a million allow entries took minutes): the merged allow ranges
 * greygated sent, and the store's pass and trap records (the kernel's
 * elements expire with them). */
static void
count_sets(struct gateway *gw, struct metrics_snapshot *s)
{
	size_t nallow;
	const struct allow_range *allow = allow_lists_ranges(gw->allow, &nallow, NULL);

	for (size_t i = 0; i < nallow; i++)
		s->sets[NFTSET_ALLOW][allow[i].range.family == AF_INET6]++;
	for (int f = 0; f < 2; f++) {
		int family = f ? AF_INET6 : AF_INET;
		int64_t passes = grey_store_count(gw->records, GREY_STORE_PASSES,
		                                  family);
		int64_t traps = grey_store_count(gw->records, GREY_STORE_TRAPS,
		                                 family);

		/* (a store every gateway writes keeps no count here) */
		s->sets_uncounted = passes < 0 || traps < 0;
		s->sets[NFTSET_PASS][f] = passes < 0 ? 0 : (uint64_t)passes;
		s->sets[NFTSET_TRAP][f] = traps < 0 ? 0 : (uint64_t)traps;
	}
}

void
gateway_figures(struct gateway *gw, struct metrics_snapshot *s)
{
	struct supervise_status sup;
	pid_t pids[METRICS_RETIRING_MAX];
	int64_t since[METRICS_RETIRING_MAX];

	memset(s, 0, sizeof(*s));
	s->now = loop_wall_sec(gw->loop);
	s->cfg = gw->cfg;
	s->decided = *grey_get_counters(decider_grey(gw->decider));
	s->delays = grey_get_delay_histogram(decider_grey(gw->decider));
	supervise_get_status(gw, &sup);
	s->child = *sup.stats;
	s->child_pid = sup.pid;
	s->child_starts = sup.starts;
	s->child_since = sup.since;
	s->child_restarts = sup.starts > 1 ? sup.starts - 1 : 0;
	s->verdicts_unsent = sup.verdicts_unsent;
	s->records_refused = sup.records_refused;
	s->nretiring = retiring_list(gw, pids, since, METRICS_RETIRING_MAX);
	for (size_t i = 0; i < s->nretiring; i++)
		s->retiring[i] = (struct metrics_retiring){pids[i], since[i]};
	s->policy_door_on = gw->policy_door != NULL;
	policy_door_get_stats(gw->policy_door, &s->door);
	s->store = *store_get_counters(gw->store);
	count_sets(gw, s);
	s->triplets = store_count(gw->store, -1);
	s->passes = store_count(gw->store, STORE_PASS);
	s->traps = store_count(gw->store, STORE_TRAP);
	handoff_auto_text(gw->handoff, s->handoff_auto, sizeof(s->handoff_auto));
	s->handoff_ready = handoff_ready(gw->handoff);
	handoff_get_counts(gw->handoff, &s->handoffs_started,
	                   &s->handoffs_failed);
	s->set_changes_failed = decider_set_changes_failed(gw->decider);
	grey_store_get_status(gw->records, &s->shared);
	s->shared_up = s->shared.up;
	s->shared_disagreed = s->shared.disagreed;
	supervise_dns(gw, s);
	metrics_figures_carry(gw->figures, s);
}
