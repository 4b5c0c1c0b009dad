// SPDX-License-Identifier: GPL-2.0-or-later
/* A setting's text to its value: numbers, durations, sizes, yes/no,
 * address lists, the hand-off's mode and address, the policy door's
 * listener. Each parser takes the whole text or refuses it. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#include "config_value.h"

/* Decimal digits only (no sign, no "0x", no octal), at most max. */
int
config_parse_decimal(const char *text, size_t len, unsigned long long max,
	      unsigned long long *out)
{
	unsigned long long v = 0;

	if (len == 0)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned d;

		if (!isdigit((unsigned char)text[i]))
			return -EINVAL;
		d = (unsigned)(text[i] - '0');
		if (v > (max - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int
config_parse_duration(const char *text, uint32_t *sec)
{
	size_t len = strlen(text);
	unsigned long long v, unit = 1;

	if (len > 1 && strchr("smhd", text[len - 1])) {
		unit = text[len - 1] == 's'   ? 1
		       : text[len - 1] == 'm' ? 60
		       : text[len - 1] == 'h' ? 3600
					      : 86400;
		len--;
	}
	int r = config_parse_decimal(text, len, UINT32_MAX / unit, &v);

	if (r < 0)
		return r;
	*sec = (uint32_t)(v * unit);
	return 0;
}

/* Milliseconds: "250ms", or a duration in seconds. */
int
config_parse_ms(const char *text, unsigned long long *ms)
{
	size_t len = strlen(text);
	uint32_t sec;
	int r;

	if (len > 2 && !strcmp(text + len - 2, "ms"))
		return config_parse_decimal(text, len - 2, UINT32_MAX, ms);
	r = config_parse_duration(text, &sec);
	if (r == 0)
		*ms = (unsigned long long)sec * 1000;
	return r;
}

/* A size in bytes, or with k or m (KiB, MiB). */
int
config_parse_bytes(const char *text, unsigned long long *out)
{
	size_t len = strlen(text);
	unsigned long long v, unit = 1;
	int r;

	if (len > 1 && strchr("kKmM", text[len - 1])) {
		unit = strchr("kK", text[len - 1]) ? 1024 : 1024 * 1024;
		len--;
	}
	r = config_parse_decimal(text, len, UINT32_MAX / unit, &v);
	if (r == 0)
		*out = v * unit;
	return r;
}

int
config_parse_bool(const char *text, bool *out)
{
	if (!strcasecmp(text, "yes") || !strcasecmp(text, "true") ||
	    !strcmp(text, "1") || !strcasecmp(text, "on"))
		*out = true;
	else if (!strcasecmp(text, "no") || !strcasecmp(text, "false") ||
		 !strcmp(text, "0") || !strcasecmp(text, "off"))
		*out = false;
	else
		return -EINVAL;
	return 0;
}

/* A comma-separated list of addresses, added to what is there. Each is
 * "local@domain" or "local@" (that local part at any domain). */
int
config_parse_list(const char *text, char (*items)[GREY_ADDR_MAX], int *n,
	   const char **why)
{
	while (*text) {
		size_t len = strcspn(text, ",");
		const char *p = text;

		text += len + (text[len] == ',');
		while (len && isspace((unsigned char)*p)) {
			p++;
			len--;
		}
		while (len && isspace((unsigned char)p[len - 1]))
			len--;
		if (!len)
			continue;
		*why = "want addresses (local@domain, or local@ for any "
		       "domain) separated by commas";
		if (!memchr(p, '@', len) || p[0] == '@')
			return -EINVAL;
		for (size_t i = 0; i < len; i++)
			if (!isgraph((unsigned char)p[i]))
				return -EINVAL;
		*why = "too many addresses (at most 32) or one too long";
		if (*n == CONFIG_LIST_MAX || len >= GREY_ADDR_MAX)
			return -E2BIG;
		memcpy(items[*n], p, len);
		items[*n][len] = 0;
		(*n)++;
	}
	return 0;
}

int
config_parse_handoff(const char *text, uint8_t *mode)
{
	for (uint8_t m = HANDOFF_OFF; m <= HANDOFF_AUTO; m++)
		if (!strcmp(text, config_handoff_mode_name(m))) {
			*mode = m;
			return 0;
		}
	return -EINVAL;
}

const char *
config_handoff_mode_name(uint8_t mode)
{
	static const char *const names[] = {"off", "proxy-v2", "xclient",
					    "transparent", "auto"};

	return mode < sizeof(names) / sizeof(*names) ? names[mode] : "?";
}

/* "127.0.0.2" or "::1" into ss (port 0). */
int
config_parse_address(const char *text, struct sockaddr_storage *ss)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, text, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, text, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		return 0;
	}
	return -EINVAL;
}

/* "198.51.100.1:10025" or "[2001:db8::1]:10025" into ss. */
int
config_parse_host_port(const char *text, struct sockaddr_storage *ss,
		socklen_t *len)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon = strrchr(text, ':');
	unsigned long long port;
	size_t n;

	if (!colon)
		return -EINVAL;
	n = (size_t)(colon - text);
	if (n >= sizeof(host) ||
	    config_parse_decimal(colon + 1, strlen(colon + 1), 65535, &port) < 0 ||
	    port == 0)
		return -EINVAL;
	memcpy(host, text, n);
	host[n] = 0;
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[' && n > 2 && host[n - 1] == ']') {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		host[n - 1] = 0;
		if (inet_pton(AF_INET6, host + 1, &in6->sin6_addr) != 1)
			return -EINVAL;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*in6);
	} else {
		struct sockaddr_in *in4 = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &in4->sin_addr) != 1)
			return -EINVAL;
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		*len = sizeof(*in4);
	}
	return 0;
}

/* The hand-off's address (the text kept too, for messages). */
int
config_parse_endpoint(const char *text, struct handoff_config *h)
{
	if (strlen(text) >= sizeof(h->address) ||
	    config_parse_host_port(text, &h->addr, &h->addr_len) < 0)
		return -EINVAL;
	if (h->address != text)
		strcpy(h->address, text);
	return 0;
}

/* The policy door's "inet:HOST:PORT" or "unix:/PATH", as Postfix's
 * check_policy_service writes them; "" is off. */
int
config_parse_listen(const char *text, struct policy_config *p)
{
	struct sockaddr_un *un = (struct sockaddr_un *)&p->addr;

	memset(&p->addr, 0, sizeof(p->addr));
	p->addr_len = 0;
	if (!text[0])
		return 0;
	/* (It is quoted as it is in greygatectl's JSON.) */
	if (strpbrk(text, "\"\\"))
		return -EINVAL;
	if (!strncmp(text, "inet:", 5))
		return config_parse_host_port(text + 5, &p->addr, &p->addr_len);
	if (strncmp(text, "unix:/", 6) != 0 ||
	    strlen(text + 5) >= sizeof(un->sun_path))
		return -EINVAL;
	un->sun_family = AF_UNIX;
	strcpy(un->sun_path, text + 5);
	p->addr_len = sizeof(*un);
	return 0;
}

