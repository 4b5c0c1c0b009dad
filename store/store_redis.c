// SPDX-License-Identifier: GPL-2.0-or-later
/* The greylist's records in Redis (store_redis.h): keys, parsing, one
 * attempt's fetch and one decision's writes, the run-time allow
 * entries, the gateways' report figures, a client forgotten. (The keys
 * every gateway must share: store_redis_agree.c.) */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redis_loop.h"
#include "redis_script.h"
#include "store_redis.h"

const char *const store_redis_client_fields[STORE_REDIS_NCLIENT] = {
        "since", "expires", "refreshed", "deliveries", "sessions"};
const char *const store_redis_triplet_fields[STORE_REDIS_NTRIPLET] = {
        "first", "last", "attempts", "awaiting"};

int
store_redis_client_key(const char *prefix, enum store_table table,
                       const struct grey_client *client, char *out)
{
	char net[64];
	int n = snprintf(out, STORE_REDIS_KEY_MAX, "%s%s:%s", prefix,
	                 table == STORE_TRAP ? "trap" : "pass",
	                 grey_client_format(client, net, sizeof(net)));

	return n < 0 || n >= STORE_REDIS_KEY_MAX ? -ENAMETOOLONG : n;
}

int
store_redis_triplet_key(const char *prefix, const struct grey_client *client,
                        const char *sender, const char *rcpt, char *out)
{
	char net[64];
	int n = snprintf(out, STORE_REDIS_KEY_MAX, "%sgrey:%s %s %s", prefix,
	                 grey_client_format(client, net, sizeof(net)), sender,
	                 rcpt);

	return n < 0 || n >= STORE_REDIS_KEY_MAX ? -ENAMETOOLONG : n;
}

/* A field as a number: decimal digits, an optional '-', nothing else.
 * Return: 1 (a number), 0 (nil), -EBADMSG. */
static int
field(const redisReply *r, int64_t *out)
{
	int64_t v = 0;
	size_t i = 0;
	bool neg = false;

	if (r->type == REDIS_REPLY_NIL)
		return 0;
	if (r->type != REDIS_REPLY_STRING || r->len == 0 || r->len > 19)
		return -EBADMSG;
	if (r->str[0] == '-') {
		neg = true;
		i = 1;
	}
	if (i == r->len)
		return -EBADMSG;
	for (; i < r->len; i++) {
		if (r->str[i] < '0' || r->str[i] > '9')
			return -EBADMSG;
		v = v * 10 + (r->str[i] - '0');
	}
	*out = neg ? -v : v;
	return 1;
}

/* The fields of an HMGET reply: all there (STORE_FOUND), none (0), or
 * anything else (-EBADMSG). */
static int
fields(const redisReply *reply, size_t n, int64_t *v)
{
	size_t present = 0;

	if (!reply || reply->type != REDIS_REPLY_ARRAY || reply->elements != n)
		return -EBADMSG;
	for (size_t i = 0; i < n; i++) {
		int r = field(reply->element[i], &v[i]);

		if (r < 0)
			return r;
		present += (size_t)r;
	}
	if (!present)
		return 0;
	return present == n ? STORE_FOUND : -EBADMSG;
}

static bool
fits_u32(int64_t v)
{
	return v >= 0 && v <= UINT32_MAX;
}

int
store_redis_parse_client(const redisReply *reply, struct store_client *out)
{
	int64_t v[STORE_REDIS_NCLIENT];
	int r = fields(reply, STORE_REDIS_NCLIENT, v);

	if (r != STORE_FOUND)
		return r;
	if (v[0] < 0 || v[1] < v[0] || v[2] < 0 || !fits_u32(v[3]) ||
	    !fits_u32(v[4]))
		return -EBADMSG;
	*out = (struct store_client){.since = v[0],
	                             .expires = v[1],
	                             .refreshed = v[2],
	                             .deliveries = (uint32_t)v[3],
	                             .sessions = (uint32_t)v[4]};
	return STORE_FOUND;
}

int
store_redis_parse_triplet(const redisReply *reply, struct store_triplet *out)
{
	int64_t v[STORE_REDIS_NTRIPLET];
	int r = fields(reply, STORE_REDIS_NTRIPLET, v);

	if (r != STORE_FOUND)
		return r;
	if (v[0] < 0 || v[1] < v[0] || !fits_u32(v[2]) || v[2] == 0 ||
	    !fits_u32(v[3]))
		return -EBADMSG;
	*out = (struct store_triplet){.first_seen = v[0],
	                              .last_seen = v[1],
	                              .attempts = (uint32_t)v[2],
	                              .awaiting = (uint32_t)v[3]};
	return STORE_FOUND;
}

