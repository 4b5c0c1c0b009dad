// SPDX-License-Identifier: GPL-2.0-or-later
/* The INI config: one table of keys (section, name, type, range, whether
 * a reload can change it) from which every value is parsed and checked;
 * then the settings are checked together, so that nothing that would
 * stop all mail is accepted. Lines are read here (inih's own reader cuts
 * long lines and parses their tail as the next line). */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <grp.h>
#include <ini.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "config.h"
#include "dnsbl.h"
#include "log.h"
#include "markroute.h"
#include "store_url.h"

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

#define F(field) offsetof(struct config, field), \
		 sizeof(((struct config *)0)->field)
#define DAY 86400ull
#define RESTART true

static const struct key keys[] = {
	{"gateway", "gateway", K_BOOL, F(gateway), 0, 0, RESTART, 0},
	{"gateway", "interface", K_IFACE, F(interface), 1, 0, RESTART, 0},
	{"gateway", "capture_buffer", K_BYTES, F(capture_buffer), 256 << 10,
	 1024ull << 20, RESTART, 0},
	{"gateway", "nflog_group", K_U32, F(nflog_group), 0, 65535, RESTART,
	 0},
	{"gateway", "smtp_port", K_PORT, F(nft.smtp_port), 1, 65535, RESTART,
	 0},
	{"gateway", "tarpit_port", K_PORT, F(nft.tarpit_port), 1, 65535,
	 RESTART, 0},
	{"gateway", "trap_port", K_PORT, F(trap_port), 1, 65535, RESTART, 0},
	{"gateway", "table", K_NAME, F(table), 1, 0, RESTART, 0},
	{"gateway", "persist", K_BOOL, F(nft.persist), 0, 0, RESTART, 0},
	{"gateway", "exempt_mark", K_U32, F(nft.exempt_mark), 0, UINT32_MAX,
	 RESTART, 0},
	{"gateway", "store_dir", K_PATH, F(store_dir), 2, 0, RESTART, 0},
	{"gateway", "store", K_STORE, F(store), 1, 0, RESTART, 0},
	{"gateway", "store_password_file", K_PATH, F(store_password_file), 0,
	 0, RESTART, 0},
	{"gateway", "store_move_aside", K_BOOL, F(store_move_aside), 0, 0,
	 RESTART, 0},
	{"gateway", "allow_dir", K_PATH, F(allow_dir), 2, 0, false, 0},
	{"gateway", "hostname", K_HOST, F(hostname), 1, 0, false, 0},
	{"gateway", "log_level", K_LOGLEVEL, F(log_level), 0, 0, false, 0},
	{"gateway", "control_socket", K_PATH, F(control_socket), 2, 0,
	 RESTART, 0},
	{"gateway", "admin_group", K_NAME, F(admin_group), 1, 0, RESTART, 0},
	{"gateway", "user", K_NAME, F(user), 1, 0, RESTART, 0},
	{"gateway", "seccomp", K_BOOL, F(seccomp), 0, 0, RESTART, 0},
	{"gateway", "metrics_listen", K_ENDPOINT, F(metrics_listen), 0, 0,
	 RESTART, 0},

	{"greylist", "delay", K_SEC, F(grey.delay_sec), 0, 30 * DAY, false,
	 0},
	{"greylist", "retry_window", K_SEC, F(grey.retry_window_sec), 1,
	 365 * DAY, false, 0},
	{"greylist", "pass_ttl", K_SEC, F(grey.pass_ttl_sec), 1, 3650 * DAY,
	 false, 0},
	{"greylist", "refresh_interval", K_SEC, F(grey.refresh_interval_sec),
	 0, 3650 * DAY, false, 0},
	{"greylist", "trap_ttl", K_SEC, F(grey.trap_ttl_sec), 1, 3650 * DAY,
	 false, 0},
	{"greylist", "client_prefix4", K_U8, F(grey.prefix4), 8, 32, RESTART,
	 0},
	{"greylist", "client_prefix6", K_U8, F(grey.prefix6), 16, 128,
	 RESTART, 0},
	{"greylist", "tls_pass", K_TLS, F(tls_mode), 0, 0, false, 0},
	{"greylist", "exempt_recipients", K_LIST, F(exempt), 0, 0, false,
	 offsetof(struct config, nexempt)},
	{"greylist", "trap_recipients", K_LIST, F(traps), 0, 0, false,
	 offsetof(struct config, ntraps)},
	{"greylist", "valid_recipients", K_PATH, F(valid_recipients), 0, 0,
	 false, 0},

	{"tarpit", "max_connections", K_U32, F(tarpit.max_conns), 1, 1000000,
	 false, 0},
	{"tarpit", "max_per_client", K_U32, F(tarpit.max_per_client), 1,
	 1000000, false, 0},
	{"tarpit", "max_bad_commands", K_U32, F(tarpit.max_bad_commands), 1,
	 1000000, false, 0},
	{"tarpit", "idle_timeout", K_MS, F(tarpit.idle_timeout_ms), 1000,
	 3600000, false, 0},
	{"tarpit", "session_timeout", K_MS, F(tarpit.session_timeout_ms), 1000,
	 3600000, false, 0},
	{"tarpit", "stress_high", K_U32, F(tarpit.stress_high), 0, 1000000,
	 false, 0},
	{"tarpit", "stress_low", K_U32, F(tarpit.stress_low), 0, 1000000, false,
	 0},
	{"tarpit", "stress_idle_timeout", K_MS, F(tarpit.stress_idle_timeout_ms),
	 1000, 3600000, false, 0},
	{"tarpit", "stress_session_timeout", K_MS,
	 F(tarpit.stress_session_timeout_ms), 1000, 3600000, false, 0},
	{"tarpit", "stutter", K_MS, F(tarpit.stutter_ms), 0, 60000, RESTART,
	 0},
	{"tarpit", "null_sender_at_data", K_BOOL, F(tarpit.null_sender_at_data),
	 0, 0, false, 0},
	{"tarpit", "capabilities", K_CAPS, F(capabilities), 0, 0, false, 0},

	{"handoff", "mode", K_HANDOFF, F(handoff.mode), 0, 0, RESTART, 0},
	{"handoff", "address", K_ENDPOINT, F(handoff.address), 0, 0, RESTART,
	 0},
	{"handoff", "timeout", K_MS, F(handoff.timeout_ms), 1000, 60000,
	 RESTART, 0},
	{"handoff", "source", K_ADDR, F(handoff.source), 0, 0, RESTART, 0},
	{"handoff", "mark", K_U32, F(handoff.mark), 1, UINT32_MAX, RESTART, 0},
	{"handoff", "route_table", K_U32, F(handoff.route_table), 1,
	 0xfffffeff, RESTART, 0},

	{"policy", "listen", K_LISTEN, F(policy.listen), 0, 0, RESTART, 0},
	{"policy", "greylist_text", K_TEXT, F(policy.greylist_text), 1, 0,
	 false, 0},
	{"policy", "x_greylist_header", K_BOOL, F(policy.x_greylist_header), 0,
	 0, false, 0},
	{"policy", "test_time", K_BOOL, F(policy.test_time), 0, 0, false, 0},
	{"policy", "mta_asks", K_BOOL, F(policy.mta_asks), 0, 0, RESTART, 0},
	{"policy", "whitelist_clients", K_PATH, F(policy.whitelist_clients), 0,
	 0, false, 0},
	{"policy", "whitelist_recipients", K_PATH,
	 F(policy.whitelist_recipients), 0, 0, false, 0},
	{"policy", "max_connections", K_U32, F(policy.max_conns), 1, 100000,
	 false, 0},
	{"policy", "idle_timeout", K_MS, F(policy.idle_timeout_ms), 1000,
	 3600000, false, 0},

	{"signals", "lookups", K_BOOL, F(signals.lookups), 0, 0, RESTART, 0},
	{"signals", "dns_servers", K_TEXT, F(signals.dns_servers), 0, 0,
	 RESTART, 0},
	{"signals", "budget", K_MS, F(signals.budget_ms), 100, 10000, false,
	 0},
	{"signals", "rdns_patterns", K_PATH, F(signals.rdns_patterns), 0, 0,
	 RESTART, 0},
	{"signals", "trust", K_TRUST, F(signals.trust), 0, 0, false, 0},
	{"signals", "suspicious_delay", K_SEC, F(signals.suspicious_delay_sec),
	 0, 30 * DAY, false, 0},
	{"signals", "refuse_spf_fail", K_BOOL, F(signals.refuse_spf_fail), 0, 0,
	 false, 0},
	{"signals", "dnsbl_sites", K_DNSBL, F(signals.dnsbl_sites), 0, 0,
	 RESTART, 0},
	{"signals", "dnsbl_threshold", K_U32, F(signals.dnsbl_threshold), 1,
	 1000, false, 0},
	{"signals", "dnswl_threshold", K_U32, F(signals.dnswl_threshold), 0,
	 1000, false, 0},
};

