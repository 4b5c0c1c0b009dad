/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The metrics listener ([gateway] metrics_listen): HTTP is parsed only in
 * a process of its own, unprivileged, never in greygated. greygated binds
 * the socket and starts it (greygated --metrics-http USER, the socket on
 * METRICS_FD_LISTEN, a SOCK_SEQPACKET pair on METRICS_FD_SOCK); it serves
 * GET /metrics with libmicrohttpd and asks greygated for the exposition
 * on each scrape (one byte; the answer is one message). */
#ifndef GREYGATE_METRICS_HTTP_H
#define GREYGATE_METRICS_HTTP_H

#include <sys/socket.h>

struct gateway;

#define METRICS_FD_SOCK 3
#define METRICS_FD_LISTEN 4
/* The largest exposition one scrape gets. */
#define METRICS_ANSWER_MAX (1u << 20)

/* metrics_http_main - the listener process: drop to user, serve until
 * greygated goes. Return: the exit code. */
int metrics_http_main(const char *user);

struct metrics_listener;

/* The listener's part of the settings (config_metrics_listen_part);
 * every one needs a restart. */
struct metrics_listen_settings {
	char listen[80];               /* [gateway] metrics_listen, or "" */
	struct sockaddr_storage addr;  /* ... parsed */
	socklen_t addr_len;
	char user[64];                 /* the listener process's user */
};

/*
 * metrics_listen_open - bind s->listen (nothing if unset: *out NULL)
 * and start the listener process; answer its questions with the figures
 * figures(root) reads now, on loop, and start it again if it ends. loop
 * and root are borrowed, s copied.
 * @out: the listener (metrics_listen_close), set even on failure
 * Return: 0 or -errno with err (512 bytes).
 */
struct loop;
struct metrics_snapshot;
int metrics_listen_open(struct loop *loop,
                        const struct metrics_listen_settings *s,
                        void (*figures)(void *root, struct metrics_snapshot *s),
                        void *root, struct metrics_listener **out, char *err);

/* metrics_listen_close - end the listener process and free it (NULL is
 * fine). */
void metrics_listen_close(struct metrics_listener *m);

#endif
