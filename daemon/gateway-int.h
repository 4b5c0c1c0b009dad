/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The gateway's insides, shared by its files: gateway.c (policy, sets,
 * allow lists), supervise.c (the child), commands.c (greygatectl). */
#ifndef GREYGATE_GATEWAY_INT_H
#define GREYGATE_GATEWAY_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "allow_lists.h"
#include "follow_sets.h"
#include "housekeeping.h"
#include "decide.h"
#include "gateway.h"
#include "ipc.h"
#include "loop.h"
#include "sessions.h"

struct control;
struct proc;
struct policy_door;

struct gateway {
	struct config *cfg;
	struct {
		const char *path;
		bool missing_ok; /* (--config not given: the default's) */
	} cfg_source;        /* where cfg is read from again at a reload */
	struct loop *loop;
	struct store *store; /* LMDB: the greylist, or (with a shared
				store) this gateway's own report */
	struct grey_store *records; /* the greylist's store, whichever it
				       is: what the decider asks */
	struct decider *decider; /* the decider's state and its greylist
				    (decide.c) */
	struct nftset *nft;
	struct sets_follower *sets; /* the sets' listener (follow_sets.c) */
	struct control *control;
	struct policy_door *policy_door; /* NULL: off */
	struct housekeeping *hk; /* and the report's figures
				    (housekeeping.c) */
	struct allow_lists *allow; /* (allow_lists.c) */
	/* the child */
	struct supervisor *sup; /* its process, restarts, verdict queue
				   and refusals (supervise.c) */
	struct metrics_figures *figures; /* greygated's start, what its
					    counters carry over (metrics.c) */
	struct handoff_state *handoff; /* (handoff.c) */
	struct metrics_listener *metrics_listener; /* NULL: none */
};

/* gateway_key_of - client (an address, or a network no wider than
 * greylisting's key) as greylisting keys it (*key), and as given
 * (*given, if not NULL). Return: 0, -EINVAL (not an address), -ERANGE
 * (wider than the key). */
int gateway_key_of(const struct gateway *gw, const char *client,
                   struct grey_client *given, struct grey_client *key);

/* gateway_release - client's key passes now, for pass_ttl, as if its
 * retry had come (release.c); with sender and rcpt (both or neither)
 * only if that triplet waits. who: who asked, for the log line.
 * Return: 0 (released), GREY_STORE_UNDER_WAY (a store that answers
 * later: the log says), -ENOENT (no such triplet waiting), -EINVAL,
 * -ERANGE (as gateway_key_of), -EDESTADDRREQ (one of sender and rcpt
 * alone), -ENAMETOOLONG, or -errno. */
int gateway_release(struct gateway *gw, const char *client, const char *sender,
                    const char *rcpt, const char *who, char *key_out,
                    size_t key_len);

/* gateway_forget - drop what the store and the sets hold of client (an
 * address, or a network no wider than greylisting's key, keyed as
 * greylisting keys it). Return: records deleted,
 * GREY_STORE_UNDER_WAY (a store that answers later: it logs them),
 * -EINVAL (not an address), -ERANGE (wider than the key), -ENOTCONN (the
 * store does not answer), or -errno. */
int gateway_forget(struct gateway *gw, const char *client, char *key_out,
		   size_t key_len);

/* The child (supervise.c). A capture is opened (and closed) at the
 * start, so a bad interface stops greygated before anything else is
 * done; each child opens its own. */
int supervise_check_capture(struct gateway *gw, char *err);
/* supervise_new, _free - the supervisor's state (gw->sup), made before
 * supervise_start and freed after supervise_stop. _free: NULL is fine. */
struct supervisor *supervise_new(void);
void supervise_free(struct supervisor *sup);
/* supervise_dns - the signals' resolver counters into s (nothing when
 * [signals] lookups is off). */
struct metrics_snapshot;
void supervise_dns(const struct gateway *gw, struct metrics_snapshot *s);

/* gateway_figures - every figure, read now from each service, with the
 * counters' carry (figures.c): what status and metrics render. */
void gateway_figures(struct gateway *gw, struct metrics_snapshot *s);

/* What status and metrics tell of the child. */
struct supervise_status {
	pid_t pid;               /* 0: none (restarting) */
	unsigned starts;         /* children started so far */
	int64_t since;           /* the running one's start, epoch s */
	const struct ipc_stats *stats; /* its counters (this child's) */
	uint64_t records_refused; /* the child's records refused */
	uint64_t verdicts_unsent; /* lost: no child, or the queue full */
};
void supervise_get_status(const struct gateway *gw,
                          struct supervise_status *out);
/* supervise_adopt_listener - a tarpit listener greygated bound (slot:
 * 0, 1 the tarpit's v4, v6; 2, 3 the stutter's), served by every child,
 * closed with the supervisor. */
void supervise_adopt_listener(struct gateway *gw, int slot, int fd);
/* supervise_retiring - the list of children finishing their hand-offs
 * after a reload (retiring.c's), newest first. */
struct retiring;
struct retiring **supervise_retiring(const struct gateway *gw);
/* supervise_handoff_child - how the hand-off talks to the child: verdicts
 * and caps down, a session's hand-off over. */
struct handoff_child supervise_handoff_child(struct gateway *gw);
/* supervise_send_caps - tell the child what its EHLO lists now (with the
 * next verdicts; nothing while no child runs). */
void supervise_send_caps(struct gateway *gw);
int supervise_start(struct gateway *gw, char *err);
void supervise_stop(struct gateway *gw);
void supervise_restart(struct gateway *gw);
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
int retiring_add(struct gateway *gw, struct proc *proc, int sock,
		 struct sessions *sessions);
/* retiring_list - the children finishing their hand-offs, newest
 * first: their pids and since when (epoch s), max at most. Return: how
 * many. */
size_t retiring_list(const struct gateway *gw, pid_t *pids, int64_t *since,
                     size_t max);
/* retiring_stop_all - at greygated's stop: each ended, waited for. */
void retiring_stop_all(struct gateway *gw);

/* supervise_flush - send the child what waits for it (what its EHLO
 * lists, verdicts), as far as its socket takes it now; the rest when
 * there is room. */
void supervise_flush(struct gateway *gw);

/* supervise_send_verdict - a waiting session's answer to the child, with
 * its hand-off connection if it has one (v->handoff_fd: closed here once
 * sent). */
void supervise_send_verdict(struct gateway *gw, uint64_t session,
			    uint32_t question, const struct tarpit_verdict *v);

/* greygatectl's commands (commands.c): what the control socket hands each
 * request to (control_run_fn, ctx the gateway). */
struct control_stream;
int commands_run(void *gw, int argc, char **argv, const char *who, FILE *out,
		 struct control_stream *stream, char *err, size_t err_len);

#endif