#undef F
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

struct load_state {
	struct config *cfg;
	const char *path;
	char *err;
	bool failed;
	/* the reader's view of the line inih is handed */
	FILE *f;
	char *buf;
	size_t buf_cap;
	int line;
	bool continued; /* it starts with a blank: it goes on the one above */
	bool too_long, has_nul, read_error;
	const struct key *last; /* the key of the line above */
	int key_line[NKEYS];    /* where each key was set (0: default) */
};

static int parse_endpoint(const char *text, struct handoff_config *h);
static int parse_address(const char *text, struct sockaddr_storage *ss);
static int parse_listen(const char *text, struct policy_config *p);

/* Settings that follow from others, and pointers into cfg's buffers. */
static void
config_derive(struct config *cfg)
{
	/* The hand-off's address as a socket address (the text was checked
	 * when read). */
	if (cfg->handoff.address[0])
		parse_endpoint(cfg->handoff.address, &cfg->handoff);
	if (cfg->handoff.source[0])
		parse_address(cfg->handoff.source, &cfg->handoff.source_addr);
	if (cfg->policy.listen[0])
		parse_listen(cfg->policy.listen, &cfg->policy);
	{
		const char *why;

		store_url_parse(cfg->store, &cfg->store_url, &why);
	}
	if (cfg->metrics_listen[0]) {
		struct handoff_config where;

		parse_endpoint(cfg->metrics_listen, &where);
		cfg->metrics_addr = where.addr;
		cfg->metrics_addr_len = where.addr_len;
	}
	cfg->nft.handoff_family = 0;
	if (cfg->handoff.mode == HANDOFF_PROXY_V2 && cfg->handoff.address[0]) {
		const struct sockaddr_in *in = (const void *)&cfg->handoff.addr;
		const struct sockaddr_in6 *in6 =
			(const void *)&cfg->handoff.addr;

		cfg->nft.handoff_family = (uint8_t)cfg->handoff.addr.ss_family;
		if (in->sin_family == AF_INET)
			memcpy(cfg->nft.handoff_addr, &in->sin_addr, 4);
		else
			memcpy(cfg->nft.handoff_addr, &in6->sin6_addr, 16);
		cfg->nft.handoff_port = ntohs(in->sin_port);
	}
	cfg->nft.handoff_mark = cfg->handoff.mode == HANDOFF_TRANSPARENT
					? cfg->handoff.mark
					: 0;
	cfg->nft.table = cfg->table;
	cfg->tarpit.capabilities = cfg->capabilities;
	cfg->tarpit.hostname = cfg->hostname;
	cfg->grey.tls_pass = cfg->tls_mode == CONFIG_TLS_PASS;
	cfg->grey.tls_strict = cfg->tls_mode == CONFIG_TLS_STRICT;
	cfg->tarpit.offer_starttls = cfg->tls_mode != CONFIG_TLS_NO;
	cfg->grey.mta_asks = cfg->policy.mta_asks;
	cfg->grey.handoff = cfg->handoff.mode != HANDOFF_OFF;
	cfg->tarpit.retry_sec = cfg->grey.delay_sec;
	cfg->sensor.smtp_port = cfg->nft.smtp_port;
	cfg->nft.pass_prefix4 = cfg->grey.prefix4;
	cfg->nft.pass_prefix6 = cfg->grey.prefix6;
	/* Greylist only what the sensor can see. */
	cfg->nft.iifname = strcmp(cfg->interface, "any") ? cfg->interface : NULL;
	/* The fast path alone, logged by greygate's own rules, or every
	 * port-25 packet of the interface. */
	cfg->nft.sensor_group = (uint16_t)cfg->nflog_group;
	if (cfg->nflog_group)
		snprintf(cfg->capture_device, sizeof(cfg->capture_device),
		         "nflog:%u", cfg->nflog_group);
	else
		snprintf(cfg->capture_device, sizeof(cfg->capture_device),
		         "%s", cfg->interface);
	/* Without a stutter, trapped clients meet the plain tarpit. */
	cfg->nft.trap_port = cfg->tarpit.stutter_ms ? cfg->trap_port : 0;
}

