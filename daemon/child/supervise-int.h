/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The supervisor's state, shared by its two halves: the child's process
 * (supervise.c: start, stop, restart) and the child's records
 * (supervise_records.c: attempts, events, verdicts). */
#ifndef GREYGATE_SUPERVISE_INT_H
#define GREYGATE_SUPERVISE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc.h"
#include "loop.h"
#include "supervise.h"

/* Verdicts waiting for room in the child's socket (it takes at most
 * net.unix.max_dgram_qlen records at a time): at most this many, then
 * they are lost (the session times out to the plain 451). */
#define VERDICTS_QUEUED_MAX 65536


/* The child's supervision: its process, its restarts, what it sent that
 * was refused, the verdicts waiting for room in its socket. */
struct supervisor {
	struct supervisor_links links; /* what it works with (borrowed) */
	struct supervisor_settings cfg; /* its own (supervise_reconfigure) */
	/* the tarpit's listeners, bound by greygated, served by each
	 * child: tarpit v4, v6; stutter v4, v6 (-1: none) */
	int listen_fd[4];
	/* children before a reload, finishing the sessions they handed to
	 * the MTA (retiring.c), the newest first */
	struct retiring *retiring;
	int child_sock; /* the parent's end, -1 while no child */
	/* the tarpit's sessions, their addresses read from their sockets
	 * (sessions.h) */
	struct sessions *sessions;
	/* each session's DNS signals, looked up from its start ([signals]
	 * lookups; NULL: off) */
	struct signals *signals;
	bool caps_pending; /* what the tarpit's EHLO lists, to be told */
	pid_t child_pid;
	unsigned child_starts;
	int64_t child_since;
	struct proc *child_proc; /* watched on the loop (NULL: none) */
	bool child_stop_asked;   /* ended on purpose: a new one at once */
	uint32_t restart_delay_ms;
	struct loop_timer restart;
	struct ipc_stats child_stats;
	/* capture losses warned of: the child's count then (each child's
	 * capture counts from 0), and when */
	pid_t drops_child;
	uint64_t drops_warned_at_count;
	int64_t drops_warned;
	/* records of the child's refused (ipc_take_up), and how many were
	 * said in the log this minute */
	uint64_t records_refused;
	int64_t refusals_minute;
	unsigned refusals_said;
	uint64_t refusals_unsaid;
	/* records whose socket greygated could not take (its descriptors
	 * all used), and when that was last said */
	uint64_t fds_lost;
	int64_t fds_lost_said;
	uint64_t verdicts_unsent; /* lost: no child, or the queue full */
	/* verdicts waiting for room in the child's socket, a ring */
	struct queued_verdict {
		uint64_t session;
		uint32_t question;
		struct tarpit_verdict v; /* its handoff_fd held until sent */
	} *vq;
	size_t vq_head, vq_len, vq_size;
	bool verdicts_batching; /* queued, sent at the batch's end */
	bool vq_watching;       /* the child's socket watched for room */
};

/* supervise_drop_verdicts - the queued verdicts go (counted unsent). */
void supervise_drop_verdicts(struct supervisor *sup);
/* supervise_close_child_sock - the child's socket closed: its queued
 * verdicts, sessions and hand-offs under way go with it. */
void supervise_close_child_sock(struct supervisor *sup);
/* supervise_on_child_sock - the child's socket is readable (or
 * writable, with verdicts queued): read its records. */
void supervise_on_child_sock(struct loop *loop, int fd, uint32_t events,
                             void *ctx);

#endif
