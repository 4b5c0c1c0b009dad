/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The hand-off's first steps, in greygated: a session that passes is
 * handed to the MTA on a connection greygated opens (never the child:
 * it must not connect where it likes, nor tell the MTA who the client
 * is), and tells the MTA who the client is: a PROXY v2 header written in
 * one piece before anything else (proxy-v2), or the MTA's greeting, EHLO
 * and XCLIENT with the client's address, port and HELO (xclient). Then
 * the connection goes down to the child with the verdict; the child
 * replays the client's EHLO, MAIL and RCPT (or STARTTLS) and joins the
 * two (tarpit/join.c). Any failure here: the verdict goes without a
 * connection (the client hears 451 and retries, on the fast path). */
#ifndef GREYGATE_HANDOFF_H
#define GREYGATE_HANDOFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "handoff_config.h"
#include "must_check.h"

struct ipc_record;
struct loop;
struct session_ends;
struct tarpit_verdict;

/* How the hand-off talks to the child (the supervisor's: supervise.c). */
struct handoff_child {
	/* the verdict goes down, with the MTA's connection or without */
	void (*send_verdict)(void *ctx, uint64_t session, uint32_t question,
			     const struct tarpit_verdict *v);
	/* what the tarpit's EHLO lists changed (handoff_fill_caps) */
	void (*caps_changed)(void *ctx);
	/* the session's hand-off is over: another of it may begin */
	void (*handed)(void *ctx, uint64_t session);
	void *ctx;
};

/* handoff_state_new, _free - greygated's hand-off side (the hand-offs
 * under way, the MTA's probe, the transparent route) over loop and cfg
 * (copied: handoff_reconfigure brings a reload's), made before anything
 * uses it, freed after handoff_abort_all and handoff_route_close. _new:
 * NULL (ENOMEM); _free: NULL is fine. */
struct handoff_state;
struct handoff_state *handoff_state_new(struct loop *loop,
					const struct handoff_settings *cfg);

/* handoff_reconfigure - a reload's settings (copied): the hostname and
 * the EHLO list from the next hand-off and probe on. */
void handoff_reconfigure(struct handoff_state *hs,
                         const struct handoff_settings *cfg);
void handoff_state_free(struct handoff_state *s);

/* handoff_set_child - how it talks to the child (copied): before the
 * first hand-off. */
void handoff_set_child(struct handoff_state *hs,
		       const struct handoff_child *child);

/* handoff_get_counts - hand-offs begun, and those whose connection to
 * the MTA could not be made, since greygated started. */
void handoff_get_counts(const struct handoff_state *hs, uint64_t *started,
                        uint64_t *failed);

/* The longest PROXY v2 header (IPv6, no TLVs). */
#define HANDOFF_PROXY_MAX 52

/*
 * handoff_begin - open the hand-off of session's question: who the client
 * is and where it was going come from ends (read from the session's
 * socket, never from the child; in transparent mode only the port
 * greygate redirects is connected to); helo is the client's own word,
 * for XCLIENT. The verdict v goes to the child once the MTA knows the
 * client, or without a connection if that fails.
 * Return: 0 (under way), or -errno (nothing started, said and counted:
 * the caller sends v).
 */
MUST_CHECK int handoff_begin(struct handoff_state *hs, uint64_t session, uint32_t question,
		  const struct session_ends *ends, const char *helo,
		  const struct tarpit_verdict *v);

/* handoff_abort_sessions - end the hand-offs of sessions under way (the
 * child is gone: its sessions are too, and a new child's sessions are
 * numbered again from 1). */
void handoff_abort_sessions(struct handoff_state *hs);

/* handoff_abort_all - end every hand-off under way, and the MTA's probe
 * (greygated stops). */
void handoff_abort_all(struct handoff_state *hs);

/*
 * handoff_proxy_header - a PROXY v2 header (version 2, PROXY, TCP over
 * IPv4 or IPv6, no TLVs) for a connection from src to dst (one family)
 * into out (HANDOFF_PROXY_MAX bytes).
 * Return: its length, or 0 if the families differ or are not IP.
 */
size_t handoff_proxy_header(const struct sockaddr *src,
                            const struct sockaddr *dst, uint8_t *out);

/*
 * handoff_xtext - text xtext-encoded (RFC 3461: '+', '=' and bytes
 * outside 33..126 as +HH) into out (len bytes with the NUL).
 * Return: the encoded length, or -1 if it does not fit.
 */
int handoff_xtext(const char *text, char *out, size_t len);

/* handoff_ehlo_offers - does the EHLO reply ehlo[0..len) list keyword
 * (a whole word, any case, not the greeting's host name)? */
