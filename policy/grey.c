// SPDX-License-Identifier: GPL-2.0-or-later
/* The greylist state machine: from a RCPT (or a STARTTLS) and the store's
 * state to a decision with its reason. Its parts: the lists
 * (grey_lists.c), passes and traps (grey_pass.c), the figures
 * (grey_stats.c), all on struct grey (grey-int.h). Time only ever comes
 * in as `now`. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "grey-int.h"

/* Messages (a sender and a recipient) waiting, kept at most (48 bytes
 * each): past that, the one seen longest ago is forgotten, and its delay
 * to delivery counts from its triplet's first attempt alone. */
#define GREY_MESSAGES_KEPT 8192
/* Clients the door passed for itself, kept at most (the oldest out). */
#define GREY_DOOR_PASSES_KEPT 4096

const uint32_t grey_delay_bounds[GREY_DELAY_BOUNDS] = {
	60, 300, 600, 900, 1200, 1800, 3600, 7200, 14400, 28800, 86400};

void
grey_config_defaults(struct grey_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->delay_sec = 300;
	cfg->retry_window_sec = 2 * 86400;
	cfg->pass_ttl_sec = 35 * 86400;
	cfg->refresh_interval_sec = 3600;
	cfg->trap_ttl_sec = 86400;
	cfg->prefix4 = 24;
	cfg->prefix6 = 64;
	cfg->trust_ttl_sec = 86400;
	cfg->tls_greylist = true;
}

struct grey *
grey_new(const struct grey_config *cfg)
{
	struct grey *grey = calloc(1, sizeof(*grey));

	if (!grey)
		return NULL;
	grey->unknown = unknown_tally_new();
	grey->messages =
	        seen_table_new(GREY_MESSAGES_KEPT, cfg->retry_window_sec);
	grey->door_passes =
	        seen_table_new(GREY_DOOR_PASSES_KEPT, cfg->pass_ttl_sec);
	if (!grey->unknown || !grey->messages || !grey->door_passes) {
		unknown_tally_free(grey->unknown);
		seen_table_free(grey->messages);
		seen_table_free(grey->door_passes);
		free(grey);
		return NULL;
	}
	grey->cfg = *cfg;
	return grey;
}

void
grey_free(struct grey *grey)
{
	if (!grey)
		return;
	free(grey->allow);
	free(grey->delays);
	grey_str_list_free(&grey->exempt);
	grey_str_list_free(&grey->traps);
	recipients_free(grey->valid);
	unknown_tally_free(grey->unknown);
	seen_table_free(grey->messages);
	seen_table_free(grey->door_passes);
	free(grey);
}

void
grey_set_config(struct grey *grey, const struct grey_config *cfg)
{
	grey->cfg = *cfg;
	seen_table_set_window(grey->messages, cfg->retry_window_sec);
	seen_table_set_window(grey->door_passes, cfg->pass_ttl_sec);
}

const struct grey_counters *
grey_get_counters(const struct grey *grey)
{
	return &grey->counters;
}

/* --- the decision, from one attempt's records (no store I/O) --- */

static uint8_t
key_prefix(const struct grey *grey, const struct grey_addr *addr)
{
	return addr->family == AF_INET ? grey->cfg.prefix4 : grey->cfg.prefix6;
}

static void
triplet_step(struct grey *grey, int64_t now, enum grey_path path,
	     uint32_t delay, enum grey_reason passed,
	     struct grey_records *w, struct grey_decision *out)
{
	struct store_triplet *t = &w->triplet;
	int64_t age = w->triplet_found == STORE_FOUND ? now - t->first_seen
						      : -1;

	/* An address's STARTTLS is counted apart: the report's triplets
	 * are its RCPTs'. */
	bool tls = passed == GREY_REASON_STARTTLS_RETRY;

