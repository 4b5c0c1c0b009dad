// SPDX-License-Identifier: GPL-2.0-or-later
/* The greylist's passes and traps (grey-int.h): a client trapped, passed
 * by its network or by its own address (trusted, or by its STARTTLS), a
 * live pass found and refreshed, the policy door's passes of its own.
 * From one attempt's records, no store I/O. */
#include <string.h>
#include <sys/socket.h>

#include "grey-int.h"

/* The trap key is the single address: one trapped host must not shut out
 * the rest of a provider's /24. */
int
grey_check_trapped(int64_t now, const struct grey_records *w,
	      struct grey_decision *out)
{
	out->client = w->trap_key;
	if (w->trap_found == STORE_FOUND && w->trap.expires > now) {
		out->expires = w->trap.expires;
		grey_decision_set(out, GREY_TRAP, GREY_REASON_TRAPPED);
		return 1;
	}
	return 0;
}

void
grey_trap_client(struct grey *grey, int64_t now, struct grey_records *w,
	    struct grey_decision *out)
{
	w->trap = (struct store_client){.since = now,
					.expires = now + grey->cfg.trap_ttl_sec};
	w->trap_dirty = true;
	out->client = w->trap_key;
	out->expires = w->trap.expires;
	grey_decision_set(out, GREY_TRAP, GREY_REASON_TRAPPED);
}

/* A client key as the door's own passes keep it. */
static void
door_key(const struct grey_client *c, uint8_t key[SEEN_KEY_LEN])
{
	key[0] = c->family;
	memcpy(key + 1, c->bytes, 16);
}

/* Is key a trusted client's pass (issue 56): its address alone where
 * passes are kept by network? It lasts trust_ttl and is never
 * refreshed: the client is judged again by DNS as it is then. (Where
 * client_prefix is the whole address, every pass is kept so: a trusted
 * one is refreshed as any.) */
static bool
trust_pass(const struct grey *grey, const struct grey_client *key)
{
	uint8_t network = key->family == AF_INET ? grey->cfg.prefix4
	                                         : grey->cfg.prefix6;
	uint8_t whole = key->family == AF_INET ? 32 : 128;

	return grey->cfg.trust_ttl_sec && key->family != GREY_FAMILY_POOL &&
	       key->prefix >= whole && network < whole;
}

/* The client passed: its network's pass written (and so the gateway's
 * sets and tarpit pass it), unless the policy door decided it and the
 * admin did not say its passes are the gateway's: then the door keeps
 * the pass for itself, in memory (issue 55: any local user who reached
 * the door put a chosen /24 in the kernel's pass set for 35 days). */
void
grey_pass_client(struct grey *grey, int64_t now, enum grey_path path,
	    enum grey_reason reason, struct grey_records *w,
	    struct grey_decision *out)
{
	struct store_client *rec = &w->pass;

	if (path == GREY_PATH_POLICY && !grey->cfg.door_passes_gateway) {
		uint8_t key[SEEN_KEY_LEN];

		door_key(&w->pass_key, key);
		(void)seen_table_add(grey->door_passes, key, now);
		out->client = w->pass_key;
		out->expires = 0; /* (no set holds it) */
		grey_decision_set(out, GREY_PASS, reason);
		grey->counters.passed++;
		return;
	}

	if (w->pass_found != STORE_FOUND || rec->expires <= now) {
		memset(rec, 0, sizeof(*rec));
		rec->since = now;
	}
	rec->expires = now + (reason == GREY_REASON_TRUSTED &&
	                              trust_pass(grey, &w->pass_key)
	                              ? grey->cfg.trust_ttl_sec
	                              : grey->cfg.pass_ttl_sec);
	rec->refreshed = now;
	w->pass_dirty = true;
	out->client = w->pass_key;
	out->expires = rec->expires;
	grey_decision_set(out, GREY_PASS, reason);
	grey->counters.passed++;
}

/* The client passed by its own address alone where passes are kept by
 * network (set trust4/trust6): its record starts afresh, the network's,
 * fetched, is not this one. */
void
grey_pass_own(struct grey *grey, int64_t now, enum grey_path path,
         enum grey_reason reason, struct grey_records *w,
         struct grey_decision *out)
{
	const struct grey_client *own = &w->trap_key;
	uint8_t network = own->family == AF_INET ? grey->cfg.prefix4
	                                         : grey->cfg.prefix6;
	uint8_t whole = own->family == AF_INET ? 32 : 128;

	if (network < whole) {
		w->pass_key = *own;
		w->pass_found = 0;
		memset(&w->pass, 0, sizeof(w->pass));
	}
	grey_pass_client(grey, now, path, reason, w, out);
}

/* A client its DNS signals trust: passed by its own address, for
 * trust_ttl (issue 56: one trusted first contact passed its whole /24
 * for 35 days); a retry's pass stays its network's. Its record starts
 * afresh: the network's, fetched, is not this one. */
void
grey_pass_trusted(struct grey *grey, int64_t now, enum grey_path path,
             struct grey_records *w, struct grey_decision *out)
{
	grey->counters.passed_trusted++;
	if (grey->cfg.trust_ttl_sec)
		grey_pass_own(grey, now, path, GREY_REASON_TRUSTED, w, out);
	else
		grey_pass_client(grey, now, path, GREY_REASON_TRUSTED, w, out);
}

/* Is the client's pass live? */
bool
grey_live_pass(int64_t now, const struct grey_records *w)
{
	return w->pass_found == STORE_FOUND && w->pass.expires > now;
}

/* A client already passed: a delivery on the fast path refreshes it, at
 * most once per refresh_interval. Returns 1 if the client is passed. */
int
grey_check_passed(struct grey *grey, int64_t now, enum grey_path path,
	     bool delivered, struct grey_records *w, struct grey_decision *out)
{
	struct store_client *rec = &w->pass;

	out->client = w->pass_key;
	if (!grey_live_pass(now, w))
		return 0;
	out->expires = rec->expires;
	grey_decision_set(out, GREY_PASS, GREY_REASON_PASSED);
	if (!delivered)
		return 1;
	rec->deliveries++;
	if (path == GREY_PATH_POLICY)
		grey->counters.policy_passed++;
	else
		grey->counters.fastpath_deliveries++;
	if (now - rec->refreshed >= (int64_t)grey->cfg.refresh_interval_sec &&
	    !trust_pass(grey, &w->pass_key)) {
		rec->refreshed = now;
		rec->expires = now + grey->cfg.pass_ttl_sec;
		out->expires = rec->expires;
		grey_decision_set(out, GREY_REFRESH, GREY_REASON_FASTPATH_REFRESH);
		grey->counters.refreshed++;
	}
	w->pass_dirty = true;
	return 1;
}

/* A client the door passed for itself (door_passes_gateway off): passes
 * at the door, and nowhere else. Returns 1 if so. */
int
grey_door_passed(struct grey *grey, int64_t now, const struct grey_records *w,
	    struct grey_decision *out)
{
	uint8_t key[SEEN_KEY_LEN];

	if (grey->cfg.door_passes_gateway)
		return 0;
	door_key(&w->pass_key, key);
	if (!seen_table_find(grey->door_passes, key, now))
		return 0;
	(void)seen_table_add(grey->door_passes, key, now);
	out->client = w->pass_key;
	out->expires = 0;
	grey_decision_set(out, GREY_PASS, GREY_REASON_PASSED);
	grey->counters.policy_passed++;
	return 1;
}
