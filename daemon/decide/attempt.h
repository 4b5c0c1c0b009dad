/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the sensor saw, as the policy's neutral attempt: one conversion for
 * the live daemon (the fast path) and --replay. */
#ifndef GREYGATE_ATTEMPT_H
#define GREYGATE_ATTEMPT_H

#include <stdbool.h>

#include "policy.h"
#include "sensor.h"

/*
 * attempt_of_event - ev as an attempt decided at now (the decider's
 * clock: greygated's own when live, the packet's in a replay): a RCPT,
 * a STARTTLS (on the fast path once answered 220), an EHLO answered 2xx
 * (a visit).
 * Return: false if ev is no attempt.
 */
bool attempt_of_event(const struct sensor_event *ev, int64_t now,
                      struct grey_attempt *a);

#endif