	/* (greylisted: the key its line names is the STARTTLS's address) */
	if (tls) {
		out->client = w->triplet_key;
	} else {
		uint8_t key[SEEN_KEY_LEN];

		grey_message_key(w, key);
		(void)seen_table_add(grey->messages, key, now);
	}
	w->triplet_dirty = true;
	if (w->triplet_found != STORE_FOUND ||
	    age > (int64_t)grey->cfg.retry_window_sec || age < 0) {
		*t = (struct store_triplet){now, now, 1, 0};
		out->wait_sec = delay;
		grey_decision_set(out, GREY_GREYLIST, GREY_REASON_NEW);
		if (tls)
			grey->counters.tls_greylisted++;
		else
			grey->counters.greylisted_new++;
		return;
	}
	t->last_seen = now;
	if (++t->attempts == 2 && !tls)
		grey->counters.retried++;
	if (age < (int64_t)delay) {
		out->wait_sec = delay - (uint32_t)age;
		grey_decision_set(out, GREY_GREYLIST, GREY_REASON_EARLY_RETRY);
		grey->counters.greylisted_early++;
		return;
	}
	/* (the message's wait, across networks: its triplet's age if it
	 * came from this one alone) */
	out->delay_sec = tls ? (uint32_t)age : grey_message_waited(grey, w, now, age);
	if (!tls)
		grey->counters.passed_retry++;
	/* The delay to delivery: now, when this attempt is handed to the
	 * MTA or the MTA asked; else it ends with the triplet's next
	 * delivery on the fast path (note_retry). */
	if (grey->cfg.handoff || path == GREY_PATH_POLICY) {
		grey_count_delay(grey, out->delay_sec);
		if (!tls)
			grey_message_done(grey, w);
	} else {
		/* (a STARTTLS triplet's: its network's next STARTTLS on the
		 * fast path, the delivery the sensor cannot see, in TLS) */
		t->awaiting = STORE_AWAITING_DELIVERY;
	}
	/* A STARTTLS retry passes its address alone: no envelope is seen,
	 * so a STARTTLS again is all it proves (issue 56: a snowshoe block
	 * retried STARTTLS from each /24 soon enough to pass them all). */
	if (tls)
		grey_pass_own(grey, now, path, passed, w, out);
	else
		grey_pass_client(grey, now, path, passed, w, out);
}

/* A trusted client at the tarpit without the hand-off: this attempt
 * hears 451 all the same, and its next from this address passes (its
 * own pass); a pool's next comes from another server, so its triplet is
 * kept as anyone's and that retry passes by it, its network as a
 * retry's (issue 56: the trusted pass is the address's alone, and a
 * bank retrying from 1,536 addresses waited up to 21 hours). */
static void
trusted_unhanded(struct grey *grey, int64_t now, enum grey_path path,
		 uint32_t delay, enum grey_reason passed,
		 struct grey_records *w, struct grey_decision *out)
{
	triplet_step(grey, now, path, delay, passed, w, out);
	if (out->action != GREY_PASS)
		grey_pass_trusted(grey, now, path, w, out);
}

/* A greylisted triplet whose client passed (by it, or by another)
 * comes back on the fast path: it was retried all the same, and the
 * report must not count it as never retried; delivered, and awaiting
 * that since its pass, its delay to delivery ends here. */
static void
note_retry(struct grey *grey, int64_t now, struct grey_records *w,
	   bool delivered)
{
	struct store_triplet *t = &w->triplet;

	/* The message delivered, from whichever network: its delay is
	 * from its first attempt, if that still waits (issue 57: counted
	 * by the triplet that passed, a message delivered from another
	 * network was counted at the next one of the same sender and
	 * recipient from the first, days later; the month's report said
	 * a mean of 4 h where the mail waited 15 min). */
	if (delivered)
		grey_message_delivered(grey, now, w);
	if (w->triplet_found != STORE_FOUND)
		return;
	if (delivered && t->awaiting == STORE_AWAITING_DELIVERY) {
		t->awaiting = 0;
	} else if (t->attempts != 1 ||
		   now - t->first_seen > (int64_t)grey->cfg.retry_window_sec) {
		return;
	}
	if (t->attempts == 1) {
		t->attempts = 2;
		grey->counters.retried++;
	}
	t->last_seen = now;
	w->triplet_dirty = true;
}

/* The recipient as the admin's lists name it (w->rcpt is its hash
 * with privacy). */
static const char *
rcpt_seen(const struct grey *grey, const struct grey_records *w)
{
	return grey->cfg.privacy ? w->rcpt_seen : w->rcpt;
}

/* The delay a's triplet waits: the configured one, or longer for a
 * client its DNS signals call suspicious. */
static uint32_t
attempt_delay(const struct grey *grey, const struct grey_attempt *a)
{
	return a->delay_sec > grey->cfg.delay_sec ? a->delay_sec
						  : grey->cfg.delay_sec;
}

static void
on_rcpt(struct grey *grey, const struct grey_attempt *a,
	struct grey_records *w, struct grey_decision *out)
{
	int64_t now = a->now;
	enum grey_path path = a->path;
	/* Asked by the MTA: it delivers unless we say no. */
	bool delivered = (a->reply >= 200 && a->reply < 300) ||
			 path == GREY_PATH_POLICY;
	uint32_t delay = attempt_delay(grey, a);