/* --- one attempt's fetch --- */

enum which { TRAP, PASS, TRIPLET, OWN, WHICH_N };

struct fetch {
	struct grey_records *w;
	struct store_redis_counters *counters;
	store_redis_fetched_fn *done;
	void *ctx;
	unsigned waiting; /* replies still to come */
	bool failed;
	struct part {
		struct fetch *f;
		enum which which;
	} parts[WHICH_N];
};

static void
found(struct fetch *f, enum which which, const redisReply *reply)
{
	struct grey_records *w = f->w;
	int r = which == TRIPLET
	                ? store_redis_parse_triplet(reply, &w->triplet)
	                : store_redis_parse_client(
	                          reply, which == TRAP ? &w->trap
	                                 : which == OWN ? &w->own
	                                                : &w->pass);

	/* Unreadable: as if absent (the decision then writes a good one
	 * over it). */
	if (r < 0) {
		r = 0;
		if (f->counters)
			f->counters->records_bad++;
	}
	if (which == TRAP)
		w->trap_found = r;
	else if (which == PASS)
		w->pass_found = r;
	else if (which == OWN)
		w->own_found = r;
	else
		w->triplet_found = r;
}

static void
on_part(struct redisReply *reply, void *ctx)
{
	struct part *p = ctx;
	struct fetch *f = p->f;

	if (!reply)
		f->failed = true;
	else
		found(f, p->which, reply);
	if (--f->waiting)
		return;
	f->done(f->w, f->failed ? -EIO : 0, f->ctx);
	free(f);
}

int
store_redis_fetch(struct rconn *c, const char *prefix, struct grey_records *w,
                  struct store_redis_counters *counters,
                  store_redis_fetched_fn *done, void *ctx)
{
	struct fetch *f = calloc(1, sizeof(*f));
	bool want[WHICH_N] = {w->want_trap, w->want_pass, w->want_triplet,
	                      w->want_own};
	unsigned sent = 0;
	int err = 0;

	if (!f)
		return -ENOMEM;
	*f = (struct fetch){
	        .w = w, .counters = counters, .done = done, .ctx = ctx};
	w->trap_found = w->pass_found = w->triplet_found = w->own_found = 0;
	for (int i = 0; i < WHICH_N; i++)
		if (want[i])
			f->waiting++;
	if (counters)
		counters->fetches++;
	for (int i = 0; i < WHICH_N && !err; i++) {
		const char *argv[2 + STORE_REDIS_NCLIENT];
		char key[STORE_REDIS_KEY_MAX];
		const char *const *names = i == TRIPLET
		                                   ? store_redis_triplet_fields
		                                   : store_redis_client_fields;
		size_t n = i == TRIPLET ? STORE_REDIS_NTRIPLET
		                        : STORE_REDIS_NCLIENT;

		if (!want[i])
			continue;
		err = i == TRIPLET
		              ? store_redis_triplet_key(prefix, &w->triplet_key,
		                                        w->sender, w->rcpt, key)
		              : store_redis_client_key(
		                        prefix,
		                        i == TRAP ? STORE_TRAP : STORE_PASS,
		                        i == PASS ? &w->pass_key : &w->trap_key,
		                        key);
		if (err < 0)
			break;
		argv[0] = "HMGET";
		argv[1] = key;
		for (size_t k = 0; k < n; k++)
			argv[2 + k] = names[k];
		f->parts[i] = (struct part){f, (enum which)i};
		err = rconn_command(c, on_part, &f->parts[i], (int)(2 + n),
		                    argv, NULL);
		if (err == 0)
			sent++;
	}
	if (!f->waiting) {
		/* Nothing wanted: nothing to wait for. */
		free(f);
		done(w, 0, ctx);
		return 0;
	}
	if (err < 0) {
		if (!sent) {
			free(f);
			return err;
		}
		/* Those sent answer (and free f); the rest never will. */
		f->failed = true;
		f->waiting = sent;
	}
	return 0;
}

/* --- one decision's writes --- */

