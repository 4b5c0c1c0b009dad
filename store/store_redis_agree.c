// SPDX-License-Identifier: GPL-2.0-or-later
/* The keys every gateway of a shared store must key and time the
 * greylist alike by (store_redis.h): written by the first gateway,
 * compared by each at every connection, put back by the gateways that
 * agreed earlier when a newcomer wrote its own into an emptied store. */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_loop.h"
#include "redis_script.h"
#include "store_redis.h"

/* KEYS: the settings' hash. ARGV: since (the site's settings this
 * gateway agreed with, as the store's clock told it; 0: a newcomer),
 * the gateway's name, then the settings as name, value pairs.
 * Absent (a new or emptied store): ours are written, with since (ours,
 * or now) and created (now), times in microseconds of the store's clock
 * (two gateways a moment apart are told apart). Present: a gateway that agreed
 * earlier than the one who wrote them (their since is later) puts its own back;
 * a newcomer never replaces them. A setting the hash lacks (one added since
 * it was written, privacy) is written by the first gateway that has it.
 * Returns {state, the hash}: state 1 written from nothing, 2 ours replaced
 * a later gateway's others, 0 found. */
static const char agree_script[] =
        "local function all()\n"
        "  local h = redis.call('HGETALL', KEYS[1])\n"
        "  local t = {}\n"
        "  for i = 1, #h, 2 do t[h[i]] = h[i + 1] end\n"
        "  return h, t\n"
        "end\n"
        "local h, cur = all()\n"
        "local ours = tonumber(ARGV[1]) or 0\n"
        "local t = redis.call('TIME')\n"
        "local now = t[1] .. string.format('%06d', tonumber(t[2]))\n"
        "local state = 0\n"
        "if #h == 0 then\n"
        "  redis.call('HSET', KEYS[1], 'since', ours > 0 and ARGV[1] or now,\n"
        "             'created', now, 'by', ARGV[2], unpack(ARGV, 3))\n"
        "  state = 1\n"
        "else\n"
        "  local differ = false\n"
        "  for i = 3, #ARGV - 1, 2 do\n"
        "    if not cur[ARGV[i]] then\n"
        "      redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])\n"
        "      cur[ARGV[i]] = ARGV[i + 1]\n"
        "    end\n"
        "    if cur[ARGV[i]] ~= ARGV[i + 1] then differ = true end\n"
        "  end\n"
        "  local theirs = tonumber(cur['since'] or '')\n"
        "  if ours > 0 and theirs and theirs > ours then\n"
        "    redis.call('HSET', KEYS[1], 'since', ARGV[1], unpack(ARGV, 3))\n"
        "    if differ then\n"
        "      redis.call('HSET', KEYS[1], 'by', ARGV[2])\n"
        "      state = 2\n"
        "    end\n"
        "  elseif not theirs and not differ then\n"
        "    redis.call('HSET', KEYS[1], 'since', now)\n"
        "  end\n"
        "  if not cur['created'] then\n"
        "    redis.call('HSET', KEYS[1], 'created', now)\n"
        "  end\n"
        "end\n"
        "h = all()\n"
        "return {state, h}\n";
static struct redis_script agree_cached = REDIS_SCRIPT(agree_script);

struct agree {
	store_redis_agreed_fn *done;
	void *ctx;
	char ours[STORE_REDIS_AGREED][24];
};

static const char *const agreed_keys[] = {"client_prefix4", "client_prefix6",
                                          "delay", "retry_window", "pass_ttl",
                                          "privacy"};

/* The value of name in an HGETALL reply (NULL: absent). */
static const char *
hash_value(const redisReply *r, const char *name)
{
	for (size_t i = 0; i + 1 < r->elements; i += 2)
		if (r->element[i]->type == REDIS_REPLY_STRING &&
		    r->element[i + 1]->type == REDIS_REPLY_STRING &&
		    !strcmp(r->element[i]->str, name))
			return r->element[i + 1]->str;
	return NULL;
}

/* A time in the hash (0: absent or not a number). */
static int64_t
hash_time(const redisReply *r, const char *name)
{
	const char *v = hash_value(r, name);
	char *end;
	long long t;

	if (!v)
		return 0;
	t = strtoll(v, &end, 10);
	return end != v && !*end && t > 0 ? t : 0;
}

