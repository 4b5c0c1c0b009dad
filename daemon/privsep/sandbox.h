/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The child's sandbox (and the metrics listener's): its own user with no capabilities, and a seccomp
 * filter that leaves it only what the sensor, the tarpit, the loop and
 * malloc use. Assume the child is compromised: it must not open a socket
 * (greygatectl's included), connect anywhere, or write a byte on its
 * capture socket (an AF_PACKET socket sends whatever frame it is given,
 * forged source addresses and all). */
#ifndef GREYGATE_SANDBOX_H
#define GREYGATE_SANDBOX_H

/*
 * sandbox_drop_to_user - become user (its group, no other groups), keep
 * no capability, set no_new_privs.
 * @err: a one-line reason on failure (256 bytes)
 * Return: 0 or -errno.
 */
int sandbox_drop_to_user(const char *user, char *err);

/*
 * sandbox_seccomp - load the child's filters: anything outside them kills
 * the process (SIGSYS). capture_fd may be read and polled, never written
 * to (write, writev, send* and setsockopt on it kill, by its number or
 * that number with high bits set), and no descriptor can be duplicated
 * onto another number to get round that.
 * @capture_fd: the capture socket, or -1
 * Return: 0 or -errno.
 */
int sandbox_seccomp(int capture_fd);

/*
 * sandbox_seccomp_metrics - the metrics listener's filter, on all its
 * threads (libmicrohttpd's polling thread runs already): sockets it has
 * may be used, none opened or connected; anything else kills it
 * (greygated starts it again, and says so).
 * Return: 0 or -errno.
 */
int sandbox_seccomp_metrics(void);

#endif
