// SPDX-License-Identifier: GPL-2.0-or-later
/* [gateway] store and store_password_file: parsed and checked before
 * anything connects (see store_url.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_features.h"
#include "redis_loop.h"
#include "store_url.h"

#define REDIS_PORT 6379
#define REDIS_DBS 16 /* redis-server's default "databases" */

/* "DIGITS" no greater than max. Return: 0 or -EINVAL. */
static int
number(const char *s, size_t n, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;

	if (n == 0 || n > 5)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* "USER@" at the start of rest, if there. Return: 0 or -EINVAL. */
static int
take_user(const char **rest, struct store_url *out)
{
	const char *at = strchr(*rest, '@');
	size_t n;

	if (!at)
		return 0;
	n = (size_t)(at - *rest);
	if (n == 0 || n >= sizeof(out->user) || memchr(*rest, ':', n) ||
	    memchr(*rest, '/', n))
		return -EINVAL; /* a password in the URL is refused */
	memcpy(out->user, *rest, n);
	*rest = at + 1;
	return 0;
}

/* HOST[:PORT][/DB] */
static int
tcp_part(const char *s, struct store_url *out)
{
	const char *slash = strchr(s, '/');
	const char *end = slash ? slash : s + strlen(s);
	const char *colon = NULL, *host = s, *host_end;
	unsigned long v;
	struct in6_addr any;

	if (*s == '[') {
		host = s + 1;
		host_end = memchr(s, ']', (size_t)(end - s));
		if (!host_end)
			return -EINVAL;
		if (host_end + 1 < end) {
			if (host_end[1] != ':')
				return -EINVAL;
			colon = host_end + 1;
		}
	} else {
		colon = memchr(s, ':', (size_t)(end - s));
		host_end = colon ? colon : end;
	}
	if (host_end == host || (size_t)(host_end - host) >= sizeof(out->host))
		return -EINVAL;
	memcpy(out->host, host, (size_t)(host_end - host));
	out->host[host_end - host] = 0;
	if (inet_pton(*s == '[' ? AF_INET6 : AF_INET, out->host, &any) != 1)
		return -EINVAL;
	out->port = REDIS_PORT;
	if (colon) {
		if (number(colon + 1, (size_t)(end - colon - 1), 65535, &v) <
		            0 ||
		    v == 0)
			return -EINVAL;
		out->port = (uint16_t)v;
	}
	if (slash) {
		if (number(slash + 1, strlen(slash + 1), REDIS_DBS - 1, &v) < 0)
			return -EINVAL;
		out->db = (unsigned)v;
	}
	return 0;
}

/* /PATH[?db=DB] */
static int
unix_part(const char *s, struct store_url *out)
{
	const char *q = strchr(s, '?');
	size_t n = q ? (size_t)(q - s) : strlen(s);
	unsigned long v;

	if (s[0] != '/' || n < 2 || n >= sizeof(out->unix_path))
		return -EINVAL;
	memcpy(out->unix_path, s, n);
	out->unix_path[n] = 0;
	if (q) {
		if (strncmp(q, "?db=", 4) != 0 ||
		    number(q + 4, strlen(q + 4), REDIS_DBS - 1, &v) < 0)
			return -EINVAL;
		out->db = (unsigned)v;
	}
	return 0;
}

int
store_url_parse(const char *text, struct store_url *out, const char **why)
{
	const char *rest;
	int r;

	memset(out, 0, sizeof(*out));
	*why = "want lmdb, redis://[USER@]ADDRESS[:PORT][/DB] (an IPv6 "
	       "address in brackets) or redis+unix://[USER@]/PATH[?db=DB]; "
	       "the password goes in store_password_file, never here";
	if (!strcmp(text, "lmdb"))
		return 0;
	out->redis = true;
	if (!GG_WITH_REDIS && (!strncmp(text, "redis://", 8) ||
	                       !strncmp(text, "redis+unix://", 13))) {
		*why = BUILD_LACKS("redis") ": store = lmdb";
		return -ENOTSUP;
	}
	if (!strncmp(text, "redis://", 8)) {
		rest = text + 8;
		r = take_user(&rest, out);
		return r < 0 ? r : tcp_part(rest, out);
	}
	if (!strncmp(text, "redis+unix://", 13)) {
		rest = text + 13;
		r = take_user(&rest, out);
		return r < 0 ? r : unix_part(rest, out);
	}
	return -EINVAL;
}

void
store_url_connection(const struct store_url *u, const char *password,
                     uint32_t timeout_ms, struct rconn_config *out)
{
	*out = (struct rconn_config){
	        .host = u->unix_path[0] ? NULL : u->host,
	        .port = u->port,
	        .unix_path = u->unix_path[0] ? u->unix_path : NULL,
	        .user = u->user[0] ? u->user : NULL,
	        .password = password[0] ? password : NULL,
	        .timeout_ms = timeout_ms,
	        .db = u->db};
}

int
store_password_read(const char *path, char *out, size_t len, char *err)
{
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int r = 0;

	if (fd < 0) {
		r = -errno;
		snprintf(err, 512, "store_password_file %s: %s", path,
		         strerror(errno));
		return r;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, 512, "store_password_file %s: not a file", path);
		r = -EINVAL;
	} else if (st.st_uid != 0 || (st.st_mode & 077)) {
		snprintf(err, 512,
		         "store_password_file %s: owned by uid %u, mode %03o: "
		         "refused (it must be root's alone: chown root %s; "
		         "chmod 600 %s)",
		         path, (unsigned)st.st_uid,
		         (unsigned)(st.st_mode & 0777), path, path);
		r = -EPERM;
	}
	if (r < 0) {
		close(fd);
		return r;
	}
	n = read(fd, out, len - 1);
	close(fd);
	if (n < 0) {
		snprintf(err, 512, "store_password_file %s: %s", path,
		         strerror(errno));
		return -EIO;
	}
	out[n] = 0;
	out[strcspn(out, "\r\n")] = 0;
	if (!out[0]) {
		snprintf(err, 512, "store_password_file %s: empty", path);
		return -EINVAL;
	}
	return 0;
}
