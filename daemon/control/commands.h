/* SPDX-License-Identifier: GPL-2.0-or-later */
/* greygatectl's door as a service (commands.c, list.c, release.c): the
 * control socket and the commands it runs, each through the public
 * header of the service it asks. */
#ifndef GREYGATE_COMMANDS_H
#define GREYGATE_COMMANDS_H

#include "allow_lists.h"
#include "control.h"
#include "decide.h"
#include "housekeeping.h"
#include "loop.h"
#include "nftset.h"

struct commands;
struct grey_store;

struct metrics_snapshot;

/* The commands' part of the settings (config_command_part). */
struct command_settings {
	struct grey_config grey;  /* [greylist]: keys, passes, privacy */
	char hostname[256];       /* [gateway] hostname */
	char store[300];          /* [gateway] store, as written */
	char config_path[256];    /* the file a reload reads */
	char control_socket[108]; /* [gateway] control_socket */
};

/* What the commands ask, all borrowed: the root (every figure now, for
 * status and metrics; a reload), the decider (its greylist, a release's
 * decision), the greylist's store, the sets (NULL: none), the allow lists, the
 * housekeeping (the report's start). */
struct command_links {
	void (*figures)(void *root, struct metrics_snapshot *s);
	int (*reload)(void *root, char *err); /* (err: 512 bytes) */
	void *root;
	struct loop *loop;
	struct decider *decider;
	struct grey_store *records;
	struct nftset *nft;
	struct allow_lists *allow;
	struct housekeeping *hk;
	struct handoff_state *handoff; /* (check asks the MTA; NULL: none) */
	/* (not borrowed: their part of the settings, copied with the
	 * links; commands_reconfigure brings a reload's) */
	struct command_settings cfg;
};

/* commands_open - bind [gateway] control_socket for access and serve it.
 * @out: set even on failure (commands_close)
 * @err: a one-line reason on failure (512 bytes)
 * Return: 0 or -errno. */
int commands_open(const struct command_links *l,
                  const struct control_access *access, struct commands **out,
                  char *err);

/* commands_reconfigure - a reload's settings (the socket needs a
 * restart): the greylist's keys, passes and privacy, the hostname. */
void commands_reconfigure(struct commands *c, const struct command_settings *s);

/* commands_close - the socket closed, its streams ended (NULL is fine). */
void commands_close(struct commands *c);

#endif