/* The script's answer: {state, hash}, or NULL. */
static const redisReply *
agreement_hash(const redisReply *reply, long long *state)
{
	if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
	    reply->element[0]->type != REDIS_REPLY_INTEGER ||
	    reply->element[1]->type != REDIS_REPLY_ARRAY)
		return NULL;
	*state = reply->element[0]->integer;
	return reply->element[1];
}

void
store_redis_read_agreement(const redisReply *reply,
                           const char ours[STORE_REDIS_AGREED][24],
                           struct store_redis_agreement *out)
{
	const redisReply *h;
	long long state = 0;

	memset(out, 0, sizeof(*out));
	if (!(h = agreement_hash(reply, &state))) {
		/* (a Redis still loading its data answers -LOADING) */
		out->err = -EAGAIN;
		snprintf(out->why, sizeof(out->why),
		         "the store answered %s%.200s",
		         reply->type == REDIS_REPLY_ERROR ? ""
		                                          : "otherwise than "
		                                            "asked",
		         reply->type == REDIS_REPLY_ERROR && reply->str
		                 ? reply->str
		                 : "");
		return;
	}
	for (size_t i = 0; !out->err && i < STORE_REDIS_AGREED; i++) {
		const char *theirs = hash_value(h, agreed_keys[i]);
		const char *by = hash_value(h, "by");

		if (theirs && !strcmp(theirs, ours[i]))
			continue;
		out->err = -EINVAL;
		snprintf(out->why, sizeof(out->why),
		         "%s is %s here but %.24s in the shared store (set by "
		         "%.64s): every gateway sharing it must have the same",
		         agreed_keys[i], ours[i], theirs ? theirs : "nothing",
		         by ? by : "?");
	}
	{
		const char *by = hash_value(h, "by");

		out->created = state == 1;
		out->took_over = state == 2;
		out->since = hash_time(h, "since");
		out->created_at = hash_time(h, "created");
		snprintf(out->by, sizeof(out->by), "%s", by ? by : "?");
	}
}

static void
on_agreed(struct redisReply *reply, void *ctx)
{
	struct agree *a = ctx;
	struct store_redis_agreement out = {0};

	if (!reply) {
		out.err = -EIO;
		snprintf(out.why, sizeof(out.why), "the store did not answer");
	} else {
		store_redis_read_agreement(reply, (const char(*)[24])a->ours,
		                           &out);
	}
	a->done(&out, a->ctx);
	free(a);
}

int
store_redis_agree(struct rconn *c, const char *prefix,
                  const struct grey_config *cfg, const char *gateway,
                  int64_t since, store_redis_agreed_fn *done, void *ctx)
{
	char key[STORE_REDIS_KEY_MAX], since_text[24];
	const char *argv[2 + 2 + 2 * STORE_REDIS_AGREED];
	struct agree *a;
	uint32_t values[STORE_REDIS_AGREED - 1] = {
	        cfg->prefix4, cfg->prefix6, cfg->delay_sec,
	        cfg->retry_window_sec, cfg->pass_ttl_sec};
	int r;

	if (snprintf(key, sizeof(key), "%sconfig", prefix) >= (int)sizeof(key))
		return -ENAMETOOLONG;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->done = done;
	a->ctx = ctx;
	snprintf(since_text, sizeof(since_text), "%lld",
	         (long long)(since > 0 ? since : 0));
	argv[0] = "1";
	argv[1] = key;
	argv[2] = since_text;
	argv[3] = gateway;
	for (int i = 0; i < STORE_REDIS_AGREED; i++) {
		if (i < STORE_REDIS_AGREED - 1)
			snprintf(a->ours[i], sizeof(a->ours[i]), "%u",
			         values[i]);
		else if (cfg->privacy)
			/* (the key's name: the same key at every gateway) */
			privacy_fingerprint(cfg->privacy_key, a->ours[i]);
		else
			snprintf(a->ours[i], sizeof(a->ours[i]), "off");
		argv[4 + 2 * i] = agreed_keys[i];
		argv[5 + 2 * i] = a->ours[i];
	}
	r = redis_script_eval(c, &agree_cached, on_agreed, a,
	                      4 + 2 * STORE_REDIS_AGREED, argv, NULL);
	if (r < 0)
		free(a);
	return r;
}
