// SPDX-License-Identifier: GPL-2.0-or-later
/* greygatectl status's two renderings of the registry's figures: the
 * text, a line a service, and the JSON, an object a group. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "fmt.h"
#include "json.h"
#include "metrics-int.h"

#ifndef GREYGATE_VERSION
#define GREYGATE_VERSION "unknown"
#endif

/* The group's figures as "12 connections, 3 busy". */
static void
text_figures(const struct snapshot *s, const char *group, FILE *out)
{
	const char *sep = "";

	for (size_t i = 0; i < metrics_registry_n; i++) {
		const struct metric *m = &metrics_registry[i];
		const char *hash;

		if (strcmp(m->group, group) || !m->text || !metrics_shown(s, m))
			continue;
		hash = strchr(m->text, '#');
		fprintf(out, "%s%.*s%" PRIu64 "%s", sep, (int)(hash - m->text),
		        m->text, metrics_value_of(s, m), hash + 1);
		sep = ", ";
	}
}

void
metrics_status_text(const struct snapshot *s, FILE *out)
{
	const struct config *cfg = s->cfg;
	int64_t now = s->now;
	char t[FMT_UTC_MAX];

	fprintf(out, "greygated %s, up %" PRId64 " s (since %s)\n",
	        GREYGATE_VERSION, now - s->started, fmt_utc(s->started, t));
	if (!cfg->gateway)
		fprintf(out, "gateway:   off (the policy door alone: no child, "
		             "no capture, no table)\n");
	else if (s->child_pid > 0)
		fprintf(out,
		        "child:     pid %d, up %" PRId64 " s, started %u "
		        "time(s), %" PRIu64 " records refused\n",
		        (int)s->child_pid, now - s->child_since, s->child_starts,
		        s->records_refused);
	else
		fprintf(out,
		        "child:     down (restarting), started %u "
		        "time(s), %" PRIu64 " records refused\n",
		        s->child_starts, s->records_refused);
	for (size_t i = 0; i < s->nretiring; i++)
		fprintf(out,
		        "           pid %d (before the reload): finishing the "
		        "sessions it handed to the MTA, for %" PRId64 " s\n",
		        (int)s->retiring[i].pid, now - s->retiring[i].since);
	fputs("sets:      ", out);
	text_figures(s, "sets", out);
	if (s->sets_uncounted)
		fprintf(out, " (passes and traps: from every gateway, counted "
		             "nowhere here: nft list set inet %s pass4)",
		        cfg->table);
	if (s->shared.remote) {
		fprintf(out, "\nstore:     %s, ", s->shared.where);
		if (s->shared.up)
			fprintf(out,
			        "connected, stream %s (lag %" PRId64 " ms)%s",
			        s->shared.following ? "followed"
			                           : "not followed",
			        s->shared.lag_ms,
			        s->shared.name_clash
			                ? "; ANOTHER GATEWAY USES THIS "
			                  "ONE'S NAME (hostname)"
			                : "");
		else if (s->shared.disagreed)
			fprintf(out,
			        "SETTINGS DISAGREE, this gateway yields "
			        "(writes nothing there): %s",
			        s->shared.last_error);
		else
			fprintf(out, "AWAY for %" PRId64 " s: %s",
			        s->shared.down_since
			                ? now - s->shared.down_since
			                : 0,
			        s->shared.last_error);
		fputs("\nshared:    ", out);
		text_figures(s, "shared", out);
	} else {
		fputs("\nstore:     ", out);
		text_figures(s, "store", out);
	}
	if (s->snapshot_on) {
		fprintf(out, "\nsnapshot:  to %s every %" PRIu32 " s: ",
		        cfg->store_snapshot.dir, cfg->store_snapshot.interval_ms / 1000);
		text_figures(s, "store_snapshot", out);
		if (s->snapshots.last_taken)
			fprintf(out, "; the last at %s",
			        fmt_utc(s->snapshots.last_taken, t));
		else
			fputs("; none yet since the start", out);
	}
	fputs("\ndecisions: ", out);
	text_figures(s, "decisions", out);
	fputs(" (since greygated started; the report's since its reset)\n"
	      "tarpit:    ",
	      out);
	text_figures(s, "tarpit", out);
	if (cfg->handoff.setting == HANDOFF_AUTO && cfg->gateway) {
		fprintf(out, "\nhand-off:  auto: %s%s", cfg->handoff.auto_on ? "" : "off: ",
		        cfg->handoff.auto_on ? s->handoff_auto : cfg->handoff.auto_why);
		if (cfg->handoff.auto_on) {
			fputs(": ", out);
			text_figures(s, "handoff", out);
		}
	} else if (cfg->handoff.mode == HANDOFF_OFF) {
		fputs("\nhand-off:  off (a passing attempt hears 451 and "
		      "retries)",
		      out);
	} else {
		fprintf(out, "\nhand-off:  %s to %s: ",
		        config_handoff_mode_name(cfg->handoff.mode),
		        cfg->handoff.mode == HANDOFF_TRANSPARENT
		                ? "where each client was going, as the client"
		                : cfg->handoff.address);
		text_figures(s, "handoff", out);
	}
	if (s->policy_door_on) {
		fprintf(out, "\npolicy:    on %s: ", cfg->policy.listen);
		text_figures(s, "policy", out);
	} else {
		fputs("\npolicy:    off", out);
	}
	fputs("\nsensor:    ", out);
	text_figures(s, "sensor", out);
	if (s->dns_on) {
		fputs("\ndns:       ", out);
		text_figures(s, "dns", out);
	}
	fputc('\n', out);
}

