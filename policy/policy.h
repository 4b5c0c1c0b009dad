/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The policy core: triplet normalisation, the greylist state machine, the
 * static allow list, and the records it decides from (store/ keeps them:
 * LMDB, Redis, memory). It knows nothing of packets, netlink nor of the
 * store; time always comes in as an argument. */
#ifndef GREYGATE_POLICY_H
#define GREYGATE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "must_check.h"

#include "iprange.h"
#include "privacy.h"

/* RFC 5321: a path is at most 256 octets; one more for the NUL. */
#define GREY_ADDR_MAX 257

/* An IP address as seen on the wire. */
struct grey_addr {
	uint8_t family;    /* AF_INET or AF_INET6 */
	uint8_t bytes[16]; /* network order; IPv4 uses the first 4 */
};

/* What greylisting keys a client by: its address cut to a prefix. */
struct grey_client {
	uint8_t family;    /* AF_INET or AF_INET6 (or GREY_FAMILY_POOL) */
	uint8_t prefix;    /* bits kept: 24, 32, 64, 128, ... */
	uint8_t bytes[16]; /* the address with the bits past prefix zeroed */
};

/* The client part of a pooled triplet (issue 31): a sender whose SPF
 * passed for its own domain is keyed by that domain, whichever server
 * of its pool sends, so the retry from another network finds it. The
 * sender's address names the domain, so the key needs no more: prefix
 * 0, bytes zero, written "spf". Never a pass's or a trap's key (those
 * stay the client's network and address). Not an AF_ value. */
#define GREY_FAMILY_POOL 0xfe

/* Which way a connection went, as the sensor tells it. */
enum grey_path {
	GREY_PATH_UNKNOWN = 0, /* replay of a capture: decide from state */
	GREY_PATH_TARPIT = 1,  /* redirected to the tarpit */
	GREY_PATH_FAST = 2,    /* reached the MTA directly */
	GREY_PATH_POLICY = 3   /* the MTA asks (the policy door) before it
				  answers the RCPT: greylisting as postgrey
				  does it, one recipient at a time */
};

enum grey_action {
	GREY_ACTION_NONE = 0,  /* nothing to do (e.g. fast path, not passed) */
	GREY_GREYLIST = 1,     /* keep the client in the tarpit */
	GREY_PASS = 2,         /* put the client key in the pass set */
	GREY_REFRESH = 3,      /* extend the client key's pass */
	GREY_TRAP = 4,         /* client hit a greytrap (or is still trapped) */
	GREY_ALLOWED = 5,      /* static allow list: nothing to do */
	GREY_REFUSE = 6        /* refused at once (550): no triplet kept */
};

enum grey_reason {
	GREY_REASON_NONE = 0,
	GREY_REASON_NEW,
	GREY_REASON_EARLY_RETRY,
	GREY_REASON_RETRY_PASSED,
	GREY_REASON_FASTPATH_REFRESH,
	GREY_REASON_ALLOW_LIST,
	GREY_REASON_RECIPIENT_EXEMPT,
	GREY_REASON_STARTTLS,
	GREY_REASON_TRAPPED,
	GREY_REASON_PASSED, /* already passed, no refresh due yet */
	GREY_REASON_TLS_HANDED, /* STARTTLS with tls_pass = strict: handed
				   to the MTA in TLS unpassed; the MTA asks
				   the policy door per recipient */
	GREY_REASON_TRUSTED, /* its DNS signals trusted it (issue 31) */
	GREY_REASON_SPF_FAIL, /* SPF fail, with [signals] refuse_spf_fail */
	GREY_REASON_UNKNOWN_RECIPIENT, /* not in [greylist] valid_recipients */
	GREY_REASON_STARTTLS_RETRY, /* STARTTLS with tls_pass = greylist: its
				       network said it again, after the
				       delay */
	/* The sender's domain takes no mail, with [signals]
	 * refuse_unknown_sender_domain: it has no MX, A nor AAAA (or no
	 * such name), or a null MX (RFC 7505) */
	GREY_REASON_SENDER_DOMAIN,
	GREY_REASON_SENDER_NULL_MX,
};