	grey->counters.attempts++;
	if (path == GREY_PATH_POLICY)
		grey->counters.policy_attempts++;
	if (grey_allow_listed(grey, &a->client)) {
		grey_client_of(&a->client, 128, &out->client);
		grey_decision_set(out, GREY_ALLOWED, GREY_REASON_ALLOW_LIST);
		grey->counters.allow_listed++;
		return;
	}
	/* The fast path is the sensor's word (from the unprivileged child):
	 * it may refresh a passed client or trap it, never pass a client or
	 * touch one that is not passed (one that reached the MTA by a site's
	 * mark, or an allow entry made elsewhere, is not ours to decide). */
	if (path == GREY_PATH_FAST && !grey_live_pass(now, w)) {
		out->client = w->pass_key;
		grey_decision_set(out, GREY_ACTION_NONE, GREY_REASON_NONE);
		return;
	}
	if (grey_check_trapped(now, w, out) ||
	    grey_str_list_match(&grey->traps, rcpt_seen(grey, w))) {
		if (out->action != GREY_TRAP)
			grey_trap_client(grey, now, w, out);
		grey->counters.trapped++;
		return;
	}
	if (grey_check_passed(grey, now, path,
			 delivered && path != GREY_PATH_TARPIT, w, out)) {
		note_retry(grey, now, w, delivered && path != GREY_PATH_TARPIT);
		return;
	}
	if (path == GREY_PATH_POLICY && grey_door_passed(grey, now, w, out))
		return;
	/* An exempt recipient: the MTA asks for it alone, so it is let
	 * through and the client stays unpassed. At the tarpit it is
	 * greylisted like any other (a pass would open the client's /24 to
	 * every recipient), unless the session can be handed over unpassed
	 * (below). */
	if (path == GREY_PATH_POLICY &&
	    grey_str_list_match(&grey->exempt, rcpt_seen(grey, w))) {
		grey_decision_set(out, GREY_ALLOWED, GREY_REASON_RECIPIENT_EXEMPT);
		return;
	}
	/* At the tarpit, when the session can be handed to the MTA: handed
	 * unpassed, the exempt recipient is delivered and the others are
	 * greylisted as before, by the tarpit still between the two (its
	 * gate asks about each) or by an MTA that asks the door. */
	if (path == GREY_PATH_TARPIT && grey->cfg.handoff &&
	    grey_str_list_match(&grey->exempt, rcpt_seen(grey, w))) {
		grey_decision_set(out, GREY_ALLOWED, GREY_REASON_RECIPIENT_EXEMPT);
		return;
	}
	/* Refused at once at the tarpit, before any triplet is kept: a
	 * recipient that does not exist, a sender whose SPF fails or whose
	 * domain takes no mail where the site says so. */
	if (path == GREY_PATH_TARPIT && grey->valid &&
	    recipients_unknown(grey->valid, rcpt_seen(grey, w))) {
		grey_decision_set(out, GREY_REFUSE, GREY_REASON_UNKNOWN_RECIPIENT);
		grey->counters.refused_recipient++;
		(void)unknown_tally_add(grey->unknown, &a->client, now);
		return;
	}
	/* A client that guessed at recipients is suspicious: never
	 * trusted, and it waits longer. */
	if (grey->cfg.unknown_suspicious) {
		uint32_t n = unknown_tally_count(grey->unknown, &a->client, now);

		if (n >= grey->cfg.unknown_suspicious) {
			out->unknown_rcpts = n;
			if (grey->cfg.suspicious_delay_sec > delay)
				delay = grey->cfg.suspicious_delay_sec;
		}
	}
	if (path == GREY_PATH_TARPIT && a->refuse_spf) {
		grey_decision_set(out, GREY_REFUSE, GREY_REASON_SPF_FAIL);
		grey->counters.refused_spf++;
		return;
	}
	if (path == GREY_PATH_TARPIT &&
	    (a->refuse_sender == GREY_REASON_SENDER_DOMAIN ||
	     a->refuse_sender == GREY_REASON_SENDER_NULL_MX)) {
		grey_decision_set(out, GREY_REFUSE, a->refuse_sender);
		grey->counters.refused_sender_domain++;
		return;
	}
	/* Trusted by its DNS signals: passed now, as a retry would pass
	 * it; with the hand-off (or asked by the MTA) this very attempt is
	 * delivered, a delay of 0. */
	if (a->trusted && !out->unknown_rcpts && path != GREY_PATH_FAST) {
		if (grey->cfg.handoff || path == GREY_PATH_POLICY) {
			grey_count_delay(grey, 0);
			grey_pass_trusted(grey, now, path, w, out);
			return;
		}
		trusted_unhanded(grey, now, path, delay,
				 GREY_REASON_RETRY_PASSED, w, out);
		return;
	}
	triplet_step(grey, now, path, delay, GREY_REASON_RETRY_PASSED, w, out);
}

