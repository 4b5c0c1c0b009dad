// SPDX-License-Identifier: GPL-2.0-or-later
/* greygatectl top: a live view of a running greygated, one frame a
 * second (or --interval), so that an admin sees the gateway breathe during
 * an incident. The one view greygatectl makes itself: a rate needs two
 * readings, and greygated answers each request on its own. Each reading
 * is greygated's Prometheus text (the "metrics" command, the figures'
 * public names), so nothing here knows greygated's insides. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"

#define SERIES_MAX 512

/* One reading: each series ("family{labels}", without "greygate_") and
 * its value. */
struct reading {
	size_t n;
	struct {
		char name[160];
		double value;
	} s[SERIES_MAX];
	double at; /* CLOCK_MONOTONIC seconds */
};

static double
now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Prometheus text: "greygate_NAME{LABELS} VALUE" lines, '#' comments. */
static void
parse(const char *text, struct reading *r)
{
	r->n = 0;
	for (const char *line = text; *line && r->n < SERIES_MAX;) {
		const char *end = strchr(line, '\n'), *space;
		size_t len = end ? (size_t)(end - line) : strlen(line);

		space = memrchr(line, ' ', len);
		if (line[0] != '#' && space && len > 9 &&
		    !strncmp(line, "greygate_", 9) &&
		    (size_t)(space - line) - 9 < sizeof(r->s[0].name)) {
			size_t nl = (size_t)(space - line) - 9;

			memcpy(r->s[r->n].name, line + 9, nl);
			r->s[r->n].name[nl] = 0;
			r->s[r->n].value = strtod(space + 1, NULL);
			r->n++;
		}
		line += len + (end != NULL);
	}
}

/* The sum of the series whose name starts with prefix (a family, or a
 * family with the start of its labels); -1 if none. */
static double
sum(const struct reading *r, const char *prefix)
{
	size_t pl = strlen(prefix);
	double total = 0;
	bool found = false;

	for (size_t i = 0; i < r->n; i++) {
		const char *name = r->s[i].name;

		/* "family" matches "family" and "family{...}", never
		 * "family_more" */
		if (!strncmp(name, prefix, pl) &&
		    (name[pl] == 0 || name[pl] == '{' ||
		     prefix[pl - 1] == '"' || prefix[pl - 1] == ',')) {
			total += r->s[i].value;
			found = true;
		}
	}
	return found ? total : -1;
}

/* Per second between two readings (0 on the first, or a counter that went
 * back: a report reset). */
static double
rate(const struct reading *now, const struct reading *before,
     const char *prefix)
{
	double a = sum(now, prefix), b = before ? sum(before, prefix) : -1;
	double dt = before ? now->at - before->at : 0;

	if (a < 0 || b < 0 || dt <= 0 || a < b)
		return 0;
	return (a - b) / dt;
}

static double
gauge(const struct reading *r, const char *name)
{
	double v = sum(r, name);

	return v < 0 ? 0 : v;
}

/* The store's latency over the frame: the mean of the fetches it made
 * (the histogram's sum and count moved), or that there were none. */
static const char *
fetch_text(const struct reading *r, const struct reading *before, char *buf,
           size_t len)
{
	double fetches = rate(r, before, "store_fetch_seconds_count");
	double seconds = rate(r, before, "store_fetch_seconds_sum");

	if (fetches > 0)
		snprintf(buf, len, "fetch %.2f ms mean", seconds / fetches * 1e3);
	else
		snprintf(buf, len, "fetch -");
	return buf;
}

