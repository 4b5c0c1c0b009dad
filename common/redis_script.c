// SPDX-License-Identifier: GPL-2.0-or-later
/* Scripts by SHA1 with a fallback to their text (see redis_script.h). */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>

#include "redis_script.h"

#define WORDS_MAX 32

/* An EVALSHA on its way, with its words kept to be sent whole if Redis
 * lacks the script. */
struct by_sha {
	struct rconn *c;
	struct redis_script *s;
	rconn_reply_fn *fn;
	void *ctx;
	int argc;
	const char *argv[WORDS_MAX];
	size_t lens[WORDS_MAX];
	char words[]; /* the words' bytes */
};

static bool
is_sha(const redisReply *r)
{
	if (r->type != REDIS_REPLY_STRING || r->len != 40)
		return false;
	for (size_t i = 0; i < 40; i++)
		if (!strchr("0123456789abcdef", r->str[i]))
			return false;
	return true;
}

static void
on_loaded(struct redisReply *reply, void *ctx)
{
	struct redis_script *s = ctx;

	s->loading = false;
	if (reply && is_sha(reply)) {
		memcpy(s->sha, reply->str, 40);
		s->sha[40] = 0;
	}
}

/* The script whole: EVAL, the text, then argv. */
static int
send_whole(struct rconn *c, struct redis_script *s, rconn_reply_fn *fn,
           void *ctx, int argc, const char **argv, const size_t *lens)
{
	const char *words[WORDS_MAX + 2] = {"EVAL", s->text};
	size_t wlens[WORDS_MAX + 2] = {4, strlen(s->text)};

	for (int i = 0; i < argc; i++) {
		words[2 + i] = argv[i];
		wlens[2 + i] = lens ? lens[i] : strlen(argv[i]);
	}
	return rconn_command(c, fn, ctx, argc + 2, words, wlens);
}

static void
on_by_sha(struct redisReply *reply, void *ctx)
{
	struct by_sha *b = ctx;

	if (reply && reply->type == REDIS_REPLY_ERROR &&
	    strncmp(reply->str, "NOSCRIPT", 8) == 0) {
		/* Whole this once: Redis keeps it from now on. */
		if (send_whole(b->c, b->s, b->fn, b->ctx, b->argc, b->argv,
		               b->lens) < 0)
			b->fn(NULL, b->ctx); /* (as if lost with the
			                        connection) */
	} else {
		b->fn(reply, b->ctx);
	}
	free(b);
}

/* By SHA1, the words copied for the fallback. */
static int
send_by_sha(struct rconn *c, struct redis_script *s, rconn_reply_fn *fn,
            void *ctx, int argc, const char **argv, const size_t *lens)
{
	const char *words[WORDS_MAX + 2] = {"EVALSHA", s->sha};
	size_t wlens[WORDS_MAX + 2] = {7, 40};
	size_t total = 0;
	struct by_sha *b;
	char *at;
	int r;

	for (int i = 0; i < argc; i++)
		total += lens ? lens[i] : strlen(argv[i]);
	b = malloc(sizeof(*b) + total);
	if (!b)
		return -ENOMEM;
	*b = (struct by_sha){
	        .c = c, .s = s, .fn = fn, .ctx = ctx, .argc = argc};
	at = b->words;
	for (int i = 0; i < argc; i++) {
		b->lens[i] = lens ? lens[i] : strlen(argv[i]);
		memcpy(at, argv[i], b->lens[i]);
		b->argv[i] = at;
		words[2 + i] = at;
		wlens[2 + i] = b->lens[i];
		at += b->lens[i];
	}
	r = rconn_command(c, on_by_sha, b, argc + 2, words, wlens);
	if (r < 0)
		free(b);
	return r;
}

int
redis_script_eval(struct rconn *c, struct redis_script *s, rconn_reply_fn *fn,
                  void *ctx, int argc, const char **argv, const size_t *lens)
{
	if (argc < 1 || argc > WORDS_MAX)
		return -E2BIG;
	if (s->sha[0])
		return send_by_sha(c, s, fn, ctx, argc, argv, lens);
	if (!s->loading) {
		const char *load[] = {"SCRIPT", "LOAD", s->text};

		if (rconn_command(c, on_loaded, s, 3, load, NULL) == 0)
			s->loading = true;
	}
	return send_whole(c, s, fn, ctx, argc, argv, lens);
}
