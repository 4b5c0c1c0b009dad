/* SPDX-License-Identifier: GPL-2.0-or-later */
/* greygated's configuration: one INI file (inih), every key with a
 * default; unknown keys and bad values are errors that name the line. */
#ifndef GREYGATE_CONFIG_H
#define GREYGATE_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "nftset.h"
#include "policy.h"
#include "handoff_config.h"
#include "policy_door_config.h"
#include "sensor.h"
#include "signals_config.h"
#include "store_snapshot.h"
#include "store_url.h"
#include "tarpit.h"

#include <sys/socket.h>

#define CONFIG_DEFAULT_PATH "/etc/greygate/greygate.conf"

/* What a client saying STARTTLS at the tarpit gets ([greylist] tls_pass). */
enum config_tls {
	CONFIG_TLS_NO = 0,    /* 454: STARTTLS is not listed */
	CONFIG_TLS_PASS = 1,  /* its network is passed (yes) */
	CONFIG_TLS_STRICT = 2, /* handed to the MTA in TLS, not passed: the
				  MTA asks the policy door per recipient */
	CONFIG_TLS_GREYLIST = 3 /* greylisted by its network: passed by a
				   STARTTLS after the delay (the default) */
};

/* config_handoff_mode_name - "off", "proxy-v2", "xclient" or
 * "transparent". */
const char *config_handoff_mode_name(uint8_t mode);


#define CONFIG_LIST_MAX 32
#define CONFIG_CAPTURE_BUFFER_DEFAULT (8u << 20)
#define CONFIG_NFLOG_GROUP_DEFAULT 2525u

struct config {
	/* where it was read from (config_load's path, borrowed: it must
	 * outlive cfg) and read again at a reload */
	struct {
		const char *path;
		bool missing_ok; /* (--config not given: the default's) */
	} source;
	/* [greylist] tls_pass: enum config_tls */
	uint8_t tls_mode;
	/* [gateway] */
	bool gateway;          /* capture, nft, tarpit (yes); no: the policy
				  door alone, no privileges needed */
	char interface[64];    /* where to capture ("any") */
	char store_dir[256];   /* LMDB store (/var/lib/greygate) */
	bool store_move_aside; /* unreadable store: move aside, start empty */
	uint32_t store_commit_ms; /* the LMDB store writes at most this often
				     (store_commit_due) */
	struct store_snapshot_config store_snapshot; /* store_snapshot_dir and
						  _interval (store_snapshot.h) */
	char store[300];       /* "lmdb", or a Redis URL (store_url.h) */
	struct store_url store_url; /* ... parsed */
	char store_password_file[256]; /* Redis's password, root's alone */
	char allow_dir[256];   /* allow lists, *.txt or any file */
	char hostname[256];    /* in the tarpit's banner */
	int log_level;         /* enum log_level */
	char control_socket[108]; /* greygatectl's unix socket */
	char admin_group[64];  /* may use greygatectl (greygate-admin) */
	char user[64];         /* the unprivileged child's user (greygate) */
	bool seccomp;          /* the child's system call filter (yes) */
	uint32_t capture_buffer; /* the capture's kernel ring, bytes (8 MiB) */
	uint32_t nflog_group;  /* the sensor hears the fast path alone, from
				  this NFLOG group (0: captures every
				  port-25 packet on interface) */
	char capture_device[64]; /* ... what it captures on: interface or
				    "nflog:GROUP" (made) */
	char metrics_listen[80]; /* HOST:PORT of the metrics listener, or "" */
	struct sockaddr_storage metrics_addr; /* ... parsed */
	socklen_t metrics_addr_len;
	/* each part's own settings */
	struct grey_config grey;
	struct nftset_config nft;
	struct sensor_config sensor;
	struct tarpit_config tarpit;
	char table[64];
	uint16_t trap_port;    /* the stutter's port (2526) */
	char capabilities[256];
	struct handoff_config handoff;
	struct policy_config policy;
	struct signals_config signals;
	/* [greylist] valid_recipients: the recipients that exist ("": not
	 * checked; policy/recipients.h) */
	char valid_recipients[256];
	/* [greylist] privacy_key_file ("": store_dir/privacy.key); the key
	 * itself is in grey.privacy_key once read (config_privacy_key) */
	char privacy_key_file[256];
	/* [greylist] lists */
	char exempt[CONFIG_LIST_MAX][GREY_ADDR_MAX];
	int nexempt;
	char traps[CONFIG_LIST_MAX][GREY_ADDR_MAX];
	int ntraps;
};

