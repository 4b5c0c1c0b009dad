/* SPDX-License-Identifier: GPL-2.0-or-later */
/* greygated --replay FILE --dry-run: the sensor and the policy over a
 * capture, with packet time as the clock and a throw-away store, touching
 * no kernel state. Prints the report, or each RCPT with its decision. */
#ifndef GREYGATE_REPLAY_H
#define GREYGATE_REPLAY_H

#include <stdbool.h>

#include "config.h"

enum replay_output {
	REPLAY_REPORT_TEXT,
	REPLAY_REPORT_JSON,
	REPLAY_EVENTS_JSON
};

struct replay_opts {
	const char *file;
	enum replay_output output;
	const char *svg; /* also draw the report here, or NULL */
};

/* replay_run - Return: 0, or 2 with a one-line error on stderr. */
int replay_run(const struct config *cfg, const struct replay_opts *o);

#endif
