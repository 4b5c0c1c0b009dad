/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The site's report, on a store shared by several gateways: each
 * gateway writes its report figures to the store as it saves them, and
 * greygatectl report --site sums every gateway's (see site_report.c). */
#ifndef GREYGATE_SITE_REPORT_H
#define GREYGATE_SITE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <stdint.h>

struct control_stream;
struct grey;
struct grey_store;
struct loop;

/* This gateway, as the site's report needs it (borrowed for the
 * report's life: the hostname and store strings are the settings'). */
struct site_report_here {
	const char *hostname; /* this gateway's name in the store */
	const char *store;    /* the store setting, for messages */
	struct loop *loop;
	struct grey_store *records; /* the shared store walked */
	const struct grey *grey;    /* this gateway's figures, now */
	int64_t stats_since;        /* since when they count */
};

enum site_report_format { SITE_REPORT_TEXT, SITE_REPORT_JSON, SITE_REPORT_SVG };

/*
 * site_report_start - the site's report, every gateway's figures summed
 * (this gateway's as counted now, the others' as last written), made
 * once the walk of the store has brought them all (stream's more_later).
 * Return: 0, or -errno with err set (-ENOTCONN: Redis away; -EINVAL: the
 * store is not shared).
 */
int site_report_start(const struct site_report_here *here,
                      enum site_report_format format,
                      struct control_stream *stream, char *err, size_t len);

#endif
