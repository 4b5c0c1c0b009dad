/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The gateway's insides, shared by its files: gateway.c (policy, sets,
 * allow lists), supervise.c (the child), commands.c (greygatectl). */
#ifndef GREYGATE_GATEWAY_INT_H
#define GREYGATE_GATEWAY_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "allow.h"
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
	struct control *control;
	struct policy_door *policy_door; /* NULL: off */
	struct housekeeping *hk; /* and the report's figures
				    (housekeeping.c) */
	struct allow_state *allow; /* the allow lists (gateway_allow.c) */
	/* the child */
	struct supervisor *sup; /* its process, restarts, verdict queue
				   and refusals (supervise.c) */
	struct metrics_figures *figures; /* greygated's start, what its
					    counters carry over (metrics.c) */
	struct handoff_state *handoff; /* (handoff.c) */
	struct metrics_listener *metrics_listener; /* NULL: none */
};

/* The housekeeping (housekeeping.c): _open makes its state (gw->hk)
 * and takes the report's figures saved before a restart, once the store
 * is open (Return: 0 or -ENOMEM); _start arms its timer; _stop disarms
 * it; _close saves the figures and frees it (none made is fine). */
int gateway_housekeeping_open(struct gateway *gw);
void gateway_housekeeping_start(struct gateway *gw);
void gateway_housekeeping_stop(struct gateway *gw);
void gateway_housekeeping_close(struct gateway *gw);
/* gateway_stats_since - when the report's counting began. */
int64_t gateway_stats_since(const struct gateway *gw);

/* gateway_stats_reset - the report counts from zero, from now on. */
void gateway_stats_reset(struct gateway *gw);

/* gateway_allow_open - the allow lists' state (gw->allow), with the
 * run-time entries saved in store_dir read (a file that cannot be read
 * is said, and the list starts empty). Return: 0 or -ENOMEM. */
int gateway_allow_open(struct gateway *gw);
/* gateway_allow_close - and freed (none open is fine). */
void gateway_allow_close(struct gateway *gw);
/* gateway_allow_ranges - the merged ranges the kernel and the policy
 * hold now (*n of them), and the lists' generation (changes with every
 * reload; generation may be NULL). Valid until the next reload. */
const struct allow_range *gateway_allow_ranges(const struct gateway *gw,
                                               size_t *n,
                                               uint64_t *generation);
/* gateway_allow_runtime_entries - greygatectl allow's entries (and other
 * gateways'), *n of them. Valid until the next change. */
const struct allow_runtime *
gateway_allow_runtime_entries(const struct gateway *gw, size_t *n);

/* gateway_allow_runtime - add (or replace) a run-time allow entry, save
 * the list and put it in the sets. ttl_sec 0: no end.
 * Return: 0, -EINVAL (not a CIDR), -ERANGE (ttl past ALLOW_TTL_MAX_SEC),
 * -EILSEQ (control characters in the comment), or -errno. */
int gateway_allow_runtime(struct gateway *gw, const char *cidr,
			  uint32_t ttl_sec, const char *comment);

/* gateway_disallow_runtime - remove a run-time allow entry (made here or
 * by another gateway on the store), save the list, take it out of the
 * sets, and tell every gateway that shares the store. Entries of the
 * allow files are not touched. by: who asked (the log line's by=).
 * Return: 0, -EINVAL (not a CIDR), -ENOENT (no such run-time entry), or
 * -errno. */
int gateway_disallow_runtime(struct gateway *gw, const char *cidr,
			     const char *by);

/* gateway_allow_remove - net's run-time entry out of the list; with
 * apply, saved and out of the sets at once. Not told to the shared store.
 * Return: 1 (removed), 0 (absent), or -errno. */
int gateway_allow_remove(struct gateway *gw, const struct grey_client *net,
			 bool apply);

/* gateway_allow_reload - read the files and the run-time entries again,
 * merge them, and put the ranges in the policy and (one batch) in the
 * kernel; on failure the lists in place stay. Return: 0 or -errno. */
int gateway_allow_reload(struct gateway *gw);

/* gateway_allow_expire - drop run-time entries past their end (saved).
 * Return: true if any was. */
bool gateway_allow_expire(struct gateway *gw, int64_t now);

/* gateway_allow_put - a run-time allow entry (its cidr canonical) into
 * the list; with apply, saved and in the sets at once (else by
 * gateway_allow_apply, once for many). Not told to the shared store.
 * Return: 1 (changed), 0 (the same entry is there), or -errno. */
int gateway_allow_put(struct gateway *gw, const struct allow_runtime *e,
		      bool apply);

/* gateway_allow_apply - save the run-time list and reload the allow
 * lists into the policy and the sets. Return: 0 or -errno. */
int gateway_allow_apply(struct gateway *gw);

/* gateway_follow_store - the sets follow the store (follow_sets.c):
 * what it holds at once (or as it comes), then what other gateways
 * change. Return: 0, or -errno (the store could not be read). */
int gateway_follow_store(struct gateway *gw);

/* gateway_adopt_kept - the passes the persistent table a dead greygated
 * left still held, written back into the store where it lacks them and
 * put back in the sets (adopt_kept.c; said in one log line when done).
 * Return: 0 (under way, or nothing kept) or -ENOMEM (said). */
int gateway_adopt_kept(struct gateway *gw);

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
