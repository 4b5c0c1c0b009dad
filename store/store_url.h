/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where greylisting's state lives ([gateway] store): "lmdb" (the
 * default: this gateway's own file in store_dir), or a Redis shared by
 * several gateways:
 *   redis://[USER@]HOST[:PORT][/DB]        HOST an address; [v6] bracketed
 *   redis+unix://[USER@]/PATH[?db=DB]      a local server's socket
 * The password is never in the URL: it is read from store_password_file,
 * a file only root may read. */
#ifndef GREYGATE_STORE_URL_H
#define GREYGATE_STORE_URL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store_url {
	bool redis;          /* else LMDB */
	char host[64];       /* an IPv4 or IPv6 address, or "" (unix) */
	uint16_t port;       /* 6379 by default */
	char unix_path[108]; /* or "" (TCP) */
	char user[64];       /* an ACL user, or "" (the default user) */
	unsigned db;         /* 0 to 15 */
};

/*
 * store_url_parse - text into out.
 * @why: what was expected, on error
 * Return: 0 or -EINVAL.
 */
int store_url_parse(const char *text, struct store_url *out, const char **why);

/*
 * store_url_connection - how to reach u's Redis (common/redis_loop.h),
 * with password (or "": none) and timeout_ms; out's strings point into
 * u and password, which must outlive it (rconn_new copies them).
 */
struct rconn_config;
void store_url_connection(const struct store_url *u, const char *password,
                          uint32_t timeout_ms, struct rconn_config *out);

/*
 * store_password_read - the first line of path, which must be a regular
 * file owned by root that neither its group nor others may read or
 * write (mode 0600 or 0400): a password anyone could read would be
 * anyone's. At most len - 1 bytes, no newline.
 * @err: why not (512 bytes)
 * Return: 0 or -errno with err set.
 */
int store_password_read(const char *path, char *out, size_t len, char *err);

#endif
