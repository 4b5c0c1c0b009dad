/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The greylisting simulator: senders described by a workload, driven in
 * virtual time against the real policy core and store. Each attempt
 * meets what a real one would: a client whose key is in the pass set
 * reaches the MTA (delivered); any other meets the tarpit (451 at every
 * RCPT, after STARTTLS if it says it) and retries on its own schedule or
 * gives up. With the hand-off, the attempt that passes is delivered. */
#ifndef GREYGATE_SIM_H
#define GREYGATE_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "policy.h"
#include "store.h"
#include "trust.h"

#define SIM_CLASSES_MAX 32
#define SIM_NETS_MAX 32
#define SIM_RETRY_MAX 32
/* The month starts where the article's did: 2016-09-01T00:00:00Z. */
#define SIM_EPOCH 1472688000LL

/* The SPF term that passes a class's senders (issue 56). */
enum sim_spf_by {
	SIM_SPF_NARROW, /* a host, a /24: as providers and servers name
			   themselves */
	SIM_SPF_WIDE,   /* a /8: a lazy record, a hoster's whole range */
	SIM_SPF_ALL,    /* +all */
};

enum sim_pick {
	SIM_PICK_SAME,   /* every attempt from the message's first address */
	SIM_PICK_ROTATE, /* the next net of the list each attempt */
	SIM_PICK_RANDOM  /* a random net and host of the list each attempt */
};

/* A kind of sender: how many messages, from where, retrying how. */
struct sim_class {
	char name[48];
	bool unwanted;          /* a bot: stopping it is the point */
	uint32_t messages;      /* over the whole run */
	bool spread;            /* arrivals over the days, daily cycle */
	uint32_t start;         /* else all at this second of the run */
	struct grey_client nets[SIM_NETS_MAX]; /* where it sends from */
	int nnets;              /* 0: a random address per message */
	enum sim_pick pick;
	uint32_t retry[SIM_RETRY_MAX]; /* gaps between attempts, s; the */
	int nretry;                    /* last repeats; 0: never retries */
	uint32_t burst, burst_gap; /* bots: extra attempts right away */
	uint32_t give_up;       /* s after the first attempt */
	uint32_t recipients;    /* per message */
	uint32_t senders;       /* distinct sender addresses */
	uint32_t rcpt_pool;     /* distinct recipients */
	bool verp;              /* a per-message tag in the sender */
	bool starttls;          /* says STARTTLS when offered */
	int32_t spf_pass;       /* percent of its messages whose sender's
				   SPF passes for the client (yes: 100) */
	enum sim_spf_by spf_by; /* the term that passes it */
	int32_t aligned;        /* percent of its forward-confirmed
				   addresses whose PTR name is of the
				   organizational domain of the record
				   that passes (a provider's own names, a
				   server of its own domain) */
	int32_t fcrdns;         /* percent of its addresses whose PTR name
				   is forward-confirmed and plain-looking;
				   -1: DNS not modelled */
	int32_t dynamic;        /* ... whose PTR name looks dynamic
				   (suspicious); the rest after these two
				   have none, or one not resolving back */
	int32_t listed;         /* ... that the config's DNS block lists
				   list (with dnsbl_sites) */
	int32_t spf_fail;       /* percent of its messages whose sender's
				   domain's SPF fails for the client */
	int32_t no_mail;        /* ... whose sender's domain takes no mail
				   (no MX, A nor AAAA) */
	int32_t unknown_rcpt;   /* percent of its recipients that do not
				   exist (nobodyN@example.org) */
};

/* What the config's [signals] make of a class's DNS (the sim asks none:
 * a class says what DNS would; greygated's own judgement, policy/trust.c,
 * decides from it). */
struct sim_signals {
	bool lookups;           /* [signals] lookups */
	bool dnsbl;             /* ... dnsbl_sites names lists */
	bool sender_domain;     /* ... asks whether the sender's domain
				   takes mail */
	struct trust_rules rules; /* ... the rest */
};

