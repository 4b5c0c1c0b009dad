// SPDX-License-Identifier: GPL-2.0-or-later
/* Sensor events as attempts (see attempt.h). */
#include <string.h>

#include "attempt.h"

static enum grey_path
path_of(enum sensor_path path)
{
	return path == SENSOR_PATH_TARPIT ? GREY_PATH_TARPIT
	       : path == SENSOR_PATH_FAST ? GREY_PATH_FAST
	                                  : GREY_PATH_UNKNOWN;
}

bool
attempt_of_event(const struct sensor_event *ev, int64_t now,
                 struct grey_attempt *a)
{
	if (ev->type != SENSOR_EV_RCPT && ev->type != SENSOR_EV_STARTTLS)
		return false;
	memset(a, 0, sizeof(*a));
	a->kind = ev->type == SENSOR_EV_RCPT ? GREY_ATTEMPT_RCPT
	                                     : GREY_ATTEMPT_STARTTLS;
	a->now = now;
	a->client.family = ev->family;
	memcpy(a->client.bytes, ev->client, 16);
	a->helo = ev->helo;
	a->sender = ev->from;
	a->rcpt = ev->to;
	a->path = path_of(ev->path);
	a->reply = ev->reply;
	return true;
}
