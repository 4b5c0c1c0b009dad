// SPDX-License-Identifier: GPL-2.0-or-later
/* The INI config read: each line's key found in the one table of keys
 * (config_keys.c), its value parsed (config_value.c) and checked against
 * the key's bounds, then the settings checked together (config_check.c),
 * so that nothing that would stop all mail is accepted; the defaults,
 * what follows from the settings, and a reload. Lines are read here
 * (inih's own reader cuts long lines and parses their tail as the next
 * line). */
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "config_check.h"
#include "config_keys.h"
#include "config_set.h"
#include "config_value.h"
#include "dnsbl.h"
#include "log.h"
#include "store_url.h"

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
	int key_line[CONFIG_KEYS_MAX]; /* where each key was set (0: default) */
};


void
config_defaults(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->gateway = true;
	cfg->tls_mode = CONFIG_TLS_GREYLIST;
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
	/* The sensor hears the fast path alone: bots at the tarpit cost it
	 * nothing (bench/RESULTS.md, the tarpit's fifth round). */
	cfg->nflog_group = CONFIG_NFLOG_GROUP_DEFAULT;
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
	cfg->store_commit_ms = STORE_COMMIT_DEFAULT_MS;
	cfg->store_snapshot.interval_ms = 6 * 3600000;
	snprintf(cfg->exempt[0], GREY_ADDR_MAX, "postmaster@");
	snprintf(cfg->exempt[1], GREY_ADDR_MAX, "abuse@");
	cfg->nexempt = 2;
	cfg->handoff.setting = HANDOFF_AUTO;
	cfg->handoff.timeout_ms = 10000;
	cfg->handoff.mark = 0x4767;
	cfg->handoff.route_table = 4767;
	snprintf(cfg->policy.greylist_text, sizeof(cfg->policy.greylist_text),
		 "Greylisted, please try again in %%s seconds");
	cfg->policy.x_greylist_header = true;
	cfg->policy.signals = true;
	cfg->policy.max_conns = 200;
	/* Postfix closes an idle policy connection after 300 s
	 * (smtpd_policy_service_max_idle): ours outlasts it. */
	cfg->policy.idle_timeout_ms = 600000;
	snprintf(cfg->policy.socket_group, sizeof(cfg->policy.socket_group),
		 "postfix");
	/* Greylist only who looks like a bot (issue 31): what DNS says of
	 * each new client is asked (its cost and privacy: docs/dns-signals.md). */
	cfg->signals.lookups = true;
	/* Well inside the tarpit's wait for a verdict (2 s). */
	cfg->signals.budget_ms = 1500;
	cfg->signals.trust = SIGNALS_TRUST_FCRDNS_SPF;
	/* A pool's retry comes from another of its servers: keyed by the
	 * domain that authorised them all, it is not greylisted again. */
	cfg->signals.pool_spf = true;
	/* A domain that takes no mail takes no bounce: no real sender's. */
	cfg->signals.sender_domain = true;
	/* Three addresses that do not exist within the hour: more than a
	 * typo, a guess. */
	cfg->grey.unknown_suspicious = 3;
	/* Three times the delay: Postfix's retries at 5, 10, 20 min still
	 * deliver within the half hour. */
	cfg->signals.suspicious_delay_sec = 900;
	/* postscreen's: listed with a score of 1 is suspicious; allowed
	 * with -1 or less is trusted */
	cfg->signals.dnsbl_threshold = 1;
	cfg->signals.dnswl_threshold = 1;
	/* (issue 56) The widest net a large provider's record names for
	 * its outbound servers: Microsoft's 40.92.0.0/15 (Google's and
	 * Amazon SES's: /16s); `+all` or ip4:0.0.0.0/1 is far wider. A
	 * trusted pass lasts a day, then the client is judged again, by
	 * DNS as it is then. */
	cfg->signals.trust_spf_widest = 15;
	cfg->signals.trust_ttl_sec = 86400;
	snprintf(cfg->signals.rdns_patterns, sizeof(cfg->signals.rdns_patterns),
		 "%s", signals_patterns_shipped());
	config_derive(cfg);
}

