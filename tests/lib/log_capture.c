// SPDX-License-Identifier: GPL-2.0-or-later
/* The log kept for a unit test's asserts (see log_capture.h). */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "log.h"
#include "log_capture.h"

static char kept[16384];

static void
keep(enum log_level level, const char *line, void *ctx)
{
	size_t n = strlen(kept);

	snprintf(kept + n, sizeof(kept) - n, "%s\n", line);
}

void
log_capture_start(void)
{
	kept[0] = '\0';
	log_set_sink(keep, NULL);
}

void
log_capture_stop(void)
{
	log_set_sink(NULL, NULL);
}

const char *
log_capture_text(void)
{
	return kept;
}

void
log_capture_expect(const char *want)
{
	if (!strstr(kept, want)) {
		fprintf(stderr, "log:\n%s\nwanted: %s\n", kept, want);
		CHECK(false);
	}
}