/* Atomic on the server: merges with what other gateways wrote since the
 * fetch (see store_redis.h), sets each key's expiry, and appends passes
 * and traps whose end moved later to the stream (a delivery counted on a
 * pass is not news for the other gateways' sets).
 * KEYS: trap, pass, triplet, stream, and (a write named once, that adds
 * deliveries or sessions) its name's key: a write sent again under the
 * same name (the connection went before its answer came) adds them
 * once.
 * ARGV: dirty ("TPG" as 0/1), gateway, retry_window, trap CIDR, pass
 * CIDR; trap since, expires; pass since, expires, refreshed, deliveries,
 * sessions, and the deliveries and sessions added; triplet first, last,
 * attempts, awaiting. */
static const char apply_script[] =
        "local d = ARGV[1]\n"
        "if KEYS[5] and not redis.call('SET', KEYS[5], '1', 'NX', 'EX',\n"
        "                               '86400') then\n"
        "  ARGV[13], ARGV[14] = '0', '0'\n"
        "end\n"
        "local function n(x) return string.format('%.0f', x) end\n"
        "local function get(key, field)\n"
        "  local v = redis.call('HGET', key, field)\n"
        "  return v and tonumber(v)\n"
        "end\n"
        "local function client(key, kind, cidr, since, exp, ref, dl, ss,\n"
        "                      add_dl, add_ss)\n"
        "  local os, oe = get(key, 'since'), get(key, 'expires')\n"
        "  local grew = true\n"
        "  if os and oe and oe >= os then\n"
        "    grew = exp > oe\n"
        "    since = math.min(os, since)\n"
        "    exp = math.max(oe, exp)\n"
        "    ref = math.max(get(key, 'refreshed') or 0, ref)\n"
        "    dl = (get(key, 'deliveries') or 0) + add_dl\n"
        "    ss = (get(key, 'sessions') or 0) + add_ss\n"
        "  end\n"
        "  redis.call('HSET', key, 'since', n(since), 'expires', n(exp),\n"
        "             'refreshed', n(ref), 'deliveries', n(dl),\n"
        "             'sessions', n(ss))\n"
        "  redis.call('EXPIREAT', key, n(exp))\n"
        "  if grew then\n"
        "    redis.call('XADD', KEYS[4], 'MAXLEN', '~', '1000000', '*',\n"
        "               'kind', kind, 'key', cidr, 'expires', n(exp),\n"
        "               'by', ARGV[2])\n"
        "  end\n"
        "end\n"
        "if string.sub(d, 1, 1) == '1' then\n"
        "  client(KEYS[1], 'trap', ARGV[4], tonumber(ARGV[6]),\n"
        "         tonumber(ARGV[7]), 0, 0, 0, 0, 0)\n"
        "end\n"
        "if string.sub(d, 2, 2) == '1' then\n"
        "  client(KEYS[2], 'pass', ARGV[5], tonumber(ARGV[8]),\n"
        "         tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11]),\n"
        "         tonumber(ARGV[12]), tonumber(ARGV[13]), tonumber(ARGV[14]))\n"
        "end\n"
        "if string.sub(d, 3, 3) == '1' then\n"
        "  local k = KEYS[3]\n"
        "  local first, last = tonumber(ARGV[15]), tonumber(ARGV[16])\n"
        "  local att = tonumber(ARGV[17])\n"
        "  local of, ol = get(k, 'first'), get(k, 'last')\n"
        "  if of and ol and ol >= of then\n"
        "    first = math.min(of, first)\n"
        "    last = math.max(ol, last)\n"
        "    att = math.max(get(k, 'attempts') or 0, att)\n"
        "  end\n"
        "  redis.call('HSET', k, 'first', n(first), 'last', n(last),\n"
        "             'attempts', n(att), 'awaiting', ARGV[18])\n"
        "  redis.call('EXPIREAT', k, n(last + tonumber(ARGV[3])))\n"
        "end\n"
        "return 'OK'\n";
static struct redis_script apply_cached = REDIS_SCRIPT(apply_script);

struct apply {
	store_redis_applied_fn *done;
	void *ctx;
};

static void
on_applied(struct redisReply *reply, void *ctx)
{
	struct apply *a = ctx;
	int err = !reply                             ? -EIO
	          : reply->type == REDIS_REPLY_ERROR ? -EPROTO
	                                             : 0;

	a->done(err, a->ctx);
	free(a);
}

/* The number as text into one of the argument buffers. */
static const char *
num(char (*buf)[24], int *used, int64_t v)
{
	snprintf(buf[*used], sizeof(*buf), "%lld", (long long)v);
	return buf[(*used)++];
}

