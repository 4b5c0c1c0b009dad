/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The config's one table of keys (config_keys.c), for config_load.c: each
 * key's section, name, type, bounds, where its value lives in struct
 * config and whether a reload can change it. */
#ifndef GREYGATE_CONFIG_KEYS_H
#define GREYGATE_CONFIG_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum key_type {
	K_PATH,     /* an absolute path */
	K_NAME,     /* a user, group or nft table name */
	K_IFACE,    /* an interface name, or "any" */
	K_HOST,     /* a host name for the banner */
	K_CAPS,     /* EHLO keywords, ','-separated */
	K_SEC,      /* uint32_t seconds: "300", "5m", "2h", "2d" */
	K_MS,       /* uint32_t milliseconds: "250ms" or as K_SEC */
	K_U8,       /* uint8_t */
	K_U32,      /* uint32_t */
	K_PORT,     /* uint16_t, 1 to 65535 */
	K_BYTES,    /* uint32_t bytes: "262144", "256k", "8m" */
	K_BOOL,     /* yes/no, true/false, on/off, 1/0 */
	K_LOGLEVEL, /* int: warn, info, debug */
	K_LIST,     /* addresses, ','-separated; may go on over lines */
	K_HANDOFF,  /* uint8_t enum handoff_mode: off, proxy-v2, xclient,
		       transparent */
	K_ENDPOINT, /* an address and port: 127.0.0.1:10025, [::1]:10025 */
	K_ADDR,     /* an IPv4 or IPv6 address, or "" */
	K_LISTEN,   /* "", inet:127.0.0.1:10023, inet:[::1]:10023, unix:PATH */
	K_TEXT,     /* printable text, blanks too */
	K_TLS,      /* uint8_t enum config_tls: yes, no, strict */
	K_TRUST,    /* uint8_t enum signals_trust: no, fcrdns, fcrdns+spf */
	K_DNSBL,    /* postscreen_dnsbl_sites' syntax (policy/dnsbl.h) */
	K_STORE,    /* lmdb, redis://..., redis+unix://... (store_url.h) */
};

struct key {
	const char *section, *name;
	enum key_type type;
	size_t off, size; /* where in struct config; strings: buffer size */
	uint64_t min, max; /* numbers (K_MS in ms); strings: min length */
	bool restart;      /* a reload keeps the old value */
	size_t count_off;  /* K_LIST: where its int count is */
};

/* At most this many keys (checked where the table is). */
#define CONFIG_KEYS_MAX 160

extern const struct key config_keys[];
extern const size_t config_nkeys;

#endif
