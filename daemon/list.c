// SPDX-License-Identifier: GPL-2.0-or-later
/* greygatectl list: a long answer, made a piece at a time: from the LMDB
 * store a batch of rows per turn of the loop; from a shared store as the
 * walk of its keys brings them (the answer waits between batches, the
 * loop never does). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "fmt.h"
#include "gateway-int.h"
#include "json.h"
#include "list.h"
#include "redis_loop.h"
#include "shared-int.h"
#include "store_redis.h"

/* Rows made per turn of the loop: a few milliseconds of work. */
#define LIST_ROWS_PER_TURN 2000

enum list_what { LIST_GREY, LIST_PASS, LIST_TRAP, LIST_ALLOW };

struct list_ctx {
	struct gateway *gw;
	enum list_what what;
	FILE *out;
	bool json;
	size_t rows;
	int64_t now;
	struct store_pos pos; /* grey, pass, trap: where the walk is */
	size_t next;          /* allow: the next range */
	uint64_t generation;  /* allow: the lists it started with */
	/* a shared store's walk: rows wait in pending until sent */
	FILE *pending;
	char *pending_buf;
	size_t pending_len;
	bool walking, walked, gone, cut; /* gone: the answer's reader */
	int walk_err;
	void *wake; /* the answer, to wake when rows wait (control.h) */
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
	char key[64], a[32], b[32];

	grey_client_format(c, key, sizeof(key));
	row_start(l);
	if (l->json)
		fprintf(l->out,
		        "\"client\":\"%s\",\"since\":\"%s\",\"expires\":\"%s\","
		        "\"deliveries\":%u,\"sessions\":%u}",
		        key, fmt_utc(rec->since, a), fmt_utc(rec->expires, b),
		        rec->deliveries, rec->sessions);
	else
		fprintf(l->out, "%-24s %-20s %-20s %10u %8u\n", key,
		        fmt_utc(rec->since, a), fmt_utc(rec->expires, b),
		        rec->deliveries, rec->sessions);
	return 0;
}