/* config_defaults - every key's default. */
void config_defaults(struct config *cfg);

/* config_derive - the settings that follow from others (the mode in
 * effect among them), again: after config_resolve_auto. */
void config_derive(struct config *cfg);

/* Told of each setting that works but is odd (one line, no newline). */
typedef void config_warn_fn(const char *text, void *ctx);

/*
 * config_load - read path over the defaults already in cfg, then check
 * the settings together: what can never work (every session timed out,
 * no retry able to pass, two services on one port, ...) is an error;
 * what is merely odd is passed to warn (NULL: not told).
 * @missing_ok: a missing file at the default path is not an error
 * @err: gets "FILE:LINE: what is wrong" (at least 512 bytes)
 * Return: 0 or -EINVAL/-ENOENT with err set.
 */
int config_load(struct config *cfg, const char *path, bool missing_ok,
		config_warn_fn *warn, void *warn_ctx, char *err);
/* (cfg->source says path and missing_ok from then on) */

/*
 * config_check_system - what the file cannot tell: the child's user
 * exists and is not root. For --check-config and the start.
 * Return: 0 or -EINVAL with err set (512 bytes).
 */
int config_check_system(const struct config *cfg, char *err);

/*
 * config_resolve_auto - [handoff] mode = auto made transparent or off,
 * by what the machine has (gateway on, tls_pass not no, policy routing by
 * mark), and why in cfg->handoff.auto_why; nothing for another mode. At
 * start and for --check-config alike: a reload keeps what start found
 * (config_reload).
 * Return: 0, or -EINVAL with err set (512 bytes): tls_pass = strict, and
 * auto found no hand-off.
 */
int config_resolve_auto(struct config *cfg, char *err);

#define CONFIG_CHILD_CHANGED 1

/*
 * config_reload - read cfg->source again into cfg, in place. Keys that need a
 * restart keep their old values (a warning names each that changed), and
 * so do the keys a shared store agrees on (shared_store). On error cfg is
 * left as it was.
 * Return: CONFIG_CHILD_CHANGED if the tarpit's or the sensor's settings
 * changed (the child must be started again to take them), 0, or -errno
 * with err set.
 */
int config_reload(struct config *cfg, bool shared_store, char *err);

/*
 * config_privacy_key - with [greylist] privacy, read the key into
 * cfg->grey.privacy_key (at start only: a reload keeps it).
 * @create: make the file when it does not exist (said in *made)
 * @path_out: the file (256 bytes)
 * Return: 0 (also without privacy: nothing read), -ENOENT (absent,
 * create false), or -errno with err set (256 bytes).
 */
int config_privacy_key(struct config *cfg, bool create, bool *made,
                       char *path_out, char *err);

/* config_list_keys - every key, one a line: "SECTION KEY restart" or
 * "SECTION KEY reload" (what a reload does with a change), for the
 * manual page that is made from the example config (man/conf-to-man.py
 * checks the two name the same keys). */
void config_list_keys(FILE *out);

/* config_parse_duration - "300", "5m", "2h", "2d" to seconds (decimal
 * digits only; at most UINT32_MAX seconds).
 * Return: 0 or -EINVAL (not a duration) or -ERANGE (too long). */
int config_parse_duration(const char *text, uint32_t *sec);

#endif