void
config_defaults(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->gateway = true;
	cfg->tls_mode = CONFIG_TLS_PASS;
	snprintf(cfg->interface, sizeof(cfg->interface), "any");
	snprintf(cfg->store_dir, sizeof(cfg->store_dir), "/var/lib/greygate");
	snprintf(cfg->store, sizeof(cfg->store), "lmdb");
	snprintf(cfg->allow_dir, sizeof(cfg->allow_dir), "/etc/greygate/allow.d");
	snprintf(cfg->control_socket, sizeof(cfg->control_socket),
		 "/run/greygate/control.sock");
	snprintf(cfg->admin_group, sizeof(cfg->admin_group), "greygate-admin");
	snprintf(cfg->user, sizeof(cfg->user), "greygate");
	cfg->seccomp = true;
	cfg->capture_buffer = CONFIG_CAPTURE_BUFFER_DEFAULT;
	if (gethostname(cfg->hostname, sizeof(cfg->hostname) - 1) < 0 ||
	    !cfg->hostname[0])
		snprintf(cfg->hostname, sizeof(cfg->hostname), "localhost");
	cfg->log_level = LOG_LEVEL_INFO;
	grey_config_defaults(&cfg->grey);
	sensor_config_defaults(&cfg->sensor);
	tarpit_config_defaults(&cfg->tarpit);
	snprintf(cfg->table, sizeof(cfg->table), "greygate");
	snprintf(cfg->capabilities, sizeof(cfg->capabilities), "%s",
		 cfg->tarpit.capabilities);
	cfg->nft.table = cfg->table;
	cfg->nft.smtp_port = 25;
	cfg->nft.tarpit_port = 2525;
	cfg->trap_port = 2526;
	cfg->nft.exempt_mark = 0;
	snprintf(cfg->exempt[0], GREY_ADDR_MAX, "postmaster@");
	snprintf(cfg->exempt[1], GREY_ADDR_MAX, "abuse@");
	cfg->nexempt = 2;
	cfg->handoff.timeout_ms = 10000;
	cfg->handoff.mark = 0x4767;
	cfg->handoff.route_table = 4767;
	snprintf(cfg->policy.greylist_text, sizeof(cfg->policy.greylist_text),
		 "Greylisted, please try again in %%s seconds");
	cfg->policy.x_greylist_header = true;
	cfg->policy.max_conns = 200;
	/* Postfix closes an idle policy connection after 300 s
	 * (smtpd_policy_service_max_idle): ours outlasts it. */
	cfg->policy.idle_timeout_ms = 600000;
	/* Well inside the tarpit's wait for a verdict (2 s). */
	cfg->signals.budget_ms = 1500;
	cfg->signals.trust = SIGNALS_TRUST_FCRDNS_SPF;
	/* Three times the delay: Postfix's retries at 5, 10, 20 min still
	 * deliver within the half hour. */
	cfg->signals.suspicious_delay_sec = 900;
	/* postscreen's: listed with a score of 1 is suspicious; allowed
	 * with -1 or less is trusted */
	cfg->signals.dnsbl_threshold = 1;
	cfg->signals.dnswl_threshold = 1;
	snprintf(cfg->signals.rdns_patterns, sizeof(cfg->signals.rdns_patterns),
		 "%s/dynamic-rdns", GREYGATE_DATADIR);
	config_derive(cfg);
}

/* Decimal digits only (no sign, no "0x", no octal), at most max. */
static int
parse_decimal(const char *text, size_t len, unsigned long long max,
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
	int r = parse_decimal(text, len, UINT32_MAX / unit, &v);

	if (r < 0)
		return r;
	*sec = (uint32_t)(v * unit);
	return 0;
}

/* Milliseconds: "250ms", or a duration in seconds. */
static int
parse_ms(const char *text, unsigned long long *ms)
{
	size_t len = strlen(text);
	uint32_t sec;
	int r;

	if (len > 2 && !strcmp(text + len - 2, "ms"))
		return parse_decimal(text, len - 2, UINT32_MAX, ms);
	r = config_parse_duration(text, &sec);
	if (r == 0)
		*ms = (unsigned long long)sec * 1000;
	return r;
}

/* A size in bytes, or with k or m (KiB, MiB). */
static int
parse_bytes(const char *text, unsigned long long *out)
{
	size_t len = strlen(text);
	unsigned long long v, unit = 1;
	int r;

	if (len > 1 && strchr("kKmM", text[len - 1])) {
		unit = strchr("kK", text[len - 1]) ? 1024 : 1024 * 1024;
		len--;
	}
	r = parse_decimal(text, len, UINT32_MAX / unit, &v);
	if (r == 0)
		*out = v * unit;
	return r;
}

static int
parse_bool(const char *text, bool *out)
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
static int
parse_list(const char *text, char (*items)[GREY_ADDR_MAX], int *n,
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

/* Is every byte of text in the set allowed for the key's type? */
static bool
text_ok(enum key_type type, const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		switch (type) {
		case K_NAME:
			if (!isalnum(*p) && !strchr("_-.", *p))
				return false;
			break;
		case K_IFACE:
		case K_HOST:
		case K_PATH:
			if (!isgraph(*p))
				return false;
			break;
		default:
			if (!isprint(*p))
				return false;
		}
	}
	return true;
}