struct grey_config {
	uint32_t delay_sec;            /* first sight to earliest pass (300) */
	uint32_t retry_window_sec;     /* first sight to latest pass (2 d) */
	uint32_t pass_ttl_sec;         /* how long a pass lasts (35 d) */
	uint32_t refresh_interval_sec; /* least time between refreshes (1 h) */
	uint32_t trap_ttl_sec;         /* how long a trap lasts (24 h) */
	uint8_t prefix4;               /* IPv4 client key bits (24) */
	uint8_t prefix6;               /* IPv6 client key bits (64) */
	bool tls_pass;                 /* STARTTLS at the tarpit passes (on) */
	bool tls_strict;               /* ... or is handed over unpassed */
	bool tls_greylist;             /* ... or is greylisted by the
					  client's network (its triplet:
					  <>, GREY_STARTTLS_RCPT) */
	bool handoff;                  /* a pass at the tarpit delivers (the
					  hand-off): the delay to delivery
					  ends there, not at the next
					  fast-path delivery */
	uint32_t unknown_suspicious;   /* unknown recipients from one address
					  within the hour that make it
					  suspicious (0: never) */
	uint32_t suspicious_delay_sec; /* ... its delay then, when longer
					  than delay_sec */
	uint32_t trust_ttl_sec;        /* a client its DNS signals trust
					  is passed by its address alone
					  (/32, /128), this long, never
					  refreshed: then judged again
					  (issue 56); 0: by its network,
					  for pass_ttl, as a retry */
	bool door_passes_gateway;      /* a pass decided at the policy door
					  passes the client's network for
					  the gateway too (its sets, the
					  tarpit); off: that message alone,
					  as postgrey's answer reached only
					  the MTA that asked */
	bool privacy;                  /* senders and recipients stored as
					  keyed hashes (privacy.h) */
	uint8_t privacy_key[PRIVACY_KEY_LEN]; /* ... under this key */
};

/* A decision and what the caller needs to act on it and log it. */
struct grey_decision {
	enum grey_action action;
	enum grey_reason reason;
	struct grey_client client; /* the key the action applies to */
	int64_t expires;           /* PASS/REFRESH/TRAP: when it ends */
	uint32_t wait_sec;         /* GREYLIST: seconds until it may pass */
	uint32_t delay_sec;        /* PASS by retry: first sight to pass */
	uint32_t unknown_rcpts;    /* RCPT: the client's unknown recipients
				      within the hour, when they made it
				      suspicious (0: they did not) */
};

/* Counters for the report. */
struct grey_counters {
	uint64_t attempts;          /* RCPT events decided */
	uint64_t greylisted_new;    /* first sights */
	uint64_t greylisted_early;  /* retries before the delay */
	uint64_t retried;           /* greylisted triplets that came back */
	uint64_t passed;            /* passes, all reasons */
	uint64_t passed_retry;      /* passes by a retry after the delay */
	uint64_t refreshed;         /* fast-path refreshes */
	uint64_t fastpath_deliveries; /* RCPTs accepted on the fast path */
	uint64_t allow_listed;      /* events from allow-listed clients */
	uint64_t trapped;           /* events from trapped clients */
	/* (kept in this order: the saved figures are read field by field) */
	uint64_t fastpath_sessions; /* passed clients' sessions on the fast
				       path (to EHLO) */
	uint64_t fastpath_tls;      /* of those, in TLS: their recipients,
				       deliveries and retries are unseen */
	uint64_t policy_attempts;   /* RCPTs the MTA asked about through
				       the policy door (in attempts too) */
	uint64_t policy_passed;     /* of those, from passed clients */
	uint64_t tls_handed;        /* STARTTLS sessions handed over unpassed
				       (tls_pass = strict) */
	uint64_t passed_trusted;    /* passes on the first attempt: the
				       client's DNS signals trusted it */
	uint64_t refused_spf;       /* RCPTs refused for SPF fail */
	uint64_t refused_recipient; /* RCPTs refused: unknown recipient */
	uint64_t tls_greylisted;    /* addresses greylisted at STARTTLS
				       (tls_pass = greylist): first sights
				       (their passes are in passed, not in
				       passed_retry) */
	uint64_t refused_sender_domain; /* RCPTs refused: the sender's
	                                   domain takes no mail */
};

