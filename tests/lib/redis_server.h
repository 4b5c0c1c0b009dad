/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A real redis-server for the unit tests: started in a new temp dir on a
 * unix socket only (no TCP: nothing on the network), with requirepass,
 * its own config and data dir; stopped by its PID, and the dir removed,
 * at exit even when a check fails. */
#ifndef GREYGATE_TEST_REDIS_SERVER_H
#define GREYGATE_TEST_REDIS_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define REDIS_TEST_PASSWORD "t3st-only-secret"

struct redis_server {
	char dir[64];
	char sock[128];
	pid_t pid;
};

/* redis_server_start_or_skip - redis_server_start, or the test is
 * skipped (exit 77) where there is no redis-server to start. */
void redis_server_start_or_skip(struct redis_server *s);

/* Turns loop until cond holds or ms have passed. */
#define LOOP_UNTIL(loop, cond, ms)                                             \
	do {                                                                   \
		uint64_t end_ = loop_now_ms(loop) + (ms);                      \
		while (!(cond) && loop_now_ms(loop) < end_)                    \
			loop_run_once(loop, 20);                               \
	} while (0)

/* redis_server_start - the first call makes the dir and registers the
 * clean-up; later calls start it again in the same dir (empty). */
void redis_server_start(struct redis_server *s);

/* redis_server_stop - SIGTERM (after SIGCONT), waited for. */
void redis_server_stop(struct redis_server *s);

#endif
