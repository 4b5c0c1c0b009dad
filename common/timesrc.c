// SPDX-License-Identifier: GPL-2.0-or-later
/* The system clock and the fake clock behind struct timesrc. */
#include "timesrc.h"

#include <stddef.h>
#include <time.h>

static uint64_t
system_mono_ms(const struct timesrc *ts)
{
	struct timespec t;

	(void)ts;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

static int64_t
system_wall_sec(const struct timesrc *ts)
{
	struct timespec t;

	(void)ts;
	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec;
}

const struct timesrc *
timesrc_system(void)
{
	static const struct timesrc sys = {system_mono_ms, system_wall_sec};

	return &sys;
}

static uint64_t
fake_mono_ms(const struct timesrc *ts)
{
	const struct timesrc_fake *f = (const struct timesrc_fake *)ts;

	return f->mono_ms;
}

static int64_t
fake_wall_sec(const struct timesrc *ts)
{
	const struct timesrc_fake *f = (const struct timesrc_fake *)ts;

	return f->wall_sec;
}

void
timesrc_fake_init(struct timesrc_fake *fake, int64_t wall_sec)
{
	fake->base.mono_ms = fake_mono_ms;
	fake->base.wall_sec = fake_wall_sec;
	fake->mono_ms = 0;
	fake->wall_sec = wall_sec;
}

void
timesrc_fake_advance_ms(struct timesrc_fake *fake, uint64_t ms)
{
	uint64_t before = fake->mono_ms;

	fake->mono_ms += ms;
	/* Wall seconds move with whole seconds crossed, so the two clocks
	 * never drift apart however the advances are split. */
	fake->wall_sec += (int64_t)(fake->mono_ms / 1000u - before / 1000u);
}
