/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The child's supervisor (supervise.c, supervise_records.c,
 * retiring.c): greygated's one child (sensor and tarpit) started,
 * restarted and stopped, its records read and decided, its verdicts sent;
 * the children before a reload finishing their hand-offs. */
#ifndef GREYGATE_SUPERVISE_H
#define GREYGATE_SUPERVISE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sensor.h"
#include "tarpit.h"
#include "decide.h"
#include "handoff.h"
#include "ipc.h"
#include "loop.h"
#include "metrics.h"
#include "sessions.h"

struct proc;
struct retiring;
struct supervisor;

/* What the supervisor works with, all borrowed: the decider (each
 * attempt of the child's), the hand-off (a pass handed to the MTA), the
 * figures a dead child's counters carry over into. */
struct supervisor_links {
	struct loop *loop;
	struct decider *decider;
	struct handoff_state *handoff;
	struct metrics_figures *figures;
};

/* The supervisor's part of the settings (config_supervisor_part): what
 * each child is started with, and how its sessions are read. */
struct supervisor_settings {
	char capture_device[64]; /* the capture's interface or nflog:GROUP */
	uint32_t capture_buffer; /* its kernel ring, bytes */
	uint32_t nflog_group;    /* 0: the interface */
	struct sensor_config sensor;
	struct tarpit_config tarpit; /* (its two strings are the child's:
	                                hostname and capabilities below) */
	uint16_t tarpit_port, trap_port; /* [gateway]: its sessions' ports */
	uint8_t handoff_mode;    /* enum handoff_mode in effect */
	uint32_t handoff_timeout_ms;
	bool seccomp;
	int log_level;
	char user[64];
	char hostname[256];
	char capabilities[256];
};

/* The child (supervise.c). A capture is opened (and closed) at the
 * start, so a bad interface stops greygated before anything else is
 * done; each child opens its own. */
int supervise_check_capture(struct supervisor *sup, char *err);
/* supervise_new, _free - the supervisor's state, made before
 * supervise_start and freed after supervise_stop. _new: NULL (ENOMEM);
 * _free: NULL is fine. s copied. */
struct supervisor *supervise_new(const struct supervisor_links *links,
                                  const struct supervisor_settings *s);

/* supervise_reconfigure - a reload's settings (copied): the next child
 * started has them (supervise_restart starts one now). */
void supervise_reconfigure(struct supervisor *sup,
                           const struct supervisor_settings *s);
void supervise_free(struct supervisor *sup);

/* What status and metrics tell of the child. */
struct supervise_status {
	pid_t pid;                     /* 0: none (restarting) */
	unsigned starts;               /* children started so far */
	int64_t since;                 /* the running one's start, epoch s */
	const struct ipc_stats *stats; /* its counters (this child's) */
	uint64_t records_refused;      /* the child's records refused */
	uint64_t verdicts_unsent;      /* lost: no child, or the queue full */
};
void supervise_get_status(const struct supervisor *sup,
                          struct supervise_status *out);
/* supervise_adopt_listener - a tarpit listener greygated bound (slot:
 * 0, 1 the tarpit's v4, v6; 2, 3 the stutter's), served by every child,
 * closed with the supervisor. */
void supervise_adopt_listener(struct supervisor *sup, int slot, int fd);
/* supervise_handoff_child - how the hand-off talks to the child: verdicts
 * and caps down, a session's hand-off over. */
struct handoff_child supervise_handoff_child(struct supervisor *sup);
/* supervise_send_caps - tell the child what its EHLO lists now (with the
 * next verdicts; nothing while no child runs). */
void supervise_send_caps(struct supervisor *sup);
int supervise_start(struct supervisor *sup, char *err);

/* supervise_use_signals - the root's signals service, lent: each tarpit
 * session's lookups (NULL: none). It outlives the supervisor. */
struct signals;
void supervise_use_signals(struct supervisor *sup, struct signals *signals);
void supervise_stop(struct supervisor *sup);
void supervise_restart(struct supervisor *sup);
/* supervise_describe_end - how a child ended, from waitpid's status. */
void supervise_describe_end(int status, char *buf, size_t len);

/*
 * retiring_add - the child (proc, its socket, its sessions) hands over
 * to a new one: told to drain (IPC_DRAIN), it keeps its sessions handed
 * to the MTA until they end, heard (its log lines) until it ends, and is
 * killed if it outlives IPC_DRAIN_MAX_SEC.
 * Return: 0 (all three taken), or -errno (it could not be told: nothing
 * taken).
 */
int retiring_add(struct supervisor *sup, struct proc *proc, int sock,
                 struct sessions *sessions);
/* retiring_list - the children finishing their hand-offs, newest
 * first: their pids and since when (epoch s), max at most. Return: how
 * many. */
size_t retiring_list(const struct supervisor *sup, pid_t *pids, int64_t *since,
                     size_t max);
/* retiring_stop_all - at greygated's stop: each ended, waited for. */
void retiring_stop_all(struct supervisor *sup);

/* supervise_flush - send the child what waits for it (what its EHLO
 * lists, verdicts), as far as its socket takes it now; the rest when
 * there is room. */
void supervise_flush(struct supervisor *sup);

/* supervise_send_verdict - a waiting session's answer to the child, with
 * its hand-off connection if it has one (v->handoff_fd: closed here once
 * sent). */
void supervise_send_verdict(struct supervisor *sup, uint64_t session,
                            uint32_t question, const struct tarpit_verdict *v);

#endif
