/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Accepting on a listener of the event loop without spinning when
 * descriptors run out: a listener stays readable while its queue holds
 * connections, so an accept that fails for want of a descriptor (EMFILE,
 * ENFILE, ENOBUFS, ENOMEM) takes the listener off the loop for a while
 * and puts it back after, and the connections wait in the kernel's queue
 * meanwhile. */
#ifndef GREYGATE_ACCEPT_PAUSE_H
#define GREYGATE_ACCEPT_PAUSE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "loop.h"

/* How long a listener rests when descriptors ran out. */
#define ACCEPT_PAUSE_MS 1000

struct accept_pause {
	struct loop *loop;
	int fd;
	uint32_t events; /* what the listener is watched for */
	struct loop_timer timer;
	bool paused;
	uint64_t pauses; /* times it rested, for the log */
};

/* accept_pause_init - for listener fd, already on the loop for events. */
void accept_pause_init(struct accept_pause *ap, struct loop *loop, int fd,
                       uint32_t events);

/*
 * accept_pause_accept - one connection (accept4, non-blocking, close on
 * exec). Out of descriptors, the listener rests ACCEPT_PAUSE_MS.
 * Return: the new descriptor, or -errno (-EMFILE and the like: it rests
 * now; -EAGAIN: none waiting).
 */
int accept_pause_accept(struct accept_pause *ap, struct sockaddr *sa,
                        socklen_t *sl);

/* accept_pause_cancel - before the listener goes. */
void accept_pause_cancel(struct accept_pause *ap);

#endif
