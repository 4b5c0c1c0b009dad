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

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct gateway;
struct ipc_event;
struct tarpit_verdict;

/* The longest PROXY v2 header (IPv6, no TLVs). */
#define HANDOFF_PROXY_MAX 52

/*
 * handoff_begin - open the hand-off of the session e asked about; the
 * verdict v goes to the child once the MTA knows the client, or without
 * a connection if that fails.
 * Return: 0 (under way), or -errno (nothing started: the caller sends v).
 */
int handoff_begin(struct gateway *gw, const struct ipc_event *e,
                  const struct tarpit_verdict *v);

/* handoff_abort_all - end every hand-off under way (greygated stops). */
void handoff_abort_all(struct gateway *gw);

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

#endif