static const struct key *
find_key(const char *section, const char *name)
{
	for (size_t i = 0; i < config_nkeys; i++)
		if (!strcmp(config_keys[i].section, section) &&
		    !strcmp(config_keys[i].name, name))
			return &config_keys[i];
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
		return config_set_text(k, dst, v, why);
	case K_BOOL:
		*why = "want yes or no";
		return config_parse_bool(v, (bool *)dst);
	case K_TLS: {
		bool b;

		*why = "want greylist, strict, yes or no";
		if (!strcmp(v, "strict")) {
			*(uint8_t *)dst = CONFIG_TLS_STRICT;
			return 0;
		}
		if (!strcmp(v, "greylist")) {
			*(uint8_t *)dst = CONFIG_TLS_GREYLIST;
			return 0;
		}
		if (config_parse_bool(v, &b) < 0)
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
		*why = "want auto, off, proxy-v2, xclient or transparent";
		return config_parse_handoff(v, (uint8_t *)dst);
	case K_ADDR: {
		struct sockaddr_storage ss;

		*why = "want an IPv4 or IPv6 address: 127.0.0.2, ::1";
		return config_parse_address(v, &ss) < 0 ? -EINVAL
						 : config_set_text(k, dst, v, why);
	}
	case K_LISTEN: {
		struct policy_config check;

		*why = "want inet:127.0.0.1:10023, inet:[::1]:10023 or "
		       "unix:/an/absolute/path (or nothing: off)";
		return config_parse_listen(v, &check) < 0 ? -EINVAL
						   : config_set_text(k, dst, v, why);
	}
	case K_DNSBL: {
		static char msg[200];
		static struct dnsbl_sites check;

		if (dnsbl_sites_parse(v, &check, msg, sizeof(msg)) < 0) {
			*why = msg;
			return -EINVAL;
		}
		return config_set_text(k, dst, v, why);
	}
	case K_STORE: {
		struct store_url check;

		return store_url_parse(v, &check, why) < 0
		               ? -EINVAL
		               : config_set_text(k, dst, v, why);
	}
	case K_ENDPOINT: {
		struct handoff_config check;

		*why = "want an address and a port: 127.0.0.1:10025, "
		       "[::1]:10025";
		return config_parse_endpoint(v, &check) < 0 ? -EINVAL
						     : config_set_text(k, dst, v, why);
	}
	case K_LIST: {
		int *n = (int *)((char *)st->cfg + k->count_off);

		/* A new setting replaces the default; its next lines add. */
		if (!st->continued)
			*n = 0;
		return config_parse_list(v, (char(*)[GREY_ADDR_MAX])dst, n, why);
	}
	default:
		return config_set_number(k, dst, v, why);
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
		st->key_line[k - config_keys] = st->line;
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

/* The line the key by that name was set on (the first in the table by
 * that name: [tarpit] and [policy] share max_connections), 0 if none. */
static int
key_line_of(const void *lines, const char *name)
{
	const struct load_state *st = lines;

	for (size_t i = 0; i < config_nkeys; i++)
		if (!strcmp(config_keys[i].name, name))
			return st->key_line[i];
	return 0;
}

static int
check_together(struct load_state *st, config_warn_fn *warn, void *ctx)
{
	struct config_checking c = {.cfg = st->cfg, .path = st->path,
	                            .err = st->err, .line_of = key_line_of,
	                            .lines = st};

	return config_check_together(&c, warn, ctx);
}

int
config_load(struct config *cfg, const char *path, bool missing_ok,
	    config_warn_fn *warn, void *warn_ctx, char *err)
{
	struct load_state st = {.cfg = cfg, .path = path, .err = err};
	struct stat sb;
	int line, r = 0;

	cfg->source.path = path;
	cfg->source.missing_ok = missing_ok;

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

void
config_list_keys(FILE *out)
{
	for (size_t i = 0; i < config_nkeys; i++)
		fprintf(out, "%s %s %s\n", config_keys[i].section,
		        config_keys[i].name,
			config_keys[i].restart ? "restart" : "reload");
}

/* Keys that shape what is open (capture, ports, table, store, socket,
 * users): a reload keeps their old values and says so. */
static void
keep_restart_keys(struct config *n, const struct config *old)
{
	for (size_t i = 0; i < config_nkeys; i++) {
		char *dst = (char *)n + config_keys[i].off;
		const char *src = (const char *)old + config_keys[i].off;

		if (!config_keys[i].restart || memcmp(dst, src, config_keys[i].size) == 0)
			continue;
		log_warnx("reload: [%s] %s changed: it takes effect when "
			  "greygated restarts",
			  config_keys[i].section, config_keys[i].name);
		memcpy(dst, src, config_keys[i].size);
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
config_reload(struct config *cfg, bool shared_store, char *err)
{
	struct config *n = malloc(sizeof(*n));
	int changed, r;

	if (!n)
		return -ENOMEM;
	config_defaults(n);
	r = config_load(n, cfg->source.path, cfg->source.missing_ok,
	                warn_to_log, NULL, err);
	if (r < 0) {
		free(n);
		return r;
	}
	keep_restart_keys(n, cfg);
	/* (read at start from a restart key's file) */
	memcpy(n->grey.privacy_key, cfg->grey.privacy_key,
	       sizeof(n->grey.privacy_key));
	/* (mode is a restart key: auto stays what start found) */
	n->handoff.auto_on = cfg->handoff.auto_on;
	memcpy(n->handoff.auto_why, cfg->handoff.auto_why,
	       sizeof(n->handoff.auto_why));
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

int
config_privacy_key(struct config *cfg, bool create, bool *made,
                   char *path_out, char *err)
{
	*made = false;
	if (cfg->privacy_key_file[0])
		snprintf(path_out, 256, "%s", cfg->privacy_key_file);
	else if (snprintf(path_out, 256, "%s/privacy.key", cfg->store_dir) >=
	         256) {
		snprintf(err, 256, "store_dir is too long for privacy.key");
		return -ENAMETOOLONG;
	}
	if (!cfg->grey.privacy)
		return 0;
	return privacy_key_load(path_out, create, cfg->grey.privacy_key, made,
	                        err);
}
