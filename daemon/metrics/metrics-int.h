/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The registry of figures (metrics.c), for its renderings: the
 * Prometheus exposition (metrics.c) and greygatectl status's text and
 * JSON (metrics_status.c). */
#ifndef GREYGATE_METRICS_INT_H
#define GREYGATE_METRICS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics.h"

/* (the registry's offsets are into the public snapshot) */
#define snapshot metrics_snapshot

enum metric_type { COUNTER, GAUGE };

struct metric {
	const char *group;  /* the status line and JSON object it is in */
	const char *field;  /* its JSON name */
	const char *text;   /* in the status text, '#' the value (NULL: not
	                       in the text) */
	const char *family; /* Prometheus, after "greygate_" */
	const char *labels; /* NULL, or the series' labels */
	enum metric_type type;
	size_t off, size; /* in struct snapshot: uint64_t or uint32_t */
};

extern const struct metric metrics_registry[];
extern const size_t metrics_registry_n;

/* metrics_value_of - m's value in s. */
uint64_t metrics_value_of(const struct snapshot *s, const struct metric *m);
/* metrics_shown - whether m is shown at all (on a shared store the pass
 * and trap sets are counted nowhere here: left out, not shown as 0). */
bool metrics_shown(const struct snapshot *s, const struct metric *m);

#endif
