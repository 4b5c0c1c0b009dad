// SPDX-License-Identifier: GPL-2.0-or-later
/* The workload file (INI, inih): [sim] days and seed, then one
 * [class NAME] section per kind of sender. etc/sim-month.ini documents
 * every key. */
#include <errno.h>
#include <ini.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "sim.h"

struct load {
	struct sim_workload *w;
	char why[256];
	bool failed;
};

static int
parse_count(const char *v, uint32_t *out)
{
	char *end;
	unsigned long n = strtoul(v, &end, 10);

	if (end == v || *end || n > 100000000ul)
		return -EINVAL;
	*out = (uint32_t)n;
	return 0;
}

/* "30%" or "30": 0 to 100. */
static int
parse_percent(const char *v, int32_t *out)
{
	char *end;
	unsigned long n = strtoul(v, &end, 10);

	if (end == v || (*end && strcmp(end, "%")) || n > 100)
		return -EINVAL;
	*out = (int32_t)n;
	return 0;
}

static int
parse_yes(const char *v, bool *out)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1"))
		*out = true;
	else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0"))
		*out = false;
	else
		return -EINVAL;
	return 0;
}

/* "a, b, c" -> calls fn for each trimmed item. */
static int
each_item(const char *v, int (*fn)(const char *item, void *ctx), void *ctx)
{
	char buf[2048], *save = NULL, *tok;

	if (strlen(v) >= sizeof(buf))
		return -E2BIG;
	strcpy(buf, v);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *e;
		int r;

		while (*tok == ' ' || *tok == '\t')
			tok++;
		e = tok + strlen(tok);
		while (e > tok && (e[-1] == ' ' || e[-1] == '\t'))
			*--e = 0;
		if (*tok && (r = fn(tok, ctx)) < 0)
			return r;
	}
	return 0;
}

static int
add_net(const char *item, void *ctx)
{
	struct sim_class *c = ctx;

	if (c->nnets == SIM_NETS_MAX)
		return -E2BIG;
	return grey_cidr_parse(item, &c->nets[c->nnets++]);
}

static int
add_retry(const char *item, void *ctx)
{
	struct sim_class *c = ctx;

	if (c->nretry == SIM_RETRY_MAX)
		return -E2BIG;
	return config_parse_duration(item, &c->retry[c->nretry++]);
}

