/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A setting's text to its value (config_value.c), for config_load.c. Each
 * takes the whole text or refuses it: Return: 0, -EINVAL (not its
 * syntax) or -ERANGE / -E2BIG (out of bounds). config_parse_duration and
 * config_handoff_mode_name, which others use too, are in config.h. */
#ifndef GREYGATE_CONFIG_VALUE_H
#define GREYGATE_CONFIG_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "config.h"

/* len decimal digits only (no sign, no "0x", no octal), at most max. */
int config_parse_decimal(const char *text, size_t len, unsigned long long max,
                         unsigned long long *out);
/* "250ms", or a duration in seconds, to milliseconds. */
int config_parse_ms(const char *text, unsigned long long *ms);
/* Bytes, or with k or m (KiB, MiB), at most UINT32_MAX. */
int config_parse_bytes(const char *text, unsigned long long *out);
/* yes/no, true/false, on/off, 1/0. */
int config_parse_bool(const char *text, bool *out);
/* A comma-separated list of addresses added to items[*n...]
 * ("local@domain", or "local@" for that local part at any domain); *why
 * says what was wrong. */
int config_parse_list(const char *text, char (*items)[GREY_ADDR_MAX], int *n,
                      const char **why);
/* off, proxy-v2, xclient, transparent. */
int config_parse_handoff(const char *text, uint8_t *mode);
/* "127.0.0.2" or "::1" into ss (port 0). */
int config_parse_address(const char *text, struct sockaddr_storage *ss);
/* "198.51.100.1:10025" or "[2001:db8::1]:10025" into ss. */
int config_parse_host_port(const char *text, struct sockaddr_storage *ss,
                           socklen_t *len);
/* The hand-off's address into h (its text kept too, for messages). */
int config_parse_endpoint(const char *text, struct handoff_config *h);
/* The policy door's "inet:HOST:PORT" or "unix:/PATH" ("" is off). */
int config_parse_listen(const char *text, struct policy_config *p);

#endif