bool handoff_ehlo_offers(const char *ehlo, size_t len, const char *keyword);

/*
 * handoff_common_caps - what the tarpit's EHLO may list: the configured
 * keywords (','-separated) that the MTA's EHLO reply also lists, SIZE
 * with the MTA's own limit, so that a client never uses a MAIL parameter
 * the MTA would refuse after the join.
 * @ehlo, @len: the MTA's whole EHLO reply
 * @out: the result, ','-separated (outlen bytes with the NUL)
 * @starttls: does the MTA offer STARTTLS?
 */
void handoff_common_caps(const char *configured, const char *ehlo,
			 size_t len, char *out, size_t outlen, bool *starttls);

/* handoff_probe_start - ask the MTA's EHLO now and every 10 minutes: the
 * tarpit then lists what the MTA offers (handoff_common_caps), and the
 * log says at once whether the MTA can be reached. With mode = auto,
 * every 10 seconds while it cannot, and (without an address) from the
 * first time a client's destination is known
 * (handoff_learn_destination). */
void handoff_probe_start(struct handoff_state *hs);

/* handoff_learn_destination - mode = auto without an address: the MTA
 * is asked where this session's client was going (read from its socket),
 * the first time one is known on smtp_port and is an address of this
 * host's (a client must not choose where greygated connects); nothing
 * otherwise. */
void handoff_learn_destination(struct handoff_state *hs,
                               const struct session_ends *ends);

/* handoff_ready - may a pass be handed over now? Always in a mode
 * chosen; with auto, once the MTA answered its probe and while it
 * does (before, a passing attempt hears 451, as with the hand-off off). */
bool handoff_ready(const struct handoff_state *hs);

/* A pass decided while auto's first probe of the MTA is under way waits
 * for it (issue 57: the first trusted client after a start heard 451,
 * its pass decided in the probe's milliseconds). */
struct handoff_waiter {
	struct handoff_waiter *next;
	void (*fn)(struct handoff_waiter *w); /* the probe ended */
};

/* handoff_probe_now - the MTA asked its EHLO now (greygatectl check), w
 * told when the probe ends. Return: true (w will be told), false (no
 * probe: the hand-off is off, or auto knows no address yet). */
bool handoff_probe_now(struct handoff_state *hs, struct handoff_waiter *w);

/* handoff_knows_mta - where the MTA is known: set, or auto learnt it
 * from a client. */
bool handoff_knows_mta(const struct handoff_state *hs);

/* handoff_mta_answers - the last probe found the MTA answering (in the
 * mode's protocol: PROXY v2's header, XCLIENT's EHLO, ...). */
bool handoff_mta_answers(const struct handoff_state *hs);

/* handoff_probe_pending - auto, the MTA not known yet, a probe under way
 * (its answer could make handoff_ready true). */
bool handoff_probe_pending(const struct handoff_state *hs);

/* handoff_wait_probe - w->fn told (once) when the probe under way ends,
 * answered or not (and when hand-offs are aborted). */
void handoff_wait_probe(struct handoff_state *hs, struct handoff_waiter *w);

/* handoff_wait_cancel - w will not be told (not waiting: nothing). */
void handoff_wait_cancel(struct handoff_state *hs, struct handoff_waiter *w);

/*
 * handoff_auto_text - what auto does now, for status: "transparent: the
 * MTA at ADDRESS answers", "waiting: ..." (len bytes with the NUL).
 */
void handoff_auto_text(const struct handoff_state *hs, char *out,
                       size_t len);

/*
 * handoff_route_open - in transparent mode, the policy route that takes
 * the MTA's answers back to greygated (markroute.h), stale rules a
 * killed greygated left removed first; nothing in other modes.
 * Return: 0 or -errno with err (512 bytes) saying what the kernel lacks.
 */
MUST_CHECK int handoff_route_open(struct handoff_state *hs, char *err);

/* handoff_say_route - the log line of the way back opened (once
 * greygated is up); nothing if none. NULL is fine. */
void handoff_say_route(struct handoff_state *hs);

/* handoff_route_close - remove it again (every orderly exit). */
void handoff_route_close(struct handoff_state *hs);

/* handoff_send_caps - tell the child what its EHLO lists (after a spawn;
 * nothing if the MTA's was never read), with the verdicts: never
 * blocking, the latest kept while the child does not read. */
void handoff_send_caps(struct handoff_state *hs);

/* handoff_fill_caps - rec as IPC_CAPS: what the tarpit's EHLO lists now. */
void handoff_fill_caps(const struct handoff_state *hs, struct ipc_record *rec);

#endif