static int
set_class_key(struct sim_class *c, const char *key, const char *v,
	      const char **why)
{
	*why = "bad value";
	if (!strcmp(key, "kind")) {
		*why = "want mta or bot";
		if (strcmp(v, "mta") && strcmp(v, "bot"))
			return -EINVAL;
		c->unwanted = !strcmp(v, "bot");
		return 0;
	}
	if (!strcmp(key, "arrival")) {
		*why = "want spread or start";
		if (strcmp(v, "spread") && strcmp(v, "start"))
			return -EINVAL;
		c->spread = !strcmp(v, "spread");
		return 0;
	}
	if (!strcmp(key, "pick")) {
		*why = "want same, rotate or random";
		if (!strcmp(v, "same"))
			c->pick = SIM_PICK_SAME;
		else if (!strcmp(v, "rotate"))
			c->pick = SIM_PICK_ROTATE;
		else if (!strcmp(v, "random"))
			c->pick = SIM_PICK_RANDOM;
		else
			return -EINVAL;
		return 0;
	}
	if (!strcmp(key, "clients")) {
		*why = "want random, or addresses and CIDRs (at most 32)";
		c->nnets = 0;
		return strcmp(v, "random") ? each_item(v, add_net, c) : 0;
	}
	if (!strcmp(key, "retry")) {
		*why = "want none, or durations (at most 32)";
		c->nretry = 0;
		return strcmp(v, "none") ? each_item(v, add_retry, c) : 0;
	}
	*why = "want a duration";
	if (!strcmp(key, "start"))
		return config_parse_duration(v, &c->start);
	if (!strcmp(key, "give_up"))
		return config_parse_duration(v, &c->give_up);
	if (!strcmp(key, "burst_gap"))
		return config_parse_duration(v, &c->burst_gap);
	*why = "want yes or no";
	if (!strcmp(key, "verp"))
		return parse_yes(v, &c->verp);
	if (!strcmp(key, "starttls"))
		return parse_yes(v, &c->starttls);
	if (!strcmp(key, "spf_pass")) {
		bool yes;

		*why = "want yes, no or a share: 0% to 100%";
		if (!parse_yes(v, &yes)) {
			c->spf_pass = yes ? 100 : 0;
			return 0;
		}
		return parse_percent(v, &c->spf_pass);
	}
	if (!strcmp(key, "spf_by")) {
		*why = "want narrow, wide or all";
		if (!strcmp(v, "narrow"))
			c->spf_by = SIM_SPF_NARROW;
		else if (!strcmp(v, "wide"))
			c->spf_by = SIM_SPF_WIDE;
		else if (!strcmp(v, "all"))
			c->spf_by = SIM_SPF_ALL;
		else
			return -EINVAL;
		return 0;
	}
	*why = "want a share: 0% to 100%";
	if (!strcmp(key, "aligned"))
		return parse_percent(v, &c->aligned);
	if (!strcmp(key, "fcrdns"))
		return parse_percent(v, &c->fcrdns);
	if (!strcmp(key, "dynamic"))
		return parse_percent(v, &c->dynamic);
	if (!strcmp(key, "listed"))
		return parse_percent(v, &c->listed);
	if (!strcmp(key, "spf_fail"))
		return parse_percent(v, &c->spf_fail);
	if (!strcmp(key, "no_mail_domain"))
		return parse_percent(v, &c->no_mail);
	if (!strcmp(key, "unknown_recipients"))
		return parse_percent(v, &c->unknown_rcpt);
	*why = "want a number";
	if (!strcmp(key, "messages"))
		return parse_count(v, &c->messages);
	if (!strcmp(key, "burst"))
		return parse_count(v, &c->burst);
	if (!strcmp(key, "recipients") || !strcmp(key, "senders") ||
	    !strcmp(key, "rcpt_pool")) {
		uint32_t n;

		if (parse_count(v, &n) < 0 || n == 0)
			return -EINVAL;
		if (key[0] == 'r' && key[1] == 'e')
			c->recipients = n;
		else if (key[0] == 's')
			c->senders = n;
		else
			c->rcpt_pool = n;
		return 0;
	}
	*why = "unknown key";
	return -ENOENT;
}

/* [sim]'s shares for every class of a kind (instead of the classes'
 * own): the field key names, or NULL. */
static int32_t *
kind_share(struct sim_workload *w, const char *key)
{
	static const struct {
		const char *key;
		size_t off;
	} shares[] = {
	        {"starttls_legit", offsetof(struct sim_workload, starttls_legit)},
	        {"starttls_bots", offsetof(struct sim_workload, starttls_bots)},
	        {"fcrdns_legit", offsetof(struct sim_workload, fcrdns_legit)},
	        {"fcrdns_bots", offsetof(struct sim_workload, fcrdns_bots)},
	        {"dynamic_legit", offsetof(struct sim_workload, dynamic_legit)},
	        {"dynamic_bots", offsetof(struct sim_workload, dynamic_bots)},
	        {"adversary_share",
	         offsetof(struct sim_workload, adversary_share)},
	        {"dnsbl_silent", offsetof(struct sim_workload, dnsbl_silent)},
	};

	for (size_t i = 0; i < sizeof(shares) / sizeof(shares[0]); i++)
		if (!strcmp(key, shares[i].key))
			return (int32_t *)((char *)w + shares[i].off);
	return NULL;
}

