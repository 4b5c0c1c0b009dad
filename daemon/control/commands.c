// SPDX-License-Identifier: GPL-2.0-or-later
/* What greygatectl can ask: status, metrics, list, allow, forget, reload,
 * report.
 * Text in columns by default, one JSON document with --json. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "fmt.h"
#include "commands-int.h"
#include "grey_store.h"
#include "json.h"
#include "policy_door.h"
#include "log.h"
#include "metrics.h"
#include "report.h"
#include "site_report.h"

/* The door: its links, its socket. */
struct commands {
	struct command_links links;
	struct control *control;
};

#ifndef GREYGATE_VERSION
#define GREYGATE_VERSION "unknown"
#endif

struct args {
	const char *cmd, *what; /* "list" "pass" */
	bool json, svg, reset, site;
	const char *ttl, *comment;
	const char *from, *to; /* release's triplet */
};


static int
parse_args(int argc, char **argv, struct args *a, char *err, size_t len)
{
	memset(a, 0, sizeof(*a));
	a->cmd = argv[0];
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			a->json = true;
		else if (!strcmp(argv[i], "--svg"))
			a->svg = true;
		else if (!strcmp(argv[i], "--reset"))
			a->reset = true;
		else if (!strcmp(argv[i], "--site"))
			a->site = true;
		else if (!strcmp(argv[i], "--ttl") && i + 1 < argc)
			a->ttl = argv[++i];
		else if (!strcmp(argv[i], "--comment") && i + 1 < argc)
			a->comment = argv[++i];
		else if (!strcmp(argv[i], "--from") && i + 1 < argc)
			a->from = argv[++i];
		else if (!strcmp(argv[i], "--to") && i + 1 < argc)
			a->to = argv[++i];
		else if (argv[i][0] != '-' && !a->what)
			a->what = argv[i];
		else {
			snprintf(err, len, "%s: unexpected argument '%s'",
				 a->cmd, argv[i]);
			return -EINVAL;
		}
	}
	return 0;
}

/* --- status and metrics: the registry's (metrics.c) --- */

static void
status(const struct command_links *links, const struct args *a, FILE *out)
{
	struct metrics_snapshot s;

	links->figures(links->root, &s);
	if (a->json)
		metrics_status_json(&s, out);
	else
		metrics_status_text(&s, out);
}

/* --- the rest --- */

static int
allow(const struct command_links *links, const struct args *a, FILE *out,
      char *err, size_t len)
{
	uint32_t ttl = 0;
	int r;

	if (!a->what) {
		snprintf(err, len, "allow what? an address or CIDR");
		return -EINVAL;
	}
	r = a->ttl ? config_parse_duration(a->ttl, &ttl) : 0;
	if (r == -EINVAL) {
		snprintf(err, len, "--ttl %s: want seconds, or a number with "
				   "s, m, h or d",
			 a->ttl);
		return -EINVAL;
	}
	r = r < 0 ? r
	          : allow_lists_runtime(links->allow, a->what, ttl, a->comment);
	if (r == -EINVAL)
		snprintf(err, len, "'%s' is not an address or CIDR", a->what);
	else if (r == -ERANGE)
		snprintf(err, len, "--ttl %s: at most %ud", a->ttl,
			 ALLOW_TTL_MAX_SEC / 86400);
	else if (r == -EILSEQ)
		snprintf(err, len, "--comment: printable text, shorter than "
				   "%d bytes",
			 ALLOW_COMMENT_MAX);
	else if (r < 0)
		snprintf(err, len, "allow %s: %s", a->what, strerror(-r));
	else
		fprintf(out, "allowed %s%s%s\n", a->what, ttl ? " for " : "",
			ttl ? a->ttl : "");
	return r;
}