static void
frame(FILE *out, const struct reading *r, const struct reading *before,
      const char *sock_path, bool tty)
{
	char when[32], latency[48];
	time_t t = time(NULL);

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
	if (tty)
		fputs("\033[H\033[2J", out);
	fprintf(out, "greygate top: %s at %s%s\n", sock_path, when,
	        before ? "" : " (rates from the next frame on)");
	fprintf(out,
	        "tarpit      %6.0f open%s  %8.1f connections/s  %6.1f "
	        "refused busy/s\n",
	        gauge(r, "tarpit_connections_open"),
	        gauge(r, "tarpit_stress_mode") > 0 ? " (STRESS)" : "",
	        rate(r, before, "tarpit_connections_total"),
	        rate(r, before, "tarpit_refused_busy_total"));
	fprintf(out,
	        "decisions   %8.1f attempts/s: %.1f greylisted (%.1f new), "
	        "%.1f passed, %.1f trapped, %.1f allow-listed\n",
	        rate(r, before, "attempts_total"),
	        rate(r, before, "decisions_total{action=\"greylist\","),
	        rate(r, before,
	             "decisions_total{action=\"greylist\",reason=\"new\""),
	        rate(r, before,
	             "decisions_total{action=\"pass\",reason=\"retry\"") +
	                rate(r, before,
	                     "decisions_total{action=\"pass\",reason="
	                     "\"other\""),
	        rate(r, before, "decisions_total{action=\"trap\","),
	        rate(r, before,
	             "decisions_total{action=\"pass\",reason=\"allow_list\""));
	fprintf(out,
	        "hand-offs   %6.0f open  %8.1f started/s  %6.1f joined/s  "
	        "%6.1f failed/s\n",
	        gauge(r, "handoffs_open"),
	        rate(r, before, "handoffs_started_total"),
	        rate(r, before, "handoffs_joined_total"),
	        rate(r, before, "handoffs_failed_total"));
	fprintf(out,
	        "fast path   %8.1f sessions/s  %6.1f refreshes/s  passed "
	        "networks %.0f (sets pass4 %.0f, pass6 %.0f)\n",
	        rate(r, before, "fastpath_sessions_total"),
	        rate(r, before, "refreshes_total"),
	        gauge(r, "store_records{kind=\"pass\""),
	        gauge(r, "set_elements{set=\"pass4\""),
	        gauge(r, "set_elements{set=\"pass6\""));
	fprintf(out,
	        "store       %8.0f triplets waiting  %6.0f trapped  %6.0f "
	        "writes waiting for Redis  %s\n",
	        gauge(r, "store_records{kind=\"triplet\""),
	        gauge(r, "store_records{kind=\"trap\""),
	        gauge(r, "shared_writes_waiting"),
	        fetch_text(r, before, latency, sizeof(latency)));
	fflush(out);
}

static volatile sig_atomic_t stop;

static void
on_signal(int signo)
{
	(void)signo;
	stop = 1;
}

int
ctl_top(const char *sock_path, int argc, char **argv)
{
	static struct reading readings[2];
	struct reading *r = &readings[0], *before = NULL;
	double interval = 1;
	long count = 0; /* 0: until stopped */
	bool tty = isatty(STDOUT_FILENO);
	char *text;

	for (int i = 0; i < argc; i++) {
		char *end = NULL;

		if (!strcmp(argv[i], "--interval") && i + 1 < argc) {
			interval = strtod(argv[++i], &end);
			if (*end || !(interval >= 0.1 && interval <= 3600)) {
				fprintf(stderr,
				        "greygatectl top: --interval "
				        "%s: seconds, 0.1 to 3600\n",
				        argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--count") && i + 1 < argc) {
			count = strtol(argv[++i], &end, 10);
			if (*end || count < 1) {
				fprintf(stderr,
				        "greygatectl top: --count %s: "
				        "a number of frames, 1 or more\n",
				        argv[i]);
				return 2;
			}
		} else {
			fprintf(stderr,
			        "greygatectl top: unexpected argument "
			        "'%s' (--interval SEC, --count N)\n",
			        argv[i]);
			return 2;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (long shown = 0; !stop && (!count || shown < count); shown++) {
		/* (the request: "metrics", NUL-ended, then a newline) */
		int rc = ctl_ask(sock_path, "metrics\0\n", 9, &text);

		if (rc != 0)
			return rc;
		parse(text, r);
		r->at = now_sec();
		free(text);
		if (shown && !tty)
			fputc('\n', stdout);
		frame(stdout, r, before, sock_path, tty);
		before = r;
		r = &readings[r == &readings[0]];
		if (!count || shown + 1 < count) {
			struct timespec ts = {
			        .tv_sec = (time_t)interval,
			        .tv_nsec = (long)((interval -
			                           (double)(time_t)interval) *
			                          1e9)};

			while (!stop && nanosleep(&ts, &ts) < 0 &&
			       errno == EINTR)
				;
		}
	}
	return 0;
}