static int
set_text(const struct key *k, char *dst, const char *v, const char **why)
{
	size_t len = strlen(v);

	*why = k->type == K_PATH    ? "want an absolute path"
	       : k->type == K_NAME  ? "want a name of letters, digits, '_', "
				      "'-' and '.'"
	       : k->type == K_IFACE ? "want an interface name, or any"
	       : k->type == K_HOST  ? "want a host name (no blanks)"
				    : "want printable text";
	if (len < k->min || !text_ok(k->type, v) ||
	    (k->type == K_PATH && v[0] != '/' && (v[0] || k->min)) ||
	    (k->type == K_NAME && !isalpha((unsigned char)v[0])) ||
	    (k->type == K_IFACE && len >= IFNAMSIZ))
		return -EINVAL;
	if (len >= k->size) {
		*why = "too long";
		return -ENAMETOOLONG;
	}
	memcpy(dst, v, len + 1);
	return 0;
}

static int
set_number(const struct key *k, void *dst, const char *v, const char **why)
{
	unsigned long long n = 0;
	int r;

	switch (k->type) {
	case K_SEC: {
		uint32_t sec = 0;

		*why = "want a duration: seconds, or a number with s, m, h or d";
		r = config_parse_duration(v, &sec);
		n = sec;
		break;
	}
	case K_MS:
		*why = "want a duration: ms, or seconds, or a number with s, m, "
		       "h or d";
		r = parse_ms(v, &n);
		break;
	case K_BYTES:
		*why = "want a size: bytes, or a number with k or m";
		r = parse_bytes(v, &n);
		break;
	default:
		*why = "want a whole number (decimal digits)";
		r = parse_decimal(v, strlen(v), UINT64_MAX, &n);
	}
	if (r == -EINVAL)
		return r;
	if (r < 0 || n < k->min || n > k->max) {
		static char range[96];

		/* Durations and sizes name their range in their own units. */
		if (k->type == K_SEC)
			snprintf(range, sizeof(range),
				 "out of range (%" PRIu64 "s to %" PRIu64 "s)",
				 k->min, k->max);
		else if (k->type == K_MS)
			snprintf(range, sizeof(range),
				 "out of range (%" PRIu64 "ms to %" PRIu64 "s)",
				 k->min, k->max / 1000);
		else if (k->type == K_BYTES)
			snprintf(range, sizeof(range),
				 "out of range (%" PRIu64 "k to %" PRIu64 "m)",
				 k->min >> 10, k->max >> 20);
		else
			snprintf(range, sizeof(range),
				 "out of range (%" PRIu64 " to %" PRIu64 ")",
				 k->min, k->max);
		*why = range;
		return -ERANGE;
	}
	switch (k->size) {
	case 1:
		*(uint8_t *)dst = (uint8_t)n;
		break;
	case 2:
		*(uint16_t *)dst = (uint16_t)n;
		break;
	default:
		*(uint32_t *)dst = (uint32_t)n;
	}
	return 0;
}

static int
parse_handoff(const char *text, uint8_t *mode)
{
	for (uint8_t m = HANDOFF_OFF; m <= HANDOFF_TRANSPARENT; m++)
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
					    "transparent"};

	return mode < sizeof(names) / sizeof(*names) ? names[mode] : "?";
}

/* "127.0.0.2" or "::1" into ss (port 0). */
static int
parse_address(const char *text, struct sockaddr_storage *ss)
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
static int
parse_host_port(const char *text, struct sockaddr_storage *ss,
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
	    parse_decimal(colon + 1, strlen(colon + 1), 65535, &port) < 0 ||
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
static int
parse_endpoint(const char *text, struct handoff_config *h)
{
	if (strlen(text) >= sizeof(h->address) ||
	    parse_host_port(text, &h->addr, &h->addr_len) < 0)
		return -EINVAL;
	if (h->address != text)
		strcpy(h->address, text);
	return 0;
}

/* The policy door's "inet:HOST:PORT" or "unix:/PATH", as Postfix's
 * check_policy_service writes them; "" is off. */
static int
parse_listen(const char *text, struct policy_config *p)
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
		return parse_host_port(text + 5, &p->addr, &p->addr_len);
	if (strncmp(text, "unix:/", 6) != 0 ||
	    strlen(text + 5) >= sizeof(un->sun_path))
		return -EINVAL;
	un->sun_family = AF_UNIX;
	strcpy(un->sun_path, text + 5);
	p->addr_len = sizeof(*un);
	return 0;
}

