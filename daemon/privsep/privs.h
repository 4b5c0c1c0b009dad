/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What greygated keeps of root once everything is open, and telling
 * systemd it is ready. */
#ifndef GREYGATE_PRIVS_H
#define GREYGATE_PRIVS_H

#include <stdbool.h>

/*
 * privs_drop_parent - with the gateway, keep only CAP_NET_ADMIN (the nft
 * sets), CAP_NET_RAW (a fresh capture for each new child), CAP_SETUID and
 * CAP_SETGID (the child becomes its user) and CAP_KILL (signal the child,
 * another user); without it (the policy door alone) none. The bounding
 * set loses the rest, so nothing can be regained. Not root and without
 * the gateway: nothing to do.
 * Return: 0 or -errno.
 */
int privs_drop_parent(bool gateway);

/* privs_notify_ready - "READY=1" to systemd's notify socket, if any. */
void privs_notify_ready(void);

#endif
