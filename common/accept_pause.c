// SPDX-License-Identifier: GPL-2.0-or-later
/* A listener that rests when descriptors run out (see accept_pause.h). */
#include <errno.h>

#include "accept_pause.h"

static void
on_rested(struct loop *loop, struct loop_timer *t, void *ctx)
{
	struct accept_pause *ap = ctx;

	ap->paused = false;
	loop_mod_fd(loop, ap->fd, ap->events);
}

void
accept_pause_init(struct accept_pause *ap, struct loop *loop, int fd,
                  uint32_t events)
{
	*ap = (struct accept_pause){.loop = loop, .fd = fd, .events = events};
	loop_timer_init(&ap->timer, on_rested, ap);
}

int
accept_pause_accept(struct accept_pause *ap, struct sockaddr *sa,
                    socklen_t *sl)
{
	int fd = accept4(ap->fd, sa, sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
	int err = errno;

	if (fd >= 0)
		return fd;
	if ((err == EMFILE || err == ENFILE || err == ENOBUFS ||
	     err == ENOMEM) &&
	    !ap->paused &&
	    loop_timer_arm(ap->loop, &ap->timer,
	                   loop_now_ms(ap->loop) + ACCEPT_PAUSE_MS) == 0) {
		ap->paused = true;
		ap->pauses++;
		loop_mod_fd(ap->loop, ap->fd, 0);
	}
	return -err;
}

void
accept_pause_cancel(struct accept_pause *ap)
{
	loop_timer_cancel(ap->loop, &ap->timer);
}
