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
	memset(a, 0, sizeof(*a));
	switch (ev->type) {
	case SENSOR_EV_RCPT:
		a->kind = GREY_ATTEMPT_RCPT;
		break;
	case SENSOR_EV_STARTTLS:
		/* On the fast path, counted once it is answered 220: the
		 * session is in TLS from there. */
		if (ev->path == SENSOR_PATH_FAST && ev->reply != 220)
			return false;
		a->kind = GREY_ATTEMPT_STARTTLS;
		break;
	case SENSOR_EV_HELO:
		/* A session that got as far as EHLO is a visit. */
		if (ev->reply < 200 || ev->reply >= 300)
			return false;
		a->kind = GREY_ATTEMPT_VISIT;
		break;
	default:
		return false;
	}
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