static int
list_triplet(const struct grey_client *c, const char *sender, const char *rcpt,
             const struct store_triplet *t, void *ctx)
{
	struct list_ctx *l = ctx;
	const struct grey_config *g = &l->gw->cfg->grey;
	int64_t age = l->now - t->first_seen;
	char key[64], a[32], state[32];

	if (age > (int64_t)g->retry_window_sec)
		return 0; /* expired: purge will take it */
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
list_more(void *state, FILE *out)
{
	struct list_ctx *l = state;
	struct gateway *gw = l->gw;
	bool done;
	int r = 0;

	l->out = out;
	switch (l->what) {
	case LIST_GREY:
		r = store_each_triplet_from(gw->store, &l->pos,
		                            LIST_ROWS_PER_TURN, list_triplet,
		                            l);
		done = l->pos.done;
		break;
	case LIST_PASS:
	case LIST_TRAP:
		r = store_each_client_from(
		        gw->store,
		        l->what == LIST_PASS ? STORE_PASS : STORE_TRAP, l->now,
		        &l->pos, LIST_ROWS_PER_TURN, list_client, l);
		done = l->pos.done;
		break;
	default:
		/* A reload meanwhile: the rest would be of other lists. */
		if (l->generation != gw->allow_generation)
			return -ESTALE;
		for (size_t n = 0;
		     n < LIST_ROWS_PER_TURN && l->next < gw->nallow; n++)
			list_range(l, &gw->allow[l->next++]);
		done = l->next == gw->nallow;
	}
	if (r < 0)
		return r;
	if (done && l->json)
		fputs("]\n", out);
	return done ? 0 : 1;
}

/* --- from a shared store --- */

/* Rows held for a slow reader, at most (then the list is cut, said). */
#define LIST_PENDING_MAX (64u << 20)

static int
pending_open(struct list_ctx *l)
{
	l->pending_buf = NULL;
	l->pending_len = 0;
	l->pending = open_memstream(&l->pending_buf, &l->pending_len);
	return l->pending ? 0 : -ENOMEM;
}

/* A row came: the answer is woken, once until it takes what waits. */
static bool
row_may_come(struct list_ctx *l)
{
	if (l->gone || l->cut || !l->pending)
		return false;
	fflush(l->pending);
	if (l->pending_len > LIST_PENDING_MAX) {
		l->cut = true;
		return false;
	}
	l->out = l->pending;
	if (l->wake) {
		control_stream_wake(l->wake);
		l->wake = NULL;
	}
	return true;
}

static int
shared_client(const struct grey_client *c, const struct store_client *rec,
              void *ctx)
{
	struct list_ctx *l = ctx;

	if (rec->expires <= l->now || !row_may_come(l))
		return 0;
	return list_client(c, rec, l);
}

static int
shared_triplet(const struct grey_client *c, const char *sender,
               const char *rcpt, const struct store_triplet *t, void *ctx)
{
	struct list_ctx *l = ctx;

	if (!row_may_come(l))
		return 0;
	return list_triplet(c, sender, rcpt, t, l);
}

static void
free_list(struct list_ctx *l)
{
	if (l->pending)
		fclose(l->pending);
	free(l->pending_buf);
	free(l);
}

static void
on_walked(int err, const struct store_redis_scan_counts *n, void *ctx)
{
	struct list_ctx *l = ctx;

	l->walking = false;
	l->walked = true;
	l->walk_err = err;
	if (l->gone) {
		free_list(l);
		return;
	}
	if (l->wake) {
		control_stream_wake(l->wake);
		l->wake = NULL;
	}
}

/* What the walk brought since the last call, or "later". */
static int
shared_more(void *state, FILE *out, void *wake)
{
	struct list_ctx *l = state;

	fflush(l->pending);
	if (l->pending_len) {
		fwrite(l->pending_buf, 1, l->pending_len, out);
		fclose(l->pending);
		free(l->pending_buf);
		if (pending_open(l) < 0)
			return -ENOMEM;
	}
	if (!l->walked) {
		l->wake = wake;
		return CONTROL_MORE_LATER;
	}
	if (l->cut)
		fprintf(out,
		        "%s(cut: more than %u MiB of rows waited for a "
		        "slow reader)\n",
		        l->json ? "]\n" : "", LIST_PENDING_MAX >> 20);
	else if (l->json)
		fputs("]\n", out);
	return l->walk_err < 0 ? l->walk_err : 0;
}

/* The reader went: a walk under way frees it when it ends. */
static void
shared_free(void *state)
{
	struct list_ctx *l = state;

	l->gone = true;
	l->wake = NULL;
	if (!l->walking)
		free_list(l);
}

static int
shared_list_start(struct list_ctx *l, struct control_stream *stream)
{
	struct shared *sh = l->gw->shared;
	int r;

	if (!sh->agreed)
		return -ENOTCONN;
	r = pending_open(l);
	if (r < 0)
		return r;
	r = l->what == LIST_GREY
	            ? store_redis_scan_triplets(sh->c, SHARED_PREFIX,
	                                        shared_triplet, on_walked, l)
	            : store_redis_scan_clients(
	                      sh->c, SHARED_PREFIX,
	                      l->what == LIST_PASS ? STORE_PASS : STORE_TRAP,
	                      shared_client, on_walked, l);
	if (r < 0) {
		fclose(l->pending);
		free(l->pending_buf);
		return r;
	}
	l->walking = true;
	stream->more_later = shared_more;
	stream->free = shared_free;
	return 0;
}

int
list_start(struct gateway *gw, const char *what, bool json, FILE *out,
           struct control_stream *stream, char *err, size_t len)
{
	struct list_ctx *l;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->gw = gw;
	l->json = json;
	l->now = loop_wall_sec(gw->loop);
	l->generation = gw->allow_generation;
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
	stream->state = l;
	if (gw->shared && l->what != LIST_ALLOW) {
		int r = shared_list_start(l, stream);

		if (r < 0) {
			free(l);
			snprintf(err, len, "list %s: the shared store: %s",
			         what,
			         r == -ENOTCONN ? "does not answer"
			                        : strerror(-r));
		}
		return r;
	}
	stream->more = list_more;
	stream->free = free;
	return 0;
}