static int
disallow(const struct command_links *links, const struct args *a,
         const char *who, FILE *out, char *err, size_t len)
{
	int r;

	if (!a->what) {
		snprintf(err, len, "disallow what? a run-time allow entry's "
		                   "address or CIDR");
		return -EINVAL;
	}
	r = allow_lists_disallow(links->allow, a->what, who);
	if (r == -EINVAL)
		snprintf(err, len, "'%s' is not an address or CIDR", a->what);
	else if (r == -ENOENT)
		snprintf(err, len, "disallow %s: no such run-time entry "
		                   "(greygatectl list allow shows them; an allow "
		                   "file's entries are removed from their file, "
		                   "then greygatectl reload): nothing changed",
		         a->what);
	else if (r < 0)
		snprintf(err, len, "disallow %s: %s", a->what, strerror(-r));
	else
		fprintf(out, "disallowed %s\n", a->what);
	return r;
}

/* What command_key_of's refusals mean, said for verb (forget, release).
 * Return: true if r was one. */
static bool
key_refused(const struct command_links *links, const char *verb,
            const char *what, int r, char *err, size_t len)
{
	if (r == -EINVAL)
		snprintf(err, len, "'%s' is not an address or CIDR", what);
	else if (r == -ERANGE)
		snprintf(err, len,
		         "'%s' is wider than greylisting's key (/%u, "
		         "/%u): %s one address or key at a time",
		         what, links->cfg.grey.prefix4,
		         links->cfg.grey.prefix6, verb);
	else
		return false;
	return true;
}

static int
forget(const struct command_links *links, const struct args *a, FILE *out,
       char *err, size_t len)
{
	char key[64];
	int r;

	if (!a->what) {
		snprintf(err, len, "forget whom? an address or CIDR");
		return -EINVAL;
	}
	r = command_forget(links, a->what, key, sizeof(key));
	if (key_refused(links, "forget", a->what, r, err, len))
		;
	else if (r == -ENOTCONN)
		snprintf(err, len, "forget %s: the shared store does not answer: "
		                   "give it again once it does",
		         a->what);
	else if (r < 0)
		snprintf(err, len, "forget %s: %s", a->what, strerror(-r));
	else if (r == GREY_STORE_UNDER_WAY)
		fprintf(out, "forgetting %s (key %s) in the shared store and at "
		             "every gateway (the log counts its records)\n",
		        a->what, key);
	else
		fprintf(out, "forgot %s (key %s): %d records\n", a->what, key,
			r);
	return r < 0 ? r : 0;
}

static int
release(const struct command_links *links, const struct args *a,
        const char *who, FILE *out, char *err, size_t len)
{
	char key[64];
	int r;

	if (!a->what) {
		snprintf(err, len, "release whom? an address or CIDR");
		return -EINVAL;
	}
	r = command_release(links, a->what, a->from, a->to, who, key,
	                    sizeof(key));
	if (key_refused(links, "release", a->what, r, err, len))
		;
	else if (r == -EDESTADDRREQ)
		snprintf(err, len, "release: --from and --to go together (the "
		                   "triplet that waits), or neither");
	else if (r == -ENOENT)
		snprintf(err, len, "release %s: no triplet %s -> %s waits "
		                   "(greygatectl list grey shows those that do): "
		                   "nothing released",
		         a->what, a->from, a->to);
	else if (r == -ENAMETOOLONG)
		snprintf(err, len, "release: an address too long");
	else if (r < 0)
		snprintf(err, len, "release %s: %s", a->what, strerror(-r));
	else if (r == GREY_STORE_UNDER_WAY)
		fprintf(out, "releasing %s (key %s) through the shared store "
		             "(the log says when it is done)\n",
		        a->what, key);
	else
		fprintf(out, "released %s (key %s): it passes now, for %u s\n",
		        a->what, key, links->cfg.grey.pass_ttl_sec);
	return r < 0 ? r : 0;
}

static int
report(const struct command_links *links, const struct args *a, FILE *out,
       struct control_stream *stream, char *err, size_t len)
{
	struct report r;

