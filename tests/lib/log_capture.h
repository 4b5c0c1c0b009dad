/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The log as an admin greps it, kept for a unit test's asserts: every
 * line from log_capture_start on, until log_capture_stop. */
#ifndef GREYGATE_TEST_LOG_CAPTURE_H
#define GREYGATE_TEST_LOG_CAPTURE_H

/* log_capture_start - what was kept is dropped; lines are kept from now
 * (16 KiB of them; past that they are dropped). */
void log_capture_start(void);

/* log_capture_stop - lines go to stderr again. */
void log_capture_stop(void);

/* log_capture_text - the lines kept, each ended by a newline. */
const char *log_capture_text(void);

/* log_capture_expect - a line kept holds want, or the test fails with
 * the log and want. */
void log_capture_expect(const char *want);

#endif