static const struct key *
find_key(const char *section, const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (!strcmp(keys[i].section, section) &&
		    !strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

static int
set_key(struct load_state *st, const struct key *k, const char *v,
	const char **why)
{
	char *dst = (char *)st->cfg + k->off;
	int lvl;

	switch (k->type) {
	case K_PATH:
	case K_NAME:
	case K_IFACE:
	case K_HOST:
	case K_CAPS:
	case K_TEXT:
		return set_text(k, dst, v, why);
	case K_BOOL:
		*why = "want yes or no";
		return parse_bool(v, (bool *)dst);
	case K_TLS: {
		bool b;

		*why = "want yes, no or strict";
		if (!strcmp(v, "strict")) {
			*(uint8_t *)dst = CONFIG_TLS_STRICT;
			return 0;
		}
		if (parse_bool(v, &b) < 0)
			return -EINVAL;
		*(uint8_t *)dst = b ? CONFIG_TLS_PASS : CONFIG_TLS_NO;
		return 0;
	}
	case K_TRUST:
		*why = "want no, fcrdns or fcrdns+spf";
		if (!strcmp(v, "no"))
			*(uint8_t *)dst = SIGNALS_TRUST_NO;
		else if (!strcmp(v, "fcrdns"))
			*(uint8_t *)dst = SIGNALS_TRUST_FCRDNS;
		else if (!strcmp(v, "fcrdns+spf"))
			*(uint8_t *)dst = SIGNALS_TRUST_FCRDNS_SPF;
		else
			return -EINVAL;
		return 0;
	case K_LOGLEVEL:
		*why = "want warn, info or debug";
		lvl = log_level_parse(v);
		if (lvl < 0)
			return -EINVAL;
		*(int *)dst = lvl;
		return 0;
	case K_HANDOFF:
		*why = "want off, proxy-v2, xclient or transparent";
		return parse_handoff(v, (uint8_t *)dst);
	case K_ADDR: {
		struct sockaddr_storage ss;

		*why = "want an IPv4 or IPv6 address: 127.0.0.2, ::1";
		return parse_address(v, &ss) < 0 ? -EINVAL
						 : set_text(k, dst, v, why);
	}
	case K_LISTEN: {
		struct policy_config check;

		*why = "want inet:127.0.0.1:10023, inet:[::1]:10023 or "
		       "unix:/an/absolute/path (or nothing: off)";
		return parse_listen(v, &check) < 0 ? -EINVAL
						   : set_text(k, dst, v, why);
	}
	case K_DNSBL: {
		static char msg[200];
		static struct dnsbl_sites check;

		if (dnsbl_sites_parse(v, &check, msg, sizeof(msg)) < 0) {
			*why = msg;
			return -EINVAL;
		}
		return set_text(k, dst, v, why);
	}
	case K_STORE: {
		struct store_url check;

		return store_url_parse(v, &check, why) < 0
		               ? -EINVAL
		               : set_text(k, dst, v, why);
	}
	case K_ENDPOINT: {
		struct handoff_config check;

		*why = "want an address and a port: 127.0.0.1:10025, "
		       "[::1]:10025";
		return parse_endpoint(v, &check) < 0 ? -EINVAL
						     : set_text(k, dst, v, why);
	}
	case K_LIST: {
		int *n = (int *)((char *)st->cfg + k->count_off);

		/* A new setting replaces the default; its next lines add. */
		if (!st->continued)
			*n = 0;
		return parse_list(v, (char(*)[GREY_ADDR_MAX])dst, n, why);
	}
	default:
		return set_number(k, dst, v, why);
	}
}

static int
on_ini(void *user, const char *section, const char *name, const char *value)
{
	struct load_state *st = user;
	const struct key *k = find_key(section, name);
	const char *why = "unknown key";

	if (st->failed)
		return 0;
	/* inih hands an indented line to the key above it. */
	st->continued = st->continued && k && k == st->last;
	if (k && st->continued && k->type != K_LIST) {
		why = "goes on over the next line (only lists do: a line that "
		      "starts with a blank continues the one above)";
		k = NULL;
	}
	if (!k || set_key(st, k, value, &why) < 0) {
		snprintf(st->err, 512, "%s:%d: [%s] %s = %s: %s", st->path,
			 st->line, section, name, value, why);
		st->failed = true;
		return 0;
	}
	st->last = k;
	if (!st->continued)
		st->key_line[k - keys] = st->line;
	return 1;
}

/* inih's reader: one whole line, or the end (with the reason kept). */
static char *
read_line(char *str, int num, void *stream)
{
	struct load_state *st = stream;
	ssize_t n = getline(&st->buf, &st->buf_cap, st->f);
	const char *p;

	if (n < 0) {
		st->read_error = ferror(st->f) != 0;
		return NULL;
	}
	st->line++;
	if (memchr(st->buf, 0, (size_t)n)) {
		st->has_nul = true;
		return NULL;
	}
	/* inih's buffer holds num bytes with the NUL. */
	if (n >= num) {
		st->too_long = true;
		return NULL;
	}
	memcpy(str, st->buf, (size_t)n + 1);
	p = str + strspn(str, " \t");
	st->continued = p != str && *p && !strchr(";#\r\n", *p);
	return str;
}

/* The line a key was set on, or "" if it kept its default. */
static const char *
where(const struct load_state *st, const char *name, char *buf)
{
	/* By name, the first in the table: a name two sections share
	 * ([tarpit] and [policy] max_connections) is the first's here. */
	for (size_t i = 0; i < NKEYS; i++)
		if (!strcmp(keys[i].name, name)) {
			if (!st->key_line[i])
				break;
			snprintf(buf, 32, "%d: ", st->key_line[i]);
			return buf;
		}
	return " ";
}

static bool
is_set(const struct load_state *st, const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (!strcmp(keys[i].name, name))
			return st->key_line[i] != 0;
	return false;
}

/* A refusal of two settings together: "FILE:LINE: what" with the line
 * of the one set last in the file (or the one set at all). */
static int
refuse(struct load_state *st, const char *a, const char *b, const char *fmt,
       ...) __attribute__((format(printf, 4, 5)));

static int
refuse(struct load_state *st, const char *a, const char *b, const char *fmt,
       ...)
{
	char at[32], text[400];
	const char *name = a;
	va_list ap;
	int la = 0, lb = 0;

	for (size_t i = NKEYS; i-- > 0;) {
		if (!strcmp(keys[i].name, a))
			la = st->key_line[i];
		if (b && !strcmp(keys[i].name, b))
			lb = st->key_line[i];
	}
	if (b && lb > la)
		name = b;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	snprintf(st->err, 512, "%s:%s%s", st->path, where(st, name, at), text);
	return -EINVAL;
}

static void
tell(config_warn_fn *warn, void *ctx, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
tell(config_warn_fn *warn, void *ctx, const char *fmt, ...)
{
	char text[400];
	va_list ap;

	if (!warn)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	warn(text, ctx);
}

/* Are the address texts of one family? (IPv6 endpoints are bracketed.) */
static bool
same_family(const char *addr, const char *endpoint)
{
	return !strchr(addr, ':') == (endpoint[0] != '[');
}


static uint16_t
handoff_port(const struct handoff_config *h)
{
	const struct sockaddr_in *in = (const void *)&h->addr;

	/* sin_port and sin6_port lie at the same offset. */
	return ntohs(in->sin_port);
}

static const char *
handoff_address_example(uint8_t mode)
{
	switch (mode) {
	case HANDOFF_PROXY_V2:
		return "PROXY listener, 127.0.0.1:10025 say";
	case HANDOFF_XCLIENT:
		return "port, with XCLIENT allowed to greygate, 127.0.0.1:25 "
		       "say";
	default:
		return "ordinary address and port, the one clients reach, "
		       "203.0.113.1:25 say, or the MTA's own behind a router";
	}
}

/* Transparent mode: connections from the client's own address, whose
 * answers a policy route takes back (handoff_route.h). */
static int
check_transparent(struct load_state *st)
{
	const struct handoff_config *h = &st->cfg->handoff;
	const struct sockaddr_in *in = (const void *)&h->addr;
	const struct sockaddr_in6 *in6 = (const void *)&h->addr;

	if (h->source[0])
		return refuse(st, "source", "mode",
			      "[handoff] source has no use with mode = "
			      "transparent: each connection comes from its "
			      "client's own address");
	/* A client's address cannot reach the loopback net: the kernel
	 * drops it as a martian. */
	if ((in->sin_family == AF_INET &&
	     (ntohl(in->sin_addr.s_addr) >> 24) == 127) ||
	    (in6->sin6_family == AF_INET6 &&
	     IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)))
		return refuse(st, "address", "mode",
			      "[handoff] address %s is a loopback address: "
			      "with mode = transparent the connection comes "
			      "from the client's address, which the kernel "
			      "never lets reach loopback; give the address "
			      "clients reach the MTA on (this host's own, or "
			      "the MTA's behind a router)",
			      h->address);
	if (handoff_port(h) != st->cfg->nft.smtp_port)
		return refuse(st, "address", "smtp_port",
			      "[handoff] address %s: with mode = transparent "
			      "greygated connects where the client was going, "
			      "the MTA's port %u (smtp_port); give that port",
			      h->address, st->cfg->nft.smtp_port);
	if (h->route_table >= 253 && h->route_table <= 255)
		return refuse(st, "route_table", NULL,
			      "[handoff] route_table %u is one of the kernel's "
			      "own (253 default, 254 main, 255 local): give a "
			      "table greygate may fill and empty alone",
			      h->route_table);
	if (st->cfg->nft.exempt_mark & h->mark)
		return refuse(st, "mark", "exempt_mark",
			      "[handoff] mark %u shares bits with exempt_mark "
			      "%u: give the hand-off a mark of its own",
			      h->mark, st->cfg->nft.exempt_mark);
	return 0;
}

/* The port of an inet listener's address (0: none, or a unix one). */
static uint16_t
listen_port(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)a)->sin_port);
	if (a->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
	return 0;
}

