// SPDX-License-Identifier: GPL-2.0-or-later
/* The INI config: a table of keys, each with its parser, over defaults
 * that make a working gateway. */
#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"
#include "log.h"

struct load_state {
	struct config *cfg;
	char *err;
	const char *path;
	int line;
	bool failed;
};

/* Settings that follow from others, and pointers into cfg's buffers. */
static void
config_derive(struct config *cfg)
{
	cfg->nft.table = cfg->table;
	cfg->tarpit.capabilities = cfg->capabilities;
	cfg->tarpit.hostname = cfg->hostname;
	cfg->tarpit.offer_starttls = cfg->grey.tls_pass;
	cfg->tarpit.retry_sec = cfg->grey.delay_sec;
	cfg->sensor.smtp_port = cfg->nft.smtp_port;
	cfg->nft.pass_prefix4 = cfg->grey.prefix4;
	cfg->nft.pass_prefix6 = cfg->grey.prefix6;
	/* Greylist only what the sensor can see. */
	cfg->nft.iifname = strcmp(cfg->interface, "any") ? cfg->interface : NULL;
	/* Without a stutter, trapped clients meet the plain tarpit. */
	cfg->nft.trap_port = cfg->tarpit.stutter_ms ? cfg->trap_port : 0;
}

void
config_defaults(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->interface, sizeof(cfg->interface), "any");
	snprintf(cfg->store_dir, sizeof(cfg->store_dir), "/var/lib/greygate");
	snprintf(cfg->allow_dir, sizeof(cfg->allow_dir), "/etc/greygate/allow.d");
	snprintf(cfg->control_socket, sizeof(cfg->control_socket),
		 "/run/greygate/control.sock");
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
	config_derive(cfg);
}

int
config_parse_duration(const char *text, uint32_t *sec)
{
	char *end;
	unsigned long long v;
	unsigned mult = 1;

	if (!isdigit((unsigned char)*text))
		return -EINVAL;
	v = strtoull(text, &end, 10);
	if (*end) {
		switch (*end) {
		case 's':
			break;
		case 'm':
			mult = 60;
			break;
		case 'h':
			mult = 3600;
			break;
		case 'd':
			mult = 86400;
			break;
		default:
			return -EINVAL;
		}
		if (end[1])
			return -EINVAL;
	}
	if (v * mult > UINT32_MAX)
		return -EINVAL;
	*sec = (uint32_t)(v * mult);
	return 0;
}

static int
parse_uint(const char *text, unsigned long long max, unsigned long long *out)
{
	char *end;

	if (!isdigit((unsigned char)*text))
		return -EINVAL;
	*out = strtoull(text, &end, 0);
	if (*end || *out > max)
		return -EINVAL;
	return 0;
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

static int
parse_string(const char *text, char *out, size_t len)
{
	if (strlen(text) >= len)
		return -ENAMETOOLONG;
	strcpy(out, text);
	return 0;
}

/* A comma-separated list of addresses. */
static int
parse_list(const char *text, char (*items)[GREY_ADDR_MAX], int *n)
{
	*n = 0;
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
		if (*n == CONFIG_LIST_MAX || len >= GREY_ADDR_MAX)
			return -E2BIG;
		memcpy(items[*n], p, len);
		items[*n][len] = 0;
		(*n)++;
	}
	return 0;
}

/* Sets *ms from a duration in seconds. */
static int
parse_ms(const char *text, uint32_t *ms)
{
	size_t len = strlen(text);
	unsigned long long v;
	uint32_t sec;

	/* "250ms": for timers under a second (the stutter). */
	if (len > 2 && !strcmp(text + len - 2, "ms")) {
		char num[32];

		if (len - 2 >= sizeof(num))
			return -EINVAL;
		memcpy(num, text, len - 2);
		num[len - 2] = 0;
		if (parse_uint(num, UINT32_MAX, &v) < 0)
			return -EINVAL;
		*ms = (uint32_t)v;
		return 0;
	}

	if (config_parse_duration(text, &sec) < 0 || sec > UINT32_MAX / 1000)
		return -EINVAL;
	*ms = sec * 1000;
	return 0;
}

/* A size in bytes, or with k or m (KiB, MiB). */
static int
parse_bytes(const char *text, unsigned long long min, unsigned long long max,
	    uint32_t *out)
{
	size_t len = strlen(text);
	unsigned long long v, unit = 1;
	char num[32];

	if (len && strchr("kKmM", text[len - 1])) {
		unit = strchr("kK", text[len - 1]) ? 1024 : 1024 * 1024;
		len--;
	}
	if (!len || len >= sizeof(num))
		return -EINVAL;
	memcpy(num, text, len);
	num[len] = 0;
	if (parse_uint(num, max / unit, &v) < 0 || v * unit < min)
		return -EINVAL;
	*out = (uint32_t)(v * unit);
	return 0;
}

