/* SPDX-License-Identifier: GPL-2.0-or-later */
/* greygatectl's door as a service (commands.c, list.c, release.c): the
 * control socket and the commands it runs, each through the public
 * header of the service it asks. */
#ifndef GREYGATE_COMMANDS_H
#define GREYGATE_COMMANDS_H

#include "allow_lists.h"
#include "config.h"
#include "control.h"
#include "decide.h"
#include "housekeeping.h"
#include "loop.h"
#include "nftset.h"

struct commands;
struct grey_store;

struct metrics_snapshot;

/* What the commands ask, all borrowed: the root (every figure now, for
 * status and metrics; a reload), the decider (its greylist, a release's
 * decision), the greylist's store, the sets (NULL: none), the allow lists, the
 * housekeeping (the report's start). */
struct command_links {
	void (*figures)(void *root, struct metrics_snapshot *s);
	int (*reload)(void *root, char *err); /* (err: 512 bytes) */
	void *root;
	struct loop *loop;
	const struct config *cfg;
	struct decider *decider;
	struct grey_store *records;
	struct nftset *nft;
	struct allow_lists *allow;
	struct housekeeping *hk;
};

/* commands_open - bind [gateway] control_socket for access and serve it.
 * @out: set even on failure (commands_close)
 * @err: a one-line reason on failure (512 bytes)
 * Return: 0 or -errno. */
int commands_open(const struct command_links *l,
                  const struct control_access *access, struct commands **out,
                  char *err);

/* commands_close - the socket closed, its streams ended (NULL is fine). */
void commands_close(struct commands *c);

#endif