/* One write sent: script's (its words after the script) or, script
 * NULL, a command (lens: NULL for C strings); done told its outcome once
 * (on_applied). */
static int
send_write(struct rconn *c, struct redis_script *script, int argc,
           const char **argv, const size_t *lens, store_redis_applied_fn *done,
           void *ctx)
{
	struct apply *a = malloc(sizeof(*a));
	int r;

	if (!a)
		return -ENOMEM;
	*a = (struct apply){done, ctx};
	r = script ? redis_script_eval(c, script, on_applied, a, argc, argv,
	                               lens)
	           : rconn_command(c, on_applied, a, argc, argv, lens);
	if (r < 0)
		free(a);
	return r;
}

int
store_redis_apply(struct rconn *c, const char *prefix,
                  const struct grey_records *before,
                  const struct grey_records *after, uint32_t retry_window_sec,
                  const char *gateway, const char *once,
                  store_redis_applied_fn *done, void *ctx)
{
	char keys[5][STORE_REDIS_KEY_MAX], nums[16][24], cidr[2][64];
	char dirty[4] = {after->trap_dirty ? '1' : '0',
	                 after->pass_dirty ? '1' : '0',
	                 after->triplet_dirty ? '1' : '0', 0};
	const struct store_client *p = &after->pass, *t = &after->trap;
	const struct store_triplet *g = &after->triplet;
	/* What this decision added to a pass record it found (one of
	 * another key, a trusted client's network's, is not this one) */
	bool found = before->pass_found == STORE_FOUND &&
	             !memcmp(&before->pass_key, &after->pass_key,
	                     sizeof(after->pass_key));
	int64_t add_dl = found ? (int64_t)p->deliveries - before->pass.deliveries
	                       : p->deliveries;
	int64_t add_ss = found ? (int64_t)p->sessions - before->pass.sessions
	                       : p->sessions;
	const char *argv[1 + 5 + 18];
	int used = 0, nkeys = 4;

	if (!after->trap_dirty && !after->pass_dirty && !after->triplet_dirty) {
		done(0, ctx);
		return 0;
	}
	if (store_redis_client_key(prefix, STORE_TRAP, &after->trap_key,
	                           keys[0]) < 0 ||
	    store_redis_client_key(prefix, STORE_PASS, &after->pass_key,
	                           keys[1]) < 0 ||
	    store_redis_triplet_key(prefix, &after->triplet_key, after->sender,
	                            after->rcpt, keys[2]) < 0 ||
	    snprintf(keys[3], sizeof(keys[3]), "%sstream", prefix) >=
	            (int)sizeof(keys[3]))
		return -ENAMETOOLONG;
	/* (only what adds up needs its name remembered) */
	if (once && after->pass_dirty && (add_dl > 0 || add_ss > 0)) {
		if (snprintf(keys[4], sizeof(keys[4]), "%sonce:%s", prefix,
		             once) >= (int)sizeof(keys[4]))
			return -ENAMETOOLONG;
		nkeys = 5;
	}
	argv[0] = nkeys == 5 ? "5" : "4";
	for (int i = 0; i < nkeys; i++)
		argv[1 + i] = keys[i];
	{
		const char **a = argv + 1 + nkeys;

		a[0] = dirty;
		a[1] = gateway;
		a[2] = num(nums, &used, retry_window_sec);
		a[3] = grey_client_format(&after->trap_key, cidr[0],
		                          sizeof(cidr[0]));
		a[4] = grey_client_format(&after->pass_key, cidr[1],
		                          sizeof(cidr[1]));
		a[5] = num(nums, &used, t->since);
		a[6] = num(nums, &used, t->expires);
		a[7] = num(nums, &used, p->since);
		a[8] = num(nums, &used, p->expires);
		a[9] = num(nums, &used, p->refreshed);
		a[10] = num(nums, &used, p->deliveries);
		a[11] = num(nums, &used, p->sessions);
		a[12] = num(nums, &used, add_dl);
		a[13] = num(nums, &used, add_ss);
		a[14] = num(nums, &used, g->first_seen);
		a[15] = num(nums, &used, g->last_seen);
		a[16] = num(nums, &used, g->attempts);
		a[17] = num(nums, &used, g->awaiting);
	}
	return send_write(c, &apply_cached, 1 + nkeys + 18, argv, NULL, done,
	                  ctx);
}