/* Reached from anywhere? Loopback, private (RFC 1918, fc00::/7) and
 * link-local addresses are not; the wildcard is. */
static bool
public_address(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET) {
		const uint8_t *b = (const uint8_t *)&(
		        (const struct sockaddr_in *)a)->sin_addr;

		return !(b[0] == 127 || b[0] == 10 ||
		         (b[0] == 172 && (b[1] & 0xf0) == 16) ||
		         (b[0] == 192 && b[1] == 168) ||
		         (b[0] == 169 && b[1] == 254));
	}
	if (a->ss_family == AF_INET6) {
		const struct in6_addr *in6 =
		        &((const struct sockaddr_in6 *)a)->sin6_addr;

		return !(IN6_IS_ADDR_LOOPBACK(in6) ||
		         (in6->s6_addr[0] & 0xfe) == 0xfc ||
		         IN6_IS_ADDR_LINKLOCAL(in6));
	}
	return false;
}

/* greygated's own listeners (the policy door, the metrics) never on a
 * port the gateway serves or redirects: on smtp_port one would take the
 * MTA's port, and the mail with it. */
static int
check_listener_ports(struct load_state *st, config_warn_fn *warn, void *ctx)
{
	const struct config *c = st->cfg;
	const struct {
		const char *key, *what;
		uint16_t port;
	} taken[] = {{"smtp_port", "the SMTP port the MTA serves",
	              c->nft.smtp_port},
	             {"tarpit_port", "the tarpit's", c->nft.tarpit_port},
	             {"trap_port", "the stutter's",
	              c->tarpit.stutter_ms ? c->trap_port : 0}};
	const struct {
		const char *key, *name;
		uint16_t port;
	} ours[] = {{"listen", "[policy] listen",
	             c->policy.listen[0] ? listen_port(&c->policy.addr) : 0},
	            {"metrics_listen", "metrics_listen",
	             c->metrics_listen[0] ? listen_port(&c->metrics_addr)
	                                  : 0}};

	for (size_t i = 0; i < 2; i++) {
		if (!ours[i].port)
			continue;
		for (size_t j = 0; j < 3; j++)
			if (ours[i].port == taken[j].port &&
			    (j == 0 || c->gateway))
				return refuse(st, ours[i].key, NULL,
				              "%s is on port %u, %s (%s): it "
				              "would take it; choose another "
				              "port",
				              ours[i].name, ours[i].port,
				              taken[j].what, taken[j].key);
	}
	if (ours[0].port && ours[0].port == ours[1].port)
		return refuse(st, "metrics_listen", "listen",
		              "metrics_listen and [policy] listen are both on "
		              "port %u: each needs its own",
		              ours[0].port);
	if (ours[0].port && public_address(&c->policy.addr))
		tell(warn, ctx,
		     "[policy] listen = %s is reached from anywhere: whoever "
		     "reaches it asks about any client (and passes it by "
		     "retrying): keep it on loopback or a private network",
		     c->policy.listen);
	return 0;
}

/* The settings together: errors for what can never work, warnings for
 * what is odd. */
