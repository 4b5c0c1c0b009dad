/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The commands' parts, shared by their files only: commands.c (the
 * dispatch), list.c (list), release.c (release and forget). */
#ifndef GREYGATE_COMMANDS_INT_H
#define GREYGATE_COMMANDS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "commands.h"
#include "policy.h"

struct control_stream;

/*
 * list_start - the header of "list WHAT" (grey, pass, trap or allow) to
 * out, the rows left to stream. grey only: from, to (NULL: any) keep the
 * triplets whose sender, recipient holds that text (any case).
 * Return: 0, or -errno with err set.
 */
int list_start(const struct command_links *l, const char *what, bool json,
               const char *from, const char *to, FILE *out,
               struct control_stream *stream, char *err, size_t len);

/* command_key_of - client (an address, or a network no wider than
 * greylisting's key) as greylisting keys it (*key), and as given
 * (*given, if not NULL). Return: 0, -EINVAL (not an address), -ERANGE
 * (wider than the key). */
int command_key_of(const struct command_links *l, const char *client,
                   struct grey_client *given, struct grey_client *key);

/* command_release - client's key passes now, for pass_ttl, as if its
 * retry had come (release.c); with sender and rcpt (both or neither)
 * only if that triplet waits. who: who asked, for the log line.
 * Return: 0 (released), GREY_STORE_UNDER_WAY (a store that answers
 * later: the log says), -ENOENT (no such triplet waiting), -EINVAL,
 * -ERANGE (as command_key_of), -EDESTADDRREQ (one of sender and rcpt
 * alone), -ENAMETOOLONG, or -errno. */
int command_release(const struct command_links *l, const char *client,
                    const char *sender, const char *rcpt, const char *who,
                    char *key_out, size_t key_len);

/* command_forget - drop what the store and the sets hold of client (an
 * address, or a network no wider than greylisting's key, keyed as
 * greylisting keys it). Return: records deleted, GREY_STORE_UNDER_WAY (a
 * store that answers later: it logs them), -EINVAL (not an address),
 * -ERANGE (wider than the key), -ENOTCONN (the store does not answer),
 * or -errno. */
int command_forget(const struct command_links *l, const char *client,
                   char *key_out, size_t key_len);

/* check_start - greygatectl check (check.c): one line a check, the
 * hand-off's once the MTA answered or not (stream). Return: 0 or
 * -ENOMEM. */
int check_start(const struct command_links *l, FILE *out,
                struct control_stream *stream);

#endif
