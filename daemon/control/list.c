// SPDX-License-Identifier: GPL-2.0-or-later
/* greygatectl list: a long answer, made a piece at a time: a batch of
 * rows per turn of the loop, from the store's walk (grey_store.h: LMDB
 * reads them as asked, Redis brings them at its pace and the answer
 * waits for them; the loop never does), or from the allow lists. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "fmt.h"
#include "commands-int.h"
#include "json.h"
#include "grey_store.h"

/* Rows made per turn of the loop: a few milliseconds of work. */
#define LIST_ROWS_PER_TURN 2000

enum list_what { LIST_GREY, LIST_PASS, LIST_TRAP, LIST_ALLOW };

struct list_ctx {
	const struct command_links *links;
	enum list_what what;
	FILE *out;
	bool json;
	size_t rows;
	int64_t now;
	struct grey_store_walk *walk; /* grey, pass, trap */
	size_t next;                  /* allow: the next range */
	uint64_t generation;          /* allow: the lists it started with */
	char from[GREY_ADDR_MAX], to[GREY_ADDR_MAX]; /* grey: "" any */
};

static void
row_start(struct list_ctx *l)
{
	if (l->json)
		fputs(l->rows ? ",{" : "{", l->out);
	l->rows++;
}

static int
list_client(const struct grey_client *c, const struct store_client *rec,
            void *ctx)
{
	struct list_ctx *l = ctx;
	bool known_here = l->walk->known_here != NULL;
	char key[64], a[32] = "-", b[32], deliveries[16] = "-", sessions[16] = "-";

	grey_client_format(c, key, sizeof(key));
	if (rec->since)
		fmt_utc(rec->since, a);
	fmt_utc(rec->expires, b);
	if (!known_here) {
		snprintf(deliveries, sizeof(deliveries), "%u", rec->deliveries);
		snprintf(sessions, sizeof(sessions), "%u", rec->sessions);
	}
	row_start(l);
	if (l->json) {
		/* not known: null, as the text's "-" */
		fprintf(l->out, "\"client\":\"%s\",\"since\":%s%s%s", key,
		        rec->since ? "\"" : "", rec->since ? a : "null",
		        rec->since ? "\"" : "");
		fprintf(l->out,
		        ",\"expires\":\"%s\",\"deliveries\":%s,\"sessions\":%s}",
		        b, known_here ? "null" : deliveries,
		        known_here ? "null" : sessions);
	} else {
		fprintf(l->out, "%-24s %-20s %-20s %10s %8s\n", key, a, b,
		        deliveries, sessions);
	}
	return 0;
}

static int
list_triplet(const struct grey_client *c, const char *sender, const char *rcpt,
             const struct store_triplet *t, void *ctx)
{
	struct list_ctx *l = ctx;
	const struct grey_config *g = &l->links->cfg.grey;
	int64_t age = l->now - t->first_seen;
	char key[64], a[32], state[32];

	if (age > (int64_t)g->retry_window_sec)
		return 0; /* expired: purge will take it */
	/* (the stored addresses are lower-case: grey_normalize_*; with
	 * privacy the filters are hashes, which match whole) */
	if ((l->from[0] && !strstr(sender, l->from)) ||
	    (l->to[0] && !strstr(rcpt, l->to)))
		return 0;
	if (t->attempts > 1 && age >= (int64_t)g->delay_sec)
		snprintf(state, sizeof(state), "retried");
	else if (age >= (int64_t)g->delay_sec)
		snprintf(state, sizeof(state), "may-pass");
	else
		snprintf(state, sizeof(state), "wait-%" PRId64 "s",
		         (int64_t)g->delay_sec - age);
	grey_client_format(c, key, sizeof(key));
	row_start(l);
	if (l->json) {
		fprintf(l->out, "\"client\":\"%s\",\"sender\":", key);
		json_put_string(l->out, sender);
		fputs(",\"recipient\":", l->out);
		json_put_string(l->out, rcpt);
		fprintf(l->out,
		        ",\"first_seen\":\"%s\",\"attempts\":%u,\"state\":"
		        "\"%s\"}",
		        fmt_utc(t->first_seen, a), t->attempts, state);
	} else {
		fprintf(l->out, "%-20s %-30s %-30s %-20s %8u %s\n", key,
		        sender[0] ? sender : "<>", rcpt,
		        fmt_utc(t->first_seen, a), t->attempts, state);
	}
	return 0;
}

/* One merged allow range, as the kernel holds it. */
static void
list_range(struct list_ctx *l, const struct allow_range *r)
{
	char net[IP_RANGE_TEXT_MAX], left[32] = "never";

	ip_range_format(&r->range, net);
	if (r->expires)
		snprintf(left, sizeof(left), "%" PRId64 "s",
		         r->expires > l->now ? r->expires - l->now : 0);
	row_start(l);
	if (l->json) {
		fprintf(l->out,
		        "\"client\":\"%s\",\"expires_in\":%" PRId64
		        ",\"comment\":",
		        net, r->expires > l->now ? r->expires - l->now : 0);
		json_put_string(l->out, r->comment);
		fputc('}', l->out);
	} else {
		fprintf(l->out, "%-24s %-12s %s\n", net, left, r->comment);
	}
}