static int
check_together(struct load_state *st, config_warn_fn *warn, void *ctx)
{
	const struct config *c = st->cfg;
	const struct tarpit_config *t = &c->tarpit;
	const struct grey_config *g = &c->grey;
	uint32_t high = t->stress_high ? t->stress_high
				       : t->max_conns - t->max_conns / 4;
	uint32_t low = t->stress_low ? t->stress_low : t->max_conns / 2;

	if (c->store_url.redis && c->store_url.user[0] &&
	    !c->store_password_file[0])
		return refuse(st, "store", NULL,
			      "store names the ACL user %s but no "
			      "store_password_file says its password",
			      c->store_url.user);
	if (g->delay_sec >= g->retry_window_sec)
		return refuse(st, "delay", "retry_window",
			      "delay (%us) must be shorter than retry_window "
			      "(%us): no retry could ever pass",
			      g->delay_sec, g->retry_window_sec);
	if (c->nft.smtp_port == c->nft.tarpit_port)
		return refuse(st, "smtp_port", "tarpit_port",
			      "smtp_port and tarpit_port are both %u: the "
			      "tarpit needs a port of its own",
			      c->nft.tarpit_port);
	if (t->stutter_ms && (c->trap_port == c->nft.smtp_port ||
			      c->trap_port == c->nft.tarpit_port))
		return refuse(st, "trap_port", NULL,
			      "trap_port %u is taken by %s: the stutter needs "
			      "a port of its own (or stutter = 0)",
			      c->trap_port,
			      c->trap_port == c->nft.smtp_port ? "smtp_port"
							       : "tarpit_port");
	if ((is_set(st, "stress_high") || is_set(st, "max_connections")) &&
	    high > t->max_conns)
		return refuse(st, "stress_high", "max_connections",
			      "stress_high (%u) is above max_connections "
			      "(%u): stress mode could never begin",
			      high, t->max_conns);
	if (low > high)
		return refuse(st, "stress_low", "stress_high",
			      "stress_low (%u) is above stress_high (%u): "
			      "stress mode could never end",
			      low, high);
	if (!c->gateway && !c->policy.listen[0])
		return refuse(st, "gateway", NULL,
			      "gateway = no leaves nothing to do: set [policy] "
			      "listen (inet:127.0.0.1:10023, say) for the "
			      "policy door");
	if (!c->gateway && c->handoff.mode != HANDOFF_OFF)
		return refuse(st, "mode", "gateway",
			      "[handoff] mode = %s needs the gateway (gateway "
			      "= no): only the tarpit hands clients over",
			      config_handoff_mode_name(c->handoff.mode));
	if (c->handoff.mode != HANDOFF_OFF && !c->handoff.address[0])
		return refuse(st, "mode", NULL,
			      "[handoff] mode = %s needs an address (the MTA's "
			      "%s)",
			      config_handoff_mode_name(c->handoff.mode),
			      handoff_address_example(c->handoff.mode));
	if (c->handoff.mode == HANDOFF_TRANSPARENT) {
		int r = check_transparent(st);

		if (r < 0)
			return r;
	}
	if (c->handoff.mode != HANDOFF_OFF &&
	    handoff_port(&c->handoff) == c->nft.tarpit_port)
		return refuse(st, "address", "tarpit_port",
			      "[handoff] address %s is on tarpit_port: a "
			      "passing client would be handed back to the "
			      "tarpit",
			      c->handoff.address);
	if (c->handoff.mode != HANDOFF_OFF && c->handoff.source[0] &&
	    c->handoff.address[0] &&
	    !same_family(c->handoff.source, c->handoff.address))
		return refuse(st, "source", "address",
			      "[handoff] source %s and address %s are not of "
			      "one family: greygated cannot connect from one "
			      "to the other",
			      c->handoff.source, c->handoff.address);
	if (c->policy.mta_asks && !c->policy.listen[0])
		return refuse(st, "mta_asks", NULL,
			      "mta_asks = yes says the MTA asks the policy door "
			      "about every recipient: set [policy] listen too");
	if (c->tls_mode == CONFIG_TLS_STRICT &&
	    (c->handoff.mode == HANDOFF_OFF || !c->policy.mta_asks))
		return refuse(st, "tls_pass", NULL,
			      "tls_pass = strict hands a STARTTLS client to the "
			      "MTA unpassed and lets the MTA greylist it: it "
			      "needs [handoff] mode and [policy] mta_asks = yes "
			      "(the MTA asking the door with "
			      "check_policy_service)");
	/* greygate never makes plaintext a session the MTA alone would run
	 * in TLS: without STARTTLS at the tarpit, the attempt that passes
	 * would be handed over, and delivered, in the clear. */
	if (c->tls_mode == CONFIG_TLS_NO && c->handoff.mode != HANDOFF_OFF)
		return refuse(st, "tls_pass", "mode",
			      "tls_pass = no with the hand-off on would "
			      "deliver the passing attempt in the clear where "
			      "the MTA offers STARTTLS: choose tls_pass = strict "
			      "(a STARTTLS client handed to the MTA in TLS "
			      "unpassed, greylisted by the MTA asking the policy "
			      "door: [policy] listen, mta_asks = yes), tls_pass "
			      "= yes (passed at STARTTLS, bots too), or "
			      "[handoff] mode = off");
	if (c->handoff.mode != HANDOFF_OFF && g->tls_pass)
		tell(warn, ctx,
		     "[handoff] with tls_pass = yes: a client that says "
		     "STARTTLS is delivered on its first attempt, so bots "
		     "that say it are not greylisted at all (bench/RESULTS.md "
		     "measures it; tls_pass = strict keeps them out and the "
		     "mail in TLS, the MTA asking the policy door)");
	if (c->handoff.mode == HANDOFF_PROXY_V2 &&
	    handoff_port(&c->handoff) == c->nft.smtp_port)
		tell(warn, ctx,
		     "[handoff] mode = proxy-v2 to port %u: that listener "
		     "must expect a PROXY header (Postfix: "
		     "smtpd_upstream_proxy_protocol = haproxy), or every "
		     "hand-off fails and passing clients hear 451 as before",
		     c->nft.smtp_port);
	if (g->delay_sec == 0)
		tell(warn, ctx, "delay = 0: any second attempt passes, "
				"however soon it comes");
	if (g->refresh_interval_sec >= g->pass_ttl_sec)
		tell(warn, ctx,
		     "refresh_interval (%us) is not shorter than pass_ttl "
		     "(%us): a pass ends before any delivery can refresh it",
		     g->refresh_interval_sec, g->pass_ttl_sec);
	if (t->session_timeout_ms < t->idle_timeout_ms)
		tell(warn, ctx,
		     "session_timeout (%ums) is shorter than idle_timeout "
		     "(%ums): idle_timeout never applies",
		     t->session_timeout_ms, t->idle_timeout_ms);
	if (g->prefix4 < 24 || g->prefix6 < 48)
		tell(warn, ctx, "client_prefix4 = %u, client_prefix6 = %u: one "
				"pass opens a network wider than a provider's "
				"bank (/24, /48 or longer is usual)",
		     g->prefix4, g->prefix6);
	return check_listener_ports(st, warn, ctx);
}