/* --- the records an attempt reads and writes (store/ keeps them) --- */

/* A triplet's record. */
struct store_triplet {
	int64_t first_seen; /* first attempt (epoch seconds) */
	int64_t last_seen;  /* latest attempt */
	uint32_t attempts;  /* attempts seen */
	uint32_t awaiting;  /* STORE_AWAITING_DELIVERY: passed, its delivery
			       not yet seen (where the record had padding) */
};
#define STORE_AWAITING_DELIVERY 0x44454c56u /* "DELV": not padding */

/* A passed or trapped client's record. */
struct store_client {
	int64_t since;        /* when it was passed or trapped */
	int64_t expires;      /* when it ends */
	int64_t refreshed;    /* last refresh (pass only) */
	uint32_t deliveries;  /* fast-path deliveries seen (pass only) */
	uint32_t sessions;    /* fast-path sessions seen (pass only; where
				 the record had padding: same size) */
};

enum store_table { STORE_PASS = 0, STORE_TRAP = 1 };

/* A record read and there (the store's get functions' value, and each
 * record's _found in struct grey_records). */
#define STORE_FOUND 1

/* --- the greylist --- */

struct grey;

/* grey_config_defaults - the defaults of DESIGN.md. */
void grey_config_defaults(struct grey_config *cfg);

/*
 * grey_new - a greylist: the decision over the records it is given (the
 * store, in store/, reads and writes them).
 * @cfg: copied
 * Return: the greylist, or NULL (ENOMEM).
 */
struct grey *grey_new(const struct grey_config *cfg);
void grey_free(struct grey *grey);

/* grey_allow_set - the allow list, replacing the one before: n ranges
 * sorted by family then first address, none overlapping (as the daemon's
 * merge makes them; copied). Looked up in O(log n).
 * Return: 0, -EINVAL (not sorted, or overlapping), -ENOMEM. */
int grey_allow_set(struct grey *grey, const struct ip_range *ranges,
		   size_t n);
/* grey_set_config - new settings (a reload); the store is kept. */
void grey_set_config(struct grey *grey, const struct grey_config *cfg);
/* grey_recipients_clear - empty the exempt and trap recipient lists. */
void grey_recipients_clear(struct grey *grey);
/* grey_exempt_add - a recipient (full address, or "postmaster@" for any
 * domain) that is never to be greylisted where the MTA asks for it alone
 * (the policy door). At the tarpit it is greylisted like any other until
 * the hand-off can deliver it alone, on its own session: passing the
 * client would open its whole network to every recipient.
 * Return: 0, -ENOMEM, -EINVAL. */
int grey_exempt_add(struct grey *grey, const char *rcpt);
/* grey_trap_add - a greytrap recipient address. Return: 0, -ENOMEM. */
int grey_trap_add(struct grey *grey, const char *rcpt);
/* grey_set_valid_recipients - the recipients that exist (taken; NULL:
 * none checked); the ones before are freed. At the tarpit an unknown
 * one is refused before greylisting (policy/recipients.h). */
struct recipients;
void grey_set_valid_recipients(struct grey *grey, struct recipients *r);

/* The recipient of an address's STARTTLS triplet (tls_pass = greylist):
 * no path the SMTP parser reads holds a '>'. */
#define GREY_STARTTLS_RCPT "<starttls>"

/* What a client did that greylisting decides on. */
enum grey_attempt_kind {
	GREY_ATTEMPT_RCPT = 0,     /* RCPT TO: a triplet */
	GREY_ATTEMPT_STARTTLS = 1, /* STARTTLS: at the tarpit with tls_pass
				      on, a pass (greylist: a triplet of
				      the network's); on the fast path,
				      counted */
	GREY_ATTEMPT_VISIT = 2     /* a session reached EHLO on the fast path:
				      a passed client's visit refreshes its
				      pass, seen or not what it delivers (in
				      TLS nothing after STARTTLS is) */
};

/* One attempt, wherever it was seen (the tarpit, the sensor on the fast
 * path, a capture replayed, the simulator): the one thing every caller
 * hands the one decision function. */
/* A decision's signals as text, at most (with its NUL). */
#define GREY_SIGNALS_MAX 384

