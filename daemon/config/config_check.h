/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The settings checked together (config_check.c), for config_load.c: what it
 * hands over is the settings read and where each key was set. */
#ifndef GREYGATE_CONFIG_CHECK_H
#define GREYGATE_CONFIG_CHECK_H

#include "config.h"

struct config_checking {
	struct config *cfg; /* read, derived (config_derive) */
	const char *path;   /* for "FILE:LINE: what" */
	char *err;          /* 512 bytes: the refusal */
	/* the line the key by that name was set on (the first in the
	 * table by that name), 0 if it kept its default */
	int (*line_of)(const void *lines, const char *name);
	const void *lines;
};

/* config_check_together - errors for settings that can never work
 * together, warnings (through warn) for what is odd.
 * Return: 0, or -EINVAL with st->err set. */
int config_check_together(struct config_checking *st, config_warn_fn *warn,
                          void *ctx);

#endif