/* --- run-time allow entries --- */

/* KEYS: the entry, the stream. ARGV: expires (0: never; 1, that is
 * GREY_ALLOW_REMOVED: removed), comment, gateway, CIDR, "nx" (only if the
 * store lacks the entry) or "". Returns OK (written) or KEPT. A removal
 * stays 30 days as a mark, so that a gateway that was away and still
 * holds the entry does not write it back ("nx" finds the mark), and a
 * rebuild removes it too. */
static const char allow_script[] =
        "if ARGV[5] == 'nx' and redis.call('EXISTS', KEYS[1]) == 1 then\n"
        "  return 'KEPT'\n"
        "end\n"
        "redis.call('HSET', KEYS[1], 'expires', ARGV[1], 'comment', "
        "ARGV[2], 'by', ARGV[3])\n"
        "if ARGV[1] == '1' then\n"
        "  redis.call('EXPIRE', KEYS[1], 2592000)\n"
        "elseif tonumber(ARGV[1]) > 0 then\n"
        "  redis.call('EXPIREAT', KEYS[1], ARGV[1])\n"
        "else\n"
        "  redis.call('PERSIST', KEYS[1])\n"
        "end\n"
        "redis.call('XADD', KEYS[2], 'MAXLEN', '~', '1000000', '*', "
        "'kind', 'allow', 'key', ARGV[4], 'expires', ARGV[1], 'comment', "
        "ARGV[2], 'by', ARGV[3])\n"
        "return 'OK'\n";
static struct redis_script allow_cached = REDIS_SCRIPT(allow_script);

/* The allow script's words into argv (8), the buffers the caller's (each of its
 * own: key and stream STORE_REDIS_KEY_MAX, cidr 64, exp 24 bytes). Return: 0 or
 * -ENAMETOOLONG. */
static int
allow_words(const char *prefix, const struct grey_client *net, int64_t expires,
            const char *comment, const char *gateway, bool if_absent, char *key,
            char *stream, char *cidr, char *exp, const char **argv)
{
	grey_client_format(net, cidr, 64);
	if (snprintf(key, STORE_REDIS_KEY_MAX, "%sallow:%s", prefix, cidr) >=
	            STORE_REDIS_KEY_MAX ||
	    snprintf(stream, STORE_REDIS_KEY_MAX, "%sstream", prefix) >=
	            STORE_REDIS_KEY_MAX)
		return -ENAMETOOLONG;
	snprintf(exp, 24, "%lld", (long long)expires);
	argv[0] = "2";
	argv[1] = key;
	argv[2] = stream;
	argv[3] = exp;
	argv[4] = comment;
	argv[5] = gateway;
	argv[6] = cidr;
	argv[7] = if_absent ? "nx" : "";
	return 0;
}

int
store_redis_allow(struct rconn *c, const char *prefix,
                  const struct grey_client *net, int64_t expires,
                  const char *comment, const char *gateway,
                  store_redis_applied_fn *done, void *ctx)
{
	char key[STORE_REDIS_KEY_MAX], stream[STORE_REDIS_KEY_MAX], cidr[64];
	char exp[24];
	const char *argv[8];
	int r = allow_words(prefix, net, expires, comment, gateway, false, key,
	                    stream, cidr, exp, argv);

	return r < 0 ? r
	             : send_write(c, &allow_cached, 8, argv, NULL, done, ctx);
}

struct allow_if_absent {
	store_redis_written_fn *done;
	void *ctx;
};

static void
on_allow_if_absent(struct redisReply *reply, void *ctx)
{
	struct allow_if_absent *a = ctx;

	if (!reply)
		a->done(-EIO, false, a->ctx);
	else if (reply->type != REDIS_REPLY_STATUS &&
	         reply->type != REDIS_REPLY_STRING)
		a->done(-EPROTO, false, a->ctx);
	else
		a->done(0, strcmp(reply->str, "KEPT") != 0, a->ctx);
	free(a);
}