struct grey_attempt {
	enum grey_attempt_kind kind;
	int64_t now;             /* the decider's clock (epoch seconds) */
	struct grey_addr client; /* the client's address */
	const char *helo;        /* what it said to HELO/EHLO ("" if none) */
	const char *sender;      /* MAIL FROM without <> ("" for <>) */
	const char *rcpt;        /* RCPT TO without <> (RCPT only) */
	enum grey_path path;     /* where the connection went */
	int reply;               /* fast path: the MTA's reply, 0 unknown */
	bool tls;                /* the session was in TLS */
	/* What DNS said of the client (issue 31): trusted, pass it now;
	 * signals, what was found, for the log ("" or NULL: nothing;
	 * longer than GREY_SIGNALS_MAX is cut); delay_sec below */
	bool trusted;
	const char *signals;
	/* suspicious: this delay, when longer than the configured one */
	uint32_t delay_sec;
	bool refuse_spf; /* SPF failed and the site refuses it (550) */
	/* The sender's domain takes no mail and the site refuses it:
	 * GREY_REASON_SENDER_DOMAIN or _SENDER_NULL_MX (NONE: not) */
	enum grey_reason refuse_sender;
	/* SPF passed for the sender's own domain and the site pools such
	 * senders: the triplet is keyed by that domain (GREY_FAMILY_POOL),
	 * not the client's network */
	bool pooled;
};

/* The records one attempt is decided from, and what the decision writes
 * back. store_decide (store/) reads and writes them in LMDB; a store
 * shared by several gateways can fetch them in one round trip and write
 * the changes at once, around the same decision (grey_decide_records
 * does no I/O). */
struct grey_records {
	/* what to fetch (grey_records_prepare) */
	bool want_trap, want_pass, want_triplet;
	bool want_own; /* the pass under trap_key too: the address's own
			  (a trusted client's, or a STARTTLS retry's), where
			  passes are kept by network */
	struct grey_client trap_key; /* the client's address */
	struct grey_client pass_key; /* its network */
	struct grey_client triplet_key; /* the triplet's client part: the
					   same network, or the pool's
					   (GREY_FAMILY_POOL) */
	char sender[GREY_ADDR_MAX];  /* normalized: the triplet's key */
	char rcpt[GREY_ADDR_MAX];    /* (with privacy: their hashes) */
	char rcpt_seen[GREY_ADDR_MAX]; /* with privacy, the recipient
					  normalized, for the lists of
					  exempt and trap recipients */
	/* what was found: STORE_FOUND or 0 each */
	int trap_found, pass_found, triplet_found, own_found;
	struct store_client trap, pass, own;
	struct store_triplet triplet;
	/* what the decision changed: to be written back */
	bool trap_dirty, pass_dirty, triplet_dirty;
};

/* grey_records_hide - with privacy, w's sender and recipient as the
 * store keeps them: their keyed hashes (the null sender stays empty);
 * nothing without. */
void grey_records_hide(const struct grey_config *cfg, struct grey_records *w);

/* grey_records_prepare - the keys of a's records and which it needs. */
void grey_records_prepare(const struct grey *grey, const struct grey_attempt *a,
			  struct grey_records *w);

/*
 * grey_decide_records - the decision on a from the records w holds
 * (found or not), as grey_decide would make it; w's records are changed
 * to what the store must hold after it (marked dirty). No store I/O; the
 * counters and the delays are grey's.
 * Return: 0, or -EINVAL for an unknown kind of attempt.
 */
int grey_decide_records(struct grey *grey, const struct grey_attempt *a,
			struct grey_records *w, struct grey_decision *out);

/* The report's figures (the counters and the latest delays) are kept in
 * the store, so that they count on across restarts: at most this many
 * delays, the most recent, are saved. */
#define GREY_DELAYS_SAVED (1u << 16)

/* The report's figures as one record (what store_save_stats writes; on a
 * shared store also each gateway's share of the site's report). */
struct grey_stats {
	int64_t since; /* when counting began */
	struct grey_counters counters;
	uint32_t *delays; /* the latest delays, oldest first (allocated) */
	size_t ndelays;
};