static int
list_more(void *state, FILE *out, void *wake)
{
	struct list_ctx *l = state;
	const struct command_links *links = l->links;
	const struct grey_store_rows rows = {list_client, list_triplet, l};
	int r;

	l->out = out;
	if (l->what == LIST_ALLOW) {
		uint64_t generation;
		size_t nallow;
		const struct allow_range *allow =
		        allow_lists_ranges(links->allow, &nallow, &generation);

		/* A reload meanwhile: the rest would be of other lists. */
		if (l->generation != generation)
			return -ESTALE;
		for (size_t n = 0; n < LIST_ROWS_PER_TURN && l->next < nallow;
		     n++)
			list_range(l, &allow[l->next++]);
		r = l->next == nallow ? 0 : GREY_STORE_WALK_MORE;
	} else {
		r = grey_store_walk_more(l->walk, LIST_ROWS_PER_TURN, &rows,
		                         control_stream_wake, wake);
	}
	if (r == GREY_STORE_WALK_LATER)
		return CONTROL_MORE_LATER;
	if (r == GREY_STORE_WALK_MORE)
		return 1;
	if (r == -EOVERFLOW)
		fprintf(out,
		        "%s(cut: more than %u MiB of rows waited for a "
		        "slow reader)\n",
		        l->json ? "]\n" : "", GREY_STORE_WALK_WAITING_MAX >> 20);
	else if (r == 0 && l->json)
		fputs("]\n", out);
	if (r == 0 && !l->json && l->walk && l->walk->known_here)
		fprintf(out, "(%s)\n", l->walk->known_here);
	return r == -EOVERFLOW ? 0 : r;
}

static void
list_free(void *state)
{
	struct list_ctx *l = state;

	grey_store_walk_end(l->walk);
	free(l);
}

/* A filter's text in lower case, as the stored addresses are. */
static int
filter_of(const char *text, char *out, size_t len)
{
	size_t n = text ? strlen(text) : 0;

	if (n >= len)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < n; i++)
		out[i] = (char)(text[i] >= 'A' && text[i] <= 'Z' ? text[i] + 32
		                                                 : text[i]);
	out[n] = 0;
	return 0;
}

/* With privacy the store holds hashes: a filter is then a whole address,
 * normalized and hashed as the store's are. */
static int
hide_filters(struct list_ctx *l, const struct grey_config *g)
{
	char norm[GREY_ADDR_MAX];

	if (l->from[0]) {
		if (grey_normalize_sender(l->from, norm, sizeof(norm)) < 0)
			return -ENAMETOOLONG;
		privacy_hash(g->privacy_key, norm, l->from);
	}
	if (l->to[0]) {
		if (grey_normalize_rcpt(l->to, norm, sizeof(norm)) < 0)
			return -ENAMETOOLONG;
		privacy_hash(g->privacy_key, norm, l->to);
	}
	return 0;
}

int
list_start(const struct command_links *links, const char *what, bool json,
           const char *from, const char *to, FILE *out,
           struct control_stream *stream, char *err, size_t len)
{
	struct list_ctx *l;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->links = links;
	l->json = json;
	l->now = loop_wall_sec(links->loop);
	if ((from || to) && strcmp(what, "grey")) {
		free(l);
		snprintf(err, len, "list: --from and --to are for list grey");
		return -EINVAL;
	}
	if (filter_of(from, l->from, sizeof(l->from)) < 0 ||
	    filter_of(to, l->to, sizeof(l->to)) < 0 ||
	    (links->cfg.grey.privacy &&
	     hide_filters(l, &links->cfg.grey) < 0)) {
		free(l);
		snprintf(err, len, "list: --from or --to too long");
		return -EINVAL;
	}
	{
		size_t n;

		allow_lists_ranges(links->allow, &n, &l->generation);
	}
	if (!strcmp(what, "grey")) {
		l->what = LIST_GREY;
		if (!json)
			fprintf(out, "%-20s %-30s %-30s %-20s %8s %s\n",
			        "CLIENT", "SENDER", "RECIPIENT", "FIRST-SEEN",
			        "ATTEMPTS", "STATE");
	} else if (!strcmp(what, "pass") || !strcmp(what, "trap")) {
		l->what = what[0] == 'p' ? LIST_PASS : LIST_TRAP;
		if (!json)
			fprintf(out, "%-24s %-20s %-20s %10s %8s\n", "CLIENT",
			        "SINCE", "EXPIRES", "DELIVERIES", "SESSIONS");
	} else if (!strcmp(what, "allow")) {
		l->what = LIST_ALLOW;
		if (!json)
			fprintf(out, "%-24s %-12s %s\n", "CLIENT", "EXPIRES-IN",
			        "COMMENT");
	} else {
		free(l);
		snprintf(err, len, "list what? grey, pass, allow or trap");
		return -EINVAL;
	}
	if (json)
		fputc('[', out);
	if (l->what != LIST_ALLOW) {
		int r = grey_store_walk_start(
		        links->records,
		        l->what == LIST_GREY   ? GREY_STORE_TRIPLETS
		        : l->what == LIST_PASS ? GREY_STORE_PASSES
		                               : GREY_STORE_TRAPS,
		        l->now, &l->walk);

		if (r < 0) {
			free(l);
			snprintf(err, len, "list %s: the store: %s", what,
			         r == -ENOTCONN ? "does not answer"
			                        : strerror(-r));
			return r;
		}
	}
	stream->state = l;
	stream->more_later = list_more;
	stream->free = list_free;
	return 0;
}