static int
on_ini(void *user, const char *section, const char *key, const char *value)
{
	struct load *l = user;
	struct sim_workload *w = l->w;
	const char *why = "bad value";
	int r = -EINVAL;

	if (l->failed)
		return 0;
	if (!strcmp(section, "sim")) {
		if (!strcmp(key, "days"))
			r = parse_count(value, &w->days);
		else if (kind_share(w, key)) {
			r = parse_percent(value, kind_share(w, key));
			why = "want a share: 0% to 100%";
		} else if (!strcmp(key, "adversary")) {
			snprintf(w->adversary, sizeof(w->adversary), "%s",
			         value);
			r = 0;
		} else if (!strcmp(key, "purge")) {
			r = parse_yes(value, &w->purge);
			why = "want yes or no";
		} else if (!strcmp(key, "seed")) {
			char *end;

			w->seed = strtoull(value, &end, 10);
			r = end == value || *end ? -EINVAL : 0;
		} else
			why = "unknown key";
	} else if (!strncmp(section, "class ", 6) && section[6]) {
		struct sim_class *c = w->ncls ? &w->cls[w->ncls - 1] : NULL;

		if (!c || strcmp(c->name, section + 6) != 0) {
			if (w->ncls == SIM_CLASSES_MAX) {
				snprintf(l->why, sizeof(l->why),
					 "[%s]: more than %d classes", section,
					 SIM_CLASSES_MAX);
				l->failed = true;
				return 0;
			}
			c = &w->cls[w->ncls++];
			sim_class_defaults(c);
			snprintf(c->name, sizeof(c->name), "%s", section + 6);
		}
		r = set_class_key(c, key, value, &why);
	} else {
		why = "unknown section (want [sim] or [class NAME])";
	}
	if (r < 0) {
		snprintf(l->why, sizeof(l->why), "[%s] %s = %s: %s", section,
			 key, value, why);
		l->failed = true;
		return 0;
	}
	return 1;
}

/* [sim] adversary and adversary_share: that share of each fire-and-forget
 * bot class's messages moved to the adversary's class. */
static int
shift_to_adversary(struct sim_workload *w, const char *path, char *err)
{
	struct sim_class *adv = NULL;

	if (!w->adversary[0])
		return 0;
	for (int i = 0; i < w->ncls; i++)
		if (!strcmp(w->cls[i].name, w->adversary))
			adv = &w->cls[i];
	if (!adv || !adv->unwanted) {
		snprintf(err, 512, "%s: [sim] adversary = %s: no bot class of "
		         "that name", path, w->adversary);
		return -EINVAL;
	}
	for (int i = 0; i < w->ncls; i++) {
		struct sim_class *c = &w->cls[i];
		uint32_t moved;

		if (c == adv || !c->unwanted || c->nretry)
			continue;
		moved = (uint32_t)((uint64_t)c->messages *
		                   (uint32_t)w->adversary_share / 100);
		c->messages -= moved;
		adv->messages += moved;
	}
	return 0;
}

int
sim_load(const char *path, struct sim_workload *w, char *err)
{
	struct load l = {.w = w};
	FILE *f = fopen(path, "r");
	int line;

	memset(w, 0, sizeof(*w));
	w->days = 30;
	w->seed = 1;
	w->starttls_legit = w->starttls_bots = -1;
	w->fcrdns_legit = w->fcrdns_bots = -1;
	w->dynamic_legit = w->dynamic_bots = -1;
	w->purge = true;
	if (!f) {
		snprintf(err, 512, "%s: %s", path, strerror(errno));
		return -errno;
	}
	line = ini_parse_file(f, on_ini, &l);
	fclose(f);
	if (line != 0) {
		snprintf(err, 512, "%s:%d: %s", path, line,
			 l.why[0] ? l.why : "not INI syntax");
		return -EINVAL;
	}
	if (!w->ncls) {
		snprintf(err, 512, "%s: no [class NAME] section", path);
		return -EINVAL;
	}
	return shift_to_adversary(w, path, err);
}