int
store_redis_allow_if_absent(struct rconn *c, const char *prefix,
                            const struct grey_client *net, int64_t expires,
                            const char *comment, const char *gateway,
                            store_redis_written_fn *done, void *ctx)
{
	char key[STORE_REDIS_KEY_MAX], stream[STORE_REDIS_KEY_MAX], cidr[64];
	char exp[24];
	const char *argv[8];
	struct allow_if_absent *a;
	int r = allow_words(prefix, net, expires, comment, gateway, true, key,
	                    stream, cidr, exp, argv);

	if (r < 0)
		return r;
	a = malloc(sizeof(*a));
	if (!a)
		return -ENOMEM;
	*a = (struct allow_if_absent){done, ctx};
	r = redis_script_eval(c, &allow_cached, on_allow_if_absent, a, 8, argv,
	                      NULL);
	if (r < 0)
		free(a);
	return r;
}

/* --- the gateways' report figures --- */

int
store_redis_put_report(struct rconn *c, const char *prefix, const char *gateway,
                       const void *figures, size_t len, int64_t updated,
                       store_redis_applied_fn *done, void *ctx)
{
	char key[STORE_REDIS_KEY_MAX], when[24];
	const char *argv[] = {"HSET", key, "figures", figures, "updated", when};
	size_t lens[6];
	int n = snprintf(key, sizeof(key), "%sreport:%s", prefix, gateway);

	if (n < 0 || (size_t)n >= sizeof(key) ||
	    strlen(gateway) > STORE_REDIS_GATEWAY_MAX)
		return -ENAMETOOLONG;
	snprintf(when, sizeof(when), "%lld", (long long)updated);
	for (size_t i = 0; i < 6; i++)
		lens[i] = i == 3 ? len : strlen(argv[i]);
	return send_write(c, NULL, 6, argv, lens, done, ctx);
}

/* --- forgetting a client --- */

/* KEYS: the pass, the trap (or the pass again), the stream, the trap
 * address's own pass (a trusted client's; or the pass again). ARGV: the
 * pass's CIDR, the trap's address ("" for none), gateway. Returns the
 * keys deleted. */
static const char forget_script[] =
        "local n = redis.call('DEL', KEYS[1])\n"
        "redis.call('XADD', KEYS[3], 'MAXLEN', '~', '1000000', '*', "
        "'kind', 'forget', 'key', ARGV[1], 'expires', '0', 'by', ARGV[3])\n"
        "if ARGV[2] ~= '' then\n"
        "  n = n + redis.call('DEL', KEYS[2], KEYS[4])\n"
        "  redis.call('XADD', KEYS[3], 'MAXLEN', '~', '1000000', '*', "
        "'kind', 'forget-trap', 'key', ARGV[2], 'expires', '0', 'by', "
        "ARGV[3])\n"
        "end\n"
        "return n\n";
static struct redis_script forget_cached = REDIS_SCRIPT(forget_script);

struct forget {
	store_redis_forgot_fn *done;
	void *ctx;
};

static void
on_forgot(struct redisReply *reply, void *ctx)
{
	struct forget *f = ctx;

	if (!reply)
		f->done(-EIO, 0, f->ctx);
	else if (reply->type != REDIS_REPLY_INTEGER)
		f->done(-EPROTO, 0, f->ctx);
	else
		f->done(0, (int)reply->integer, f->ctx);
	free(f);
}

int
store_redis_forget(struct rconn *c, const char *prefix,
                   const struct grey_client *pass_key,
                   const struct grey_client *trap_key, const char *gateway,
                   store_redis_forgot_fn *done, void *ctx)
{
	char keys[4][STORE_REDIS_KEY_MAX], cidr[64], addr[64] = "";
	const char *argv[] = {"4",     keys[0], keys[1], keys[2],
	                      keys[3], cidr,    addr,    gateway};
	struct forget *f;
	int r;

	grey_client_format(pass_key, cidr, sizeof(cidr));
	if (trap_key)
		grey_client_format(trap_key, addr, sizeof(addr));
	if (store_redis_client_key(prefix, STORE_PASS, pass_key, keys[0]) < 0 ||
	    store_redis_client_key(prefix, STORE_TRAP,
	                           trap_key ? trap_key : pass_key,
	                           keys[1]) < 0 ||
	    snprintf(keys[2], sizeof(keys[2]), "%sstream", prefix) >=
	            (int)sizeof(keys[2]) ||
	    store_redis_client_key(prefix, STORE_PASS,
	                           trap_key ? trap_key : pass_key,
	                           keys[3]) < 0)
		return -ENAMETOOLONG;
	f = malloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	*f = (struct forget){done, ctx};
	r = redis_script_eval(c, &forget_cached, on_forgot, f, 8, argv, NULL);
	if (r < 0)
		free(f);
	return r;
}