	if (a->site && a->reset) {
		snprintf(err, len, "report --site --reset: each gateway resets "
		                   "its own (greygatectl report --reset there)");
		return -EINVAL;
	}
	if (a->site) {
		struct site_report_here here = {
		        .hostname = links->cfg.hostname,
		        .store = links->cfg.store,
		        .loop = links->loop,
		        .records = links->records,
		        .grey = decider_grey(links->decider),
		        .stats_since = housekeeping_stats_since(links->hk),
		};

		return site_report_start(&here,
		                         a->svg    ? SITE_REPORT_SVG
		                         : a->json ? SITE_REPORT_JSON
		                                   : SITE_REPORT_TEXT,
		                         stream, err, len);
	}
	if (a->reset) {
		char t[32];

		housekeeping_stats_reset(links->hk);
		fprintf(out, "report reset: counting starts again at %s\n",
		        fmt_utc(housekeeping_stats_since(links->hk), t));
		return 0;
	}
	report_compute(&r, decider_grey(links->decider),
	               housekeeping_stats_since(links->hk),
	               loop_wall_sec(links->loop));
	if (a->svg)
		report_print_svg(out, &r);
	else if (a->json)
		report_print_json(out, &r);
	else
		report_print_text(out, &r);
	return 0;
}

static int
commands_run(void *ctx, int argc, char **argv, const char *who, FILE *out,
             struct control_stream *stream, char *err, size_t err_len)
{
	const struct command_links *links = &((struct commands *)ctx)->links;
	struct args a;
	int r;

	/* Nothing a request holds may end a line early in the runtime
	 * list's file or the log. */
	for (int i = 0; i < argc; i++)
		if (!allow_text_ok(argv[i])) {
			snprintf(err, err_len, "argument %d holds a control "
					       "character",
				 i + 1);
			return -EINVAL;
		}
	r = parse_args(argc, argv, &a, err, err_len);
	if (r < 0)
		return r;
	log_debug("control: %s %s", a.cmd, a.what ? a.what : "");
	if (!strcmp(a.cmd, "status")) {
		status(links, &a, out);
		return 0;
	}
	if (!strcmp(a.cmd, "check"))
		return check_start(links, out, stream);
	if (!strcmp(a.cmd, "metrics")) {
		struct metrics_snapshot s;

		links->figures(links->root, &s);
		metrics_exposition(&s, out);
		return 0;
	}
	if (!strcmp(a.cmd, "list"))
		return list_start(links, a.what ? a.what : "", a.json, a.from,
		                  a.to, out, stream, err, err_len);
	if (!strcmp(a.cmd, "allow"))
		return allow(links, &a, out, err, err_len);
	if (!strcmp(a.cmd, "disallow"))
		return disallow(links, &a, who, out, err, err_len);
	if (!strcmp(a.cmd, "release"))
		return release(links, &a, who, out, err, err_len);
	if (!strcmp(a.cmd, "forget"))
		return forget(links, &a, out, err, err_len);
	if (!strcmp(a.cmd, "reload")) {
		char why[512] = "";

		r = links->reload(links->root, why);
		if (r < 0)
			snprintf(err, err_len, "%s", why);
		else
			fprintf(out, "reloaded %s\n", links->cfg.config_path);
		return r;
	}
	if (!strcmp(a.cmd, "report"))
		return report(links, &a, out, stream, err, err_len);
	snprintf(err, err_len, "unknown command '%s'", a.cmd);
	return -EINVAL;
}

int
commands_open(const struct command_links *l,
              const struct control_access *access, struct commands **out,
              char *err)
{
	struct commands *c = calloc(1, sizeof(*c));

	*out = c;
	if (!c) {
		snprintf(err, 512, "control: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	c->links = *l;
	return control_open(l->cfg.control_socket, access, l->loop,
	                    commands_run, c, &c->control, err);
}

void
commands_reconfigure(struct commands *c, const struct command_settings *s)
{
	if (c)
		c->links.cfg = *s;
}

void
commands_close(struct commands *c)
{
	if (!c)
		return;
	control_close(c->control);
	free(c);
}