static int
parse_port(const char *text, uint16_t *port)
{
	unsigned long long v;

	if (parse_uint(text, 65535, &v) < 0 || v == 0)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

static int
set_key(struct config *c, const char *section, const char *key,
	const char *v, const char **why)
{
	unsigned long long u;
	int lvl;

#define KEY(s, k) (!strcmp(section, s) && !strcmp(key, k))
	*why = "bad value";
	if (KEY("gateway", "interface"))
		return parse_string(v, c->interface, sizeof(c->interface));
	if (KEY("gateway", "store_dir"))
		return parse_string(v, c->store_dir, sizeof(c->store_dir));
	if (KEY("gateway", "allow_dir"))
		return parse_string(v, c->allow_dir, sizeof(c->allow_dir));
	if (KEY("gateway", "control_socket"))
		return parse_string(v, c->control_socket,
				    sizeof(c->control_socket));
	if (KEY("gateway", "user"))
		return parse_string(v, c->user, sizeof(c->user));
	if (KEY("gateway", "hostname"))
		return parse_string(v, c->hostname, sizeof(c->hostname));
	if (KEY("gateway", "table"))
		return parse_string(v, c->table, sizeof(c->table));
	if (KEY("gateway", "smtp_port"))
		return parse_port(v, &c->nft.smtp_port);
	if (KEY("gateway", "tarpit_port"))
		return parse_port(v, &c->nft.tarpit_port);
	if (KEY("gateway", "trap_port"))
		return parse_port(v, &c->trap_port);
	if (KEY("gateway", "capture_buffer")) {
		*why = "bad size (256k to 1024m)";
		return parse_bytes(v, 256 * 1024, 1024ull * 1024 * 1024,
				   &c->capture_buffer);
	}
	if (KEY("gateway", "exempt_mark")) {
		if (parse_uint(v, UINT32_MAX, &u) < 0)
			return -EINVAL;
		c->nft.exempt_mark = (uint32_t)u;
		return 0;
	}
	if (KEY("gateway", "log_level")) {
		*why = "want warn, info or debug";
		lvl = log_level_parse(v);
		if (lvl < 0)
			return -EINVAL;
		c->log_level = lvl;
		return 0;
	}
	*why = "want a duration: seconds, or a number with s, m, h or d";
	if (KEY("greylist", "delay"))
		return config_parse_duration(v, &c->grey.delay_sec);
	if (KEY("greylist", "retry_window"))
		return config_parse_duration(v, &c->grey.retry_window_sec);
	if (KEY("greylist", "pass_ttl"))
		return config_parse_duration(v, &c->grey.pass_ttl_sec);
	if (KEY("greylist", "refresh_interval"))
		return config_parse_duration(v, &c->grey.refresh_interval_sec);
	if (KEY("greylist", "trap_ttl"))
		return config_parse_duration(v, &c->grey.trap_ttl_sec);
	if (KEY("tarpit", "idle_timeout"))
		return parse_ms(v, &c->tarpit.idle_timeout_ms);
	if (KEY("tarpit", "session_timeout"))
		return parse_ms(v, &c->tarpit.session_timeout_ms);
	if (KEY("tarpit", "stress_idle_timeout"))
		return parse_ms(v, &c->tarpit.stress_idle_timeout_ms);
	if (KEY("tarpit", "stress_session_timeout"))
		return parse_ms(v, &c->tarpit.stress_session_timeout_ms);
	*why = "want a duration: ms, or seconds, or a number with s, m, h or d";
	if (KEY("tarpit", "stutter"))
		return parse_ms(v, &c->tarpit.stutter_ms);
	*why = "bad number";
	if (KEY("greylist", "client_prefix4")) {
		if (parse_uint(v, 32, &u) < 0)
			return -EINVAL;
		c->grey.prefix4 = (uint8_t)u;
		return 0;
	}
	if (KEY("greylist", "client_prefix6")) {
		if (parse_uint(v, 128, &u) < 0)
			return -EINVAL;
		c->grey.prefix6 = (uint8_t)u;
		return 0;
	}
	if (KEY("tarpit", "stress_high") || KEY("tarpit", "stress_low")) {
		if (parse_uint(v, 1000000, &u) < 0)
			return -EINVAL;
		if (!strcmp(key, "stress_high"))
			c->tarpit.stress_high = (uint32_t)u;
		else
			c->tarpit.stress_low = (uint32_t)u;
		return 0;
	}
	if (KEY("tarpit", "max_connections") ||
	    KEY("tarpit", "max_per_client") ||
	    KEY("tarpit", "max_bad_commands")) {
		if (parse_uint(v, 1000000, &u) < 0 || u == 0)
			return -EINVAL;
		if (!strcmp(key, "max_connections"))
			c->tarpit.max_conns = (uint32_t)u;
		else if (!strcmp(key, "max_per_client"))
			c->tarpit.max_per_client = (uint32_t)u;
		else
			c->tarpit.max_bad_commands = (uint32_t)u;
		return 0;
	}
	*why = "want yes or no";
	if (KEY("gateway", "persist"))
		return parse_bool(v, &c->nft.persist);
	if (KEY("gateway", "seccomp"))
		return parse_bool(v, &c->seccomp);
	if (KEY("gateway", "store_move_aside"))
		return parse_bool(v, &c->store_move_aside);
	if (KEY("greylist", "tls_pass"))
		return parse_bool(v, &c->grey.tls_pass);
	if (KEY("tarpit", "null_sender_at_data"))
		return parse_bool(v, &c->tarpit.null_sender_at_data);
	*why = "too many or too long addresses";
	if (KEY("greylist", "exempt_recipients"))
		return parse_list(v, c->exempt, &c->nexempt);
	if (KEY("greylist", "trap_recipients"))
		return parse_list(v, c->traps, &c->ntraps);
	*why = "too long";
	if (KEY("tarpit", "capabilities"))
		return parse_string(v, c->capabilities, sizeof(c->capabilities));
#undef KEY
	*why = "unknown key";
	return -ENOENT;
}

static int
on_ini(void *user, const char *section, const char *key, const char *value)
{
	struct load_state *st = user;
	const char *why;

	if (st->failed)
		return 0;
	if (set_key(st->cfg, section, key, value, &why) < 0) {
		snprintf(st->err, 512, "[%s] %s = %s: %s", section, key, value,
			 why);
		st->failed = true;
		return 0;
	}
	return 1;
}

int
config_load(struct config *cfg, const char *path, bool missing_ok, char *err)
{
	struct load_state st = {cfg, err, path, 0, false};
	char msg[512] = "";
	int line;
	FILE *f = fopen(path, "r");

	if (!f) {
		if (errno == ENOENT && missing_ok) {
			config_derive(cfg);
			return 0;
		}
		snprintf(err, 512, "%s: %s", path, strerror(errno));
		return -ENOENT;
	}
	st.err = msg;
	line = ini_parse_file(f, on_ini, &st);
	fclose(f);
	if (line != 0) {
		snprintf(err, 512, "%s:%d: %s", path, line,
			 msg[0] ? msg : "not INI syntax");
		return -EINVAL;
	}
	config_derive(cfg);
	return 0;
}

/* Keys that shape what is open (capture, ports, table, store, socket,
 * users): a reload keeps their old values and says so. */
static void
keep_restart_keys(struct config *n, const struct config *old)
{
	static const struct {
		const char *name;
		size_t off, len;
	} keys[] = {
#define K(field) {#field, offsetof(struct config, field), \
		   sizeof(((struct config *)0)->field)}
		K(interface), K(store_dir), K(table), K(control_socket),
		K(user), K(seccomp), K(store_move_aside), K(nft.smtp_port),
		K(capture_buffer),
		K(nft.tarpit_port), K(trap_port), K(nft.exempt_mark),
		K(nft.persist), K(tarpit.stutter_ms),
		K(grey.prefix4), K(grey.prefix6),
#undef K
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
		char *dst = (char *)n + keys[i].off;
		const char *src = (const char *)old + keys[i].off;

		if (memcmp(dst, src, keys[i].len) == 0)
			continue;
		log_warnx("reload: %s changed: it takes effect when greygated "
			  "restarts",
			  keys[i].name);
		memcpy(dst, src, keys[i].len);
	}
}

int
config_reload(struct config *cfg, const char *path, bool missing_ok,
	      char *err)
{
	struct config *n = malloc(sizeof(*n));
	int changed, r;

	if (!n)
		return -ENOMEM;
	config_defaults(n);
	r = config_load(n, path, missing_ok, err);
	if (r < 0) {
		free(n);
		return r;
	}
	keep_restart_keys(n, cfg);
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