/* A session on the fast path reached EHLO: a visit from a passed client
 * refreshes its pass (at most once per refresh_interval), whether or not
 * its RCPTs can be seen: in TLS they cannot. */
static void
on_visit(struct grey *grey, int64_t now, struct grey_records *w,
	 struct grey_decision *out)
{
	struct store_client *rec = &w->pass;

	if (!w->want_pass)
		return;
	out->client = w->pass_key;
	if (!grey_live_pass(now, w))
		return;
	rec->sessions++;
	w->pass_dirty = true;
	grey->counters.fastpath_sessions++;
	out->expires = rec->expires;
	grey_decision_set(out, GREY_PASS, GREY_REASON_PASSED);
	if (now - rec->refreshed >= (int64_t)grey->cfg.refresh_interval_sec) {
		rec->refreshed = now;
		rec->expires = now + grey->cfg.pass_ttl_sec;
		out->expires = rec->expires;
		grey_decision_set(out, GREY_REFRESH, GREY_REASON_FASTPATH_REFRESH);
		grey->counters.refreshed++;
	}
}

static void
on_starttls(struct grey *grey, const struct grey_attempt *a,
	    struct grey_records *w, struct grey_decision *out)
{
	int64_t now = a->now;

	if (a->path == GREY_PATH_FAST) {
		struct store_triplet *t = &w->triplet;
		bool awaited = w->triplet_found == STORE_FOUND &&
		               t->awaiting == STORE_AWAITING_DELIVERY;

		/* Counted: what follows is hidden from the sensor. (An
		 * address passed alone has its own pass: own_pass_first.) */
		if (!w->want_pass || !grey_live_pass(now, w))
			return;
		grey->counters.fastpath_tls++;
		/* The address passed by its STARTTLS without the hand-off
		 * comes back: that session is the delivery, its delay the
		 * triplet's (issue 57: the report counted none) */
		if (awaited) {
			t->awaiting = 0;
			w->triplet_dirty = true;
			if (now >= t->first_seen &&
			    now - t->last_seen <= (int64_t)grey->cfg.retry_window_sec)
				grey_count_delay(grey, (uint32_t)(now - t->first_seen));
		}
		return;
	}
	/* Trapped or passed already: that is the answer. */
	if (!w->want_trap || grey_check_trapped(now, w, out) ||
	    grey_check_passed(grey, now, a->path, false, w, out))
		return;
	/* Strict: let it reach the MTA's TLS, passed by nothing; the MTA
	 * asks the policy door about each of its recipients. */
	if (grey->cfg.tls_strict) {
		grey_decision_set(out, GREY_ALLOWED, GREY_REASON_TLS_HANDED);
		grey->counters.tls_handed++;
		return;
	}
	/* Greylist: the address's STARTTLS is a triplet of its own; the
	 * session ends unanswered until its STARTTLS after the delay, which
	 * passes the address (and with the hand-off is delivered, in TLS).
	 * A bot that says STARTTLS once and never retries passes nothing. */
	if (grey->cfg.tls_greylist) {
		uint32_t delay = attempt_delay(grey, a);

		/* Trusted by what its connection says (the lookups): passed
		 * now, and with the hand-off delivered on this attempt. */
		if (a->trusted) {
			if (grey->cfg.handoff) {
				grey_count_delay(grey, 0);
				grey_pass_trusted(grey, now, a->path, w, out);
				return;
			}
			trusted_unhanded(grey, now, a->path, delay,
					 GREY_REASON_STARTTLS_RETRY, w, out);
			return;
		}
		triplet_step(grey, now, a->path, delay,
			     GREY_REASON_STARTTLS_RETRY, w, out);
		return;
	}
	grey_pass_client(grey, now, a->path, GREY_REASON_STARTTLS, w, out);
	/* With the hand-off this very attempt is delivered (in TLS, on
	 * its first attempt): a delay of 0, as the report must count it
	 * (issue 32: these passes were missing from its delay). Without,
	 * the session ends unanswered and its delivery is not seen. */
	if (grey->cfg.handoff && out->action == GREY_PASS)
		grey_count_delay(grey, 0);
}