/* grey_stats_encode - the counters and the latest delays (at most
 * GREY_DELAYS_SAVED), with since, as one record (*rec allocated: the
 * caller frees it). Return: 0 or -ENOMEM. */
int grey_stats_encode(const struct grey *grey, int64_t since, void **rec,
		      size_t *len);

/* grey_stats_decode - a record grey_stats_encode made, from anywhere
 * (nothing in it is trusted); free it with grey_stats_free.
 * Return: 0, -EPROTO (not such a record, or not this version's), or
 * -ENOMEM. */
int grey_stats_decode(const void *rec, size_t len, struct grey_stats *out);
void grey_stats_free(struct grey_stats *s);

/* grey_stats_add - add saved figures (grey_stats_decode's) to what this
 * greylist counted so far. */
void grey_stats_add(struct grey *grey, const struct grey_stats *saved);

/* grey_stats_reset - counting starts again from zero. */
void grey_stats_reset(struct grey *grey);

/* grey_get_counters - the counters since counting began (grey_new, the
 * saved ones grey_stats_add took, or grey_stats_reset). */
const struct grey_counters *grey_get_counters(const struct grey *grey);

/* The most recent passes by retry keep their delay to delivery (first
 * sight to the pass with the hand-off; without it, to the next delivery
 * of that triplet seen on the fast path)
 * for the report's median, mean, p90 and max. */
#define GREY_DELAYS_KEPT (1u << 20)

/* grey_get_pass_delays - the kept delays in seconds, oldest first while
 * fewer than GREY_DELAYS_KEPT were seen (then in ring order: order does
 * not matter for the statistics). Return: the array (owned by grey); *n
 * gets its length. */
const uint32_t *grey_get_pass_delays(const struct grey *grey, size_t *n);

/* The same delays as a histogram for the life of this grey (never
 * reset, none restored): how many were at most each bound (cumulative,
 * +Inf last), their sum and count. */
#define GREY_DELAY_BOUNDS 11
extern const uint32_t grey_delay_bounds[GREY_DELAY_BOUNDS]; /* seconds */
struct grey_delay_histogram {
	uint64_t le[GREY_DELAY_BOUNDS + 1]; /* cumulative; +Inf last */
	uint64_t sum_sec, count;
};

/* grey_get_delay_histogram - see above. */
const struct grey_delay_histogram *
grey_get_delay_histogram(const struct grey *grey);

/* --- helpers shared with the daemon and tools --- */

/* grey_client_of - the key of addr for prefix bits (v4 or v6 by family). */
void grey_client_of(const struct grey_addr *addr, uint8_t prefix,
		    struct grey_client *out);
/* grey_client_format - "198.51.100.0/24" into buf ("spf" for a pooled
 * triplet's). Return: buf. */
char *grey_client_format(const struct grey_client *client, char *buf,
			 size_t len);
/* grey_cidr_parse - parse CIDR or a bare address (full prefix). An
 * IPv4-mapped IPv6 address (::ffff:198.51.100.1, ::ffff:0:0/96 and
 * longer) is the IPv4 address it maps: that is how its packets arrive.
 * Return: 0 or -EINVAL. */
int grey_cidr_parse(const char *text, struct grey_client *out);
/* grey_triplet_client_parse - a triplet's client part as
 * grey_client_format wrote it: a CIDR or "spf". Return: 0 or -EINVAL. */
int grey_triplet_client_parse(const char *text, struct grey_client *out);
/* grey_pool_client - the client part of every pooled triplet. */
void grey_pool_client(struct grey_client *out);
/* grey_client_contains - does net contain addr? */
bool grey_client_contains(const struct grey_client *net,
			  const struct grey_addr *addr);

/* grey_normalize_sender - lower-case, fold BATV, SRS and numeric VERP
 * tags. Return: length written, or -ENAMETOOLONG if out is too small. */
int grey_normalize_sender(const char *sender, char *out, size_t len);
/* grey_normalize_rcpt - lower-case. Return: length or -ENAMETOOLONG. */
int grey_normalize_rcpt(const char *rcpt, char *out, size_t len);

/* Names for logs: "greylist", "pass", ...; "new", "retry-passed", ... */
const char *grey_action_name(enum grey_action action);
const char *grey_reason_name(enum grey_reason reason);

#endif
