/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where time comes from: the system's monotonic and wall clocks, or a fake
 * one that tests move by hand. Everything that needs "now" takes a timesrc
 * (or a value read from one), never time(NULL). */
#ifndef GREYGATE_TIMESRC_H
#define GREYGATE_TIMESRC_H

#include <stdint.h>

struct timesrc {
	/* milliseconds from an arbitrary start; never goes back */
	uint64_t (*mono_ms)(const struct timesrc *ts);
	/* seconds since the Unix epoch */
	int64_t (*wall_sec)(const struct timesrc *ts);
};

/* A clock whose time only moves when the test says so. */
struct timesrc_fake {
	struct timesrc base; /* pass &fake.base where a timesrc is wanted */
	uint64_t mono_ms;    /* current monotonic time */
	int64_t wall_sec;    /* current wall time */
};

/* timesrc_system - the process-wide real clock (static, never freed). */
const struct timesrc *timesrc_system(void);

/* timesrc_fake_init - a fake clock at mono 0 and the given wall time. */
void timesrc_fake_init(struct timesrc_fake *fake, int64_t wall_sec);

/* timesrc_fake_advance_ms - move both of the fake's clocks forward. */
void timesrc_fake_advance_ms(struct timesrc_fake *fake, uint64_t ms);

static inline uint64_t
timesrc_mono_ms(const struct timesrc *ts)
{
	return ts->mono_ms(ts);
}

static inline int64_t
timesrc_wall_sec(const struct timesrc *ts)
{
	return ts->wall_sec(ts);
}

#endif