/* The group's figures as JSON members, after what came before. */
static void
json_figures(const struct snapshot *s, const char *group, bool first, FILE *out)
{
	for (size_t i = 0; i < metrics_registry_n; i++) {
		const struct metric *m = &metrics_registry[i];

		if (strcmp(m->group, group) || !metrics_shown(s, m))
			continue;
		fprintf(out, "%s\"%s\":%" PRIu64, first ? "" : ",", m->field,
		        metrics_value_of(s, m));
		first = false;
	}
}

void
metrics_status_json(const struct snapshot *s, FILE *out)
{
	static const char *const plain[] = {"sets", "store", "decisions",
	                                    "tarpit"};
	const struct config *cfg = s->cfg;
	char t[FMT_UTC_MAX];

	fprintf(out,
	        "{\"version\":\"%s\",\"since\":\"%s\",\"uptime\":%" PRId64
	        ",\"child\":{\"pid\":%d,\"running\":%s,\"starts\":%u,"
	        "\"draining_pid\":%d",
	        GREYGATE_VERSION, fmt_utc(s->started, t),
	        s->now - s->started, (int)s->child_pid,
	        s->child_pid > 0 ? "true" : "false", s->child_starts,
	        (int)(s->nretiring ? s->retiring[0].pid : 0));
	json_figures(s, "child", false, out);
	for (size_t i = 0; i < sizeof(plain) / sizeof(*plain); i++) {
		fprintf(out, "},\"%s\":{", plain[i]);
		json_figures(s, plain[i], true, out);
	}
	fprintf(out, "},\"handoff\":{\"mode\":\"%s\",\"setting\":\"%s\"",
	        config_handoff_mode_name(cfg->handoff.mode),
	        config_handoff_mode_name(cfg->handoff.setting));
	if (cfg->handoff.setting == HANDOFF_AUTO) {
		fputs(",\"auto\":", out);
		json_put_string(out, cfg->handoff.auto_on ? s->handoff_auto
		                                          : cfg->handoff.auto_why);
		fprintf(out, ",\"ready\":%s",
		        cfg->handoff.auto_on && s->handoff_ready ? "true"
		                                                 : "false");
	}
	json_figures(s, "handoff", false, out);
	fputs("},\"policy\":{\"listen\":", out);
	json_put_string(out, cfg->policy.listen);
	json_figures(s, "policy", false, out);
	fputs("},\"sensor\":{", out);
	json_figures(s, "sensor", true, out);
	if (s->dns_on) {
		fputs("},\"dns\":{", out);
		json_figures(s, "dns", true, out);
	}
	if (s->snapshot_on) {
		fputs("},\"store_snapshot\":{\"dir\":", out);
		json_put_string(out, cfg->store_snapshot.dir);
		json_figures(s, "store_snapshot", false, out);
	}
	if (s->shared.remote) {
		fputs("},\"shared\":{\"where\":", out);
		json_put_string(out, s->shared.where);
		fprintf(out, ",\"following\":%s,\"lag_ms\":%" PRId64
		             ",\"down_since\":%" PRId64 ",\"last_error\":",
		        s->shared.following ? "true" : "false", s->shared.lag_ms,
		        s->shared.down_since);
		json_put_string(out, s->shared.last_error);
		json_figures(s, "shared", false, out);
	}
	fputs("}}\n", out);
}