int
config_load(struct config *cfg, const char *path, bool missing_ok,
	    config_warn_fn *warn, void *warn_ctx, char *err)
{
	struct load_state st = {.cfg = cfg, .path = path, .err = err};
	struct stat sb;
	int line, r = 0;

	st.f = fopen(path, "re");
	if (!st.f) {
		if (errno == ENOENT && missing_ok) {
			config_derive(cfg);
			return check_together(&st, warn, warn_ctx);
		}
		snprintf(err, 512, "%s: %s", path, strerror(errno));
		return -ENOENT;
	}
	if (fstat(fileno(st.f), &sb) < 0 || !S_ISREG(sb.st_mode)) {
		snprintf(err, 512, "%s: not a file", path);
		fclose(st.f);
		return -EINVAL;
	}
	line = ini_parse_stream(read_line, &st, on_ini, &st);
	if (st.failed) {
		r = -EINVAL;
	} else if (st.read_error) {
		snprintf(err, 512, "%s:%d: %s", path, st.line + 1,
			 strerror(EIO));
		r = -EIO;
	} else if (st.too_long) {
		snprintf(err, 512, "%s:%d: line too long (a list goes on over "
				   "lines that start with a blank)",
			 path, st.line);
		r = -EINVAL;
	} else if (st.has_nul) {
		snprintf(err, 512, "%s:%d: a NUL byte in the line", path,
			 st.line);
		r = -EINVAL;
	} else if (line != 0) {
		snprintf(err, 512, "%s:%d: not INI syntax", path, line);
		r = -EINVAL;
	}
	fclose(st.f);
	free(st.buf);
	if (r < 0)
		return r;
	config_derive(cfg);
	return check_together(&st, warn, warn_ctx);
}

int
config_check_system(const struct config *cfg, char *err)
{
	struct passwd *pw = getpwnam(cfg->user);

	struct stat sb;

	/* The store's folder is greygated's own, never a link (refused at
	 * start too: said here first). */
	if (lstat(cfg->store_dir, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
		snprintf(err, 512, "store_dir = %s: not a folder (a link?): "
				   "refused",
			 cfg->store_dir);
		return -ENOTDIR;
	}
	/* No child without the gateway. */
	if (!cfg->gateway)
		return 0;
	if (!pw) {
		snprintf(err, 512, "user = %s: no such user (create it: adduser "
				   "--system --group %s)",
			 cfg->user, cfg->user);
		return -EINVAL;
	}
	if (pw->pw_uid == 0) {
		snprintf(err, 512, "user = %s: the child must not run as root "
				   "(uid 0)",
			 cfg->user);
		return -EINVAL;
	}
	if (cfg->store_url.redis && cfg->store_password_file[0]) {
		char password[256];
		int r = store_password_read(cfg->store_password_file, password,
		                            sizeof(password), err);

		explicit_bzero(password, sizeof(password));
		if (r < 0)
			return r;
	}
	if (cfg->handoff.mode == HANDOFF_TRANSPARENT) {
		int r = markroute_check();

		if (r < 0) {
			snprintf(err, 512, "[handoff] mode = transparent: %s",
				 markroute_explain(r));
			return -EINVAL;
		}
	}
	return 0;
}

void
config_list_keys(FILE *out)
{
	for (size_t i = 0; i < NKEYS; i++)
		fprintf(out, "%s %s %s\n", keys[i].section, keys[i].name,
			keys[i].restart ? "restart" : "reload");
}

/* Keys that shape what is open (capture, ports, table, store, socket,
 * users): a reload keeps their old values and says so. */
static void
keep_restart_keys(struct config *n, const struct config *old)
{
	for (size_t i = 0; i < NKEYS; i++) {
		char *dst = (char *)n + keys[i].off;
		const char *src = (const char *)old + keys[i].off;

		if (!keys[i].restart || memcmp(dst, src, keys[i].size) == 0)
			continue;
		log_warnx("reload: [%s] %s changed: it takes effect when "
			  "greygated restarts",
			  keys[i].section, keys[i].name);
		memcpy(dst, src, keys[i].size);
	}
}

/* On a shared store every gateway times the greylist alike (agreed at
 * each connection): a reload cannot change that alone, and a change it
 * keeps changes nothing (the child is not started again for it). */
static void
keep_agreed_keys(struct grey_config *now, const struct grey_config *was)
{
	const struct {
		const char *name;
		uint32_t *now, was;
	} agreed[] = {{"delay", &now->delay_sec, was->delay_sec},
	              {"retry_window", &now->retry_window_sec,
	               was->retry_window_sec},
	              {"pass_ttl", &now->pass_ttl_sec, was->pass_ttl_sec}};

	for (size_t i = 0; i < sizeof(agreed) / sizeof(*agreed); i++) {
		if (*agreed[i].now == agreed[i].was)
			continue;
		log_warnx("reload: [greylist] %s kept at %u: every gateway "
		          "sharing the store must have the same (change it in "
		          "all of them and delete the store's gg:config, then "
		          "restart them)",
		          agreed[i].name, agreed[i].was);
		*agreed[i].now = agreed[i].was;
	}
}

static void
warn_to_log(const char *text, void *ctx)
{
	log_warnx("config: %s", text);
}

int
config_reload(struct config *cfg, const char *path, bool missing_ok,
	      bool shared_store, char *err)
{
	struct config *n = malloc(sizeof(*n));
	int changed, r;

	if (!n)
		return -ENOMEM;
	config_defaults(n);
	r = config_load(n, path, missing_ok, warn_to_log, NULL, err);
	if (r < 0) {
		free(n);
		return r;
	}
	keep_restart_keys(n, cfg);
	if (shared_store)
		keep_agreed_keys(&n->grey, &cfg->grey);
	config_derive(n);
	/* The tarpit's strings are compared below, not their pointers. */
	n->tarpit.hostname = cfg->tarpit.hostname;
	n->tarpit.capabilities = cfg->tarpit.capabilities;
	changed = memcmp(&n->tarpit, &cfg->tarpit, sizeof(n->tarpit)) ||
		  memcmp(&n->sensor, &cfg->sensor, sizeof(n->sensor)) ||
		  strcmp(n->hostname, cfg->hostname) ||
		  strcmp(n->capabilities, cfg->capabilities);
	*cfg = *n;
	free(n);
	config_derive(cfg);
	return changed ? CONFIG_CHILD_CHANGED : 0;
}