struct sim_workload {
	uint32_t days;
	uint64_t seed;
	/* Shares (percent) of the messages that say STARTTLS, of wanted
	 * mail and of bots: when set (not -1), instead of the classes' own
	 * starttls. */
	int32_t starttls_legit, starttls_bots;
	/* ... and of the addresses whose PTR is forward-confirmed, instead
	 * of the classes' own fcrdns; of those whose PTR name looks
	 * dynamic, instead of their own dynamic */
	int32_t fcrdns_legit, fcrdns_bots;
	int32_t dynamic_legit, dynamic_bots;
	/* The adversary (issue 56): this share of every fire-and-forget
	 * bot class's messages sent as class adversary instead (its
	 * clients and DNS): "" none */
	char adversary[48];
	int32_t adversary_share;
	/* Of the DNS lists' lookups, the share that does not answer (a
	 * scenario: a list refusing the resolver, a timeout) */
	int32_t dnsbl_silent;
	/* Expired records purged as greygated purges them (yes), or kept */
	bool purge;
	struct sim_class cls[SIM_CLASSES_MAX];
	int ncls;
};

/* What a real log cannot tell. */
struct sim_stats {
	uint64_t legit_messages, legit_delivered, legit_lost, legit_delayed;
	uint64_t unwanted_messages, unwanted_delivered, unwanted_attempts;
	/* ... of them, bots that retry (greylisting does not stop them by
	 * design: reported apart) */
	uint64_t retrying_messages, retrying_delivered;
	/* bots delivered on their first attempt: passed by trust */
	uint64_t unwanted_first;
	uint64_t sessions;
	uint64_t unwanted_by_tls; /* bots delivered by a STARTTLS pass */
	uint64_t legit_refused;   /* 550 at a RCPT (SPF fail, a sender's
				     domain without mail): lost too */
	uint64_t unwanted_refused; /* ... bots so stopped */
	uint32_t *delays;       /* delivered legit messages: first attempt */
	uint64_t ndelays;       /* to delivery, seconds, 0 for none
				   (malloc'd) */
	uint32_t *tarpit_delays; /* ... of those that met the tarpit */
	uint64_t ntarpit_delays;
	uint64_t store_triplets, store_passes;
	/* The store file's pages in use at the end (LMDB's high-water
	 * mark, as the file never shrinks: what it takes on disk), and
	 * what the purge deleted */
	uint64_t store_bytes;
	uint64_t purged_triplets, purged_passes;
	/* The store's commits (greygated's rule, store_commit_due, and the
	 * hourly purge's two) and the bytes LMDB wrote for them */
	uint64_t store_commits, store_written;
	/* With snapshot_ms: the store on tmpfs (its own writes spare the
	 * flash), its snapshots taken as greygated takes them (when it
	 * changed) and what they wrote: the flash's share */
	uint64_t snapshots, snapshot_written;
	/* With lookups: the DNS questions greygated would have asked a
	 * server, and those its cache would have answered */
	uint64_t dns_asked, dns_cached;
};

/* sim_class_defaults - one message a day from one random address... */
void sim_class_defaults(struct sim_class *c);

/*
 * sim_run - run the workload against grey (over store) from SIM_EPOCH.
 * @cfg: the greylist settings grey was made with (key prefixes)
 * @handoff: the hand-off is on: an attempt that passes (a retry's RCPT,
 *     or STARTTLS with tls_pass) is delivered there and then
 * @sig: what [signals] make of the classes' DNS: with lookups, a class
 *     whose SPF passes is pooled (pool_spf: its triplets keyed by its
 *     domain), an address with a forward-confirmed PTR trusted as trust
 *     says (at STARTTLS by that alone); a dynamic-looking PTR, a
 *     listing, SPF fail and a sender's domain without mail suspicious
 *     (or refused, as the settings say)
 * @commit_ms: greygated's store_commit_interval
 * @snapshot_ms: store_snapshot_interval with a store_snapshot_dir, else 0
 * Return: 0 or -errno (the store).
 */
int sim_run(const struct sim_workload *w, const struct grey_config *cfg,
	    bool handoff, const struct sim_signals *sig, struct grey *grey,
	    struct store *store, uint32_t commit_ms, uint32_t snapshot_ms,
	    struct sim_stats *out);

/* sim_load - read a workload file (INI: [sim] days, seed; one
 * [class NAME] section per kind of sender).
 * @err: "FILE:LINE: why" (512 bytes). Return: 0 or -errno. */
int sim_load(const char *path, struct sim_workload *w, char *err);

#endif