void
grey_records_hide(const struct grey_config *cfg, struct grey_records *w)
{
	char hash[PRIVACY_HASH_SIZE];

	if (!cfg->privacy)
		return;
	/* (the null sender is no one's address: a bounce's triplet says
	 * "<>" in list grey, as without privacy) */
	if (w->sender[0]) {
		privacy_hash(cfg->privacy_key, w->sender, hash);
		memcpy(w->sender, hash, sizeof(hash));
	}
	privacy_hash(cfg->privacy_key, w->rcpt, hash);
	memcpy(w->rcpt, hash, sizeof(hash));
}

void
grey_records_prepare(const struct grey *grey, const struct grey_attempt *a,
		     struct grey_records *w)
{
	/* Field by field, not the whole 700 bytes each decision: the
	 * address buffers are written when needed, and a record is read
	 * only once found. */
	w->want_trap = w->want_pass = w->want_triplet = w->want_own = false;
	w->trap_found = w->pass_found = w->triplet_found = w->own_found = 0;
	w->trap_dirty = w->pass_dirty = w->triplet_dirty = false;
	w->sender[0] = w->rcpt[0] = 0;
	grey_client_of(&a->client, 128, &w->trap_key);
	grey_client_of(&a->client, key_prefix(grey, &a->client), &w->pass_key);
	/* (a STARTTLS is greylisted by the address that says it: its
	 * network's neighbours are not its retries, issue 56) */
	if (a->kind == GREY_ATTEMPT_RCPT && a->pooled)
		grey_pool_client(&w->triplet_key);
	else if (a->kind == GREY_ATTEMPT_STARTTLS)
		w->triplet_key = w->trap_key;
	else
		w->triplet_key = w->pass_key;
	if (grey_allow_listed(grey, &a->client))
		return;
	switch (a->kind) {
	case GREY_ATTEMPT_RCPT:
		/* Over-long addresses are cut: they still get a stable key. */
		if (grey_normalize_sender(a->sender ? a->sender : "", w->sender,
					  sizeof(w->sender)) < 0)
			w->sender[0] = 0;
		if (grey_normalize_rcpt(a->rcpt ? a->rcpt : "", w->rcpt,
					sizeof(w->rcpt)) < 0)
			w->rcpt[0] = 0;
		if (grey->cfg.privacy)
			memcpy(w->rcpt_seen, w->rcpt, sizeof(w->rcpt_seen));
		grey_records_hide(&grey->cfg, w);
		w->want_trap = w->want_pass = w->want_triplet = true;
		break;
	case GREY_ATTEMPT_STARTTLS:
		if (a->path == GREY_PATH_FAST) {
			w->want_pass = true;
			/* (its own STARTTLS triplet, awaiting this delivery
			 * when it passed without the hand-off) */
			if (grey->cfg.tls_greylist && !grey->cfg.handoff) {
				w->want_triplet = true;
				memcpy(w->rcpt, GREY_STARTTLS_RCPT,
				       sizeof(GREY_STARTTLS_RCPT));
			}
			break;
		}
		/* Nothing to decide when STARTTLS passes nobody. */
		w->want_trap = w->want_pass = grey->cfg.tls_pass ||
					      grey->cfg.tls_strict ||
					      grey->cfg.tls_greylist;
		if (grey->cfg.tls_greylist) {
			w->want_triplet = true;
			memcpy(w->rcpt, GREY_STARTTLS_RCPT,
			       sizeof(GREY_STARTTLS_RCPT));
		}
		break;
	case GREY_ATTEMPT_VISIT:
		w->want_pass = true;
		break;
	}
	w->want_own = w->want_pass && w->pass_key.prefix < w->trap_key.prefix;
}

/* The address's own pass, live where its network's is not, is the pass
 * the decision reads and writes (issue 56: a trusted address was
 * greylisted by the policy door, its sessions uncounted). */
static void
own_pass_first(int64_t now, struct grey_records *w)
{
	if (!w->want_own || grey_live_pass(now, w) || w->own_found != STORE_FOUND ||
	    w->own.expires <= now)
		return;
	w->pass_key = w->trap_key;
	w->pass = w->own;
	w->pass_found = STORE_FOUND;
}

int
grey_decide_records(struct grey *grey, const struct grey_attempt *a,
		    struct grey_records *w, struct grey_decision *out)
{
	memset(out, 0, sizeof(*out));
	own_pass_first(a->now, w);
	switch (a->kind) {
	case GREY_ATTEMPT_RCPT:
		on_rcpt(grey, a, w, out);
		return 0;
	case GREY_ATTEMPT_STARTTLS:
		on_starttls(grey, a, w, out);
		return 0;
	case GREY_ATTEMPT_VISIT:
		on_visit(grey, a->now, w, out);
		return 0;
	}
	return -EINVAL;
}
