// SPDX-License-Identifier: GPL-2.0-or-later
/* The gateway's policy side: the child's events -> policy -> nft sets,
 * allow lists from files and greygatectl, periodic expiry and purge, and
 * one postgrey-style log line per decision. */
#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config_parts.h"
#include "allow_lists.h"
#include "commands.h"
#include "decide.h"
#include "fmt.h"
#include "follow_sets.h"
#include "gateway.h"
#include "housekeeping.h"
#include "recipients.h"
#include "grey_store.h"
#include "handoff.h"
#include "log.h"
#include "metrics.h"
#include "metrics_http.h"
#include "policy_door.h"
#include "resolver.h"
#include "nftset_commit.h"
#include "shared.h"
#include "signals.h"
#include "site_report.h"
#include "store_snapshot.h"
#include "supervise.h"

/* The root: it makes each service with its links, in order, and closes
 * them in the reverse; nothing else reaches into them. */
struct gateway {
	struct config *cfg;
	struct loop *loop;
	struct store *store;        /* LMDB: the greylist, or (with a shared
	                               store) this gateway's own report */
	struct grey_store *records; /* the greylist's store, whichever it
	                               is: what the decider asks */
	struct decider *decider;    /* the decider's state and its greylist
	                               (decide.c) */
	struct nftset *nft;
	struct sets_follower *sets; /* the sets' listener (follow_sets.c) */
	struct commands *commands;  /* greygatectl's door (commands.c) */
	struct policy_door *policy_door; /* NULL: off */
	struct signals *signals;         /* DNS signals, lent to the child's
	                                    supervisor and the door (NULL:
	                                    no lookups) */
	struct housekeeping *hk;         /* and the report's figures
	                                    (housekeeping.c) */
	struct allow_lists *allow;       /* (allow_lists.c) */
	/* the child */
	struct supervisor *sup;          /* its process, restarts, verdict queue
	                                    and refusals (supervise.c) */
	struct metrics_figures *figures; /* greygated's start, what its
	                                    counters carry over (metrics.c) */
	struct handoff_state *handoff;   /* (handoff.c) */
	struct metrics_listener *metrics_listener; /* NULL: none */
};
/* --- start --- */

/* The run-time allow list, for a shared store that lacks its entries. */
static const struct allow_runtime *
allow_entries_of(void *ctx, size_t *n)
{
	struct gateway *gw = ctx;

	return allow_lists_runtime_entries(gw->allow, n);
}

/* [greylist] valid_recipients, read anew. Return: 0, or -errno with err
 * (512 bytes) set: at start greygated refuses to run; at a reload the
 * list before stays. */
static int
load_valid_recipients(struct gateway *gw, char *err)
{
	const char *path = gw->cfg->valid_recipients;
	struct recipients *r;
	char why[400];

	if (!path[0]) {
		grey_set_valid_recipients(decider_grey(gw->decider), NULL);
		return 0;
	}
	r = recipients_load(path, why, sizeof(why));
	if (!r) {
		snprintf(err, 512, "[greylist] valid_recipients: %s", why);
		return -EINVAL;
	}
	log_info("recipients: %zu addresses and domains in %s: an unknown "
	         "one at those domains hears 550 at the tarpit",
	         recipients_count(r), path);
	grey_set_valid_recipients(decider_grey(gw->decider), r);
	return 0;
}

/* [greylist] privacy: its key read, or made on the first start (the
 * store's folder is there by now), and said. */
static int
open_privacy(struct config *cfg, char *err)
{
	char path[256], why[256], fp[PRIVACY_FINGERPRINT_SIZE];
	bool made;
	int r = config_privacy_key(cfg, true, &made, path, why);

	if (r < 0) {
		snprintf(err, 512, "[greylist] privacy: %s", why);
		return r;
	}
	if (!cfg->grey.privacy)
		return 0;
	privacy_fingerprint(cfg->grey.privacy_key, fp);
	log_info("privacy: senders and recipients are stored as keyed "
	         "hashes (key %s, fingerprint %s%s)",
	         path, fp,
	         made ? "; made now: copy it to every gateway sharing this "
	                "store, and keep it with the store's backup"
	              : "");
	return 0;
}

static void give_parts(struct gateway *gw);

static int
open_policy(struct gateway *gw, char *err)
{
	const struct config *cfg = gw->cfg;
	struct housekeeping_settings hk;
	int r = store_folder_check(cfg->store_dir, err);
	int restored = 0;

	/* (the privacy key may be among what a snapshot gives back) */
	if (r < 0 || (r = restored = store_snapshot_restore(
	                      cfg->store_dir, &cfg->store_snapshot, err)) < 0 ||
	    (r = open_privacy(gw->cfg, err)) < 0)
		return r;
	/* The privacy key is read now: the services made before (the
	 * decider hashes with it) are given their part with it. */
	give_parts(gw);
	r = store_open(cfg->store_dir, cfg->store_move_aside, &gw->store);
	if (r == -EPROTO) {
		snprintf(err, 512, "store %s: %s (set store_move_aside = yes to "
				   "keep it aside and start empty)",
			 cfg->store_dir,
			 store_open_why()[0] ? store_open_why()
					     : "not a greygate store, or damaged");
		return r;
	}
	if (r < 0) {
		snprintf(err, 512, "store %s: %s", cfg->store_dir, strerror(-r));
		return r;
	}
	if (store_open_why()[0])
		log_warnx("store %s: %s: starting with an empty greylist",
			  cfg->store_dir, store_open_why());
	r = decider_open(gw->decider, gw->store);
	if (r < 0)
		return r;
	config_housekeeping_part(gw->cfg, &hk);
	gw->hk = housekeeping_open(&(struct housekeeping_links){gw->loop,
	                                   gw->store, gw->decider,
	                                   gw->figures},
	                           &hk, restored == 1);
	if (!gw->hk)
		return -ENOMEM;
	metrics_figures_begin(gw->figures,
	                      grey_get_counters(decider_grey(gw->decider)));
	/* The greylist's store: Redis (shared_open sets it) or this file. */
	if (cfg->store_url.redis) {
		struct shared_allow_source allow = {allow_entries_of, gw};
		struct shared_settings part;

		config_shared_part(cfg, &part);
		r = shared_open(gw->loop, &part, &allow, &gw->records, err);
		if (r < 0)
			return r;
	} else if (!(gw->records = grey_store_lmdb_new(gw->store))) {
		return -ENOMEM;
	}
	decider_use_records(gw->decider, gw->records);
	for (int i = 0; i < cfg->nexempt; i++)
		grey_exempt_add(decider_grey(gw->decider), cfg->exempt[i]);
	for (int i = 0; i < cfg->ntraps; i++)
		grey_trap_add(decider_grey(gw->decider), cfg->traps[i]);
	r = load_valid_recipients(gw, err);
	if (r < 0)
		return r;
	return 0;
}

/* A tarpit port held at start is waited for this long: the child of a
 * greygated killed a moment ago still holds it until its parent-death
 * signal is through, and a supervisor starts greygated again at once. */
#define PORT_WAIT_MS 5000

/* tarpit_bind, waiting up to PORT_WAIT_MS for a port held by another;
 * said when it waited. Return: as tarpit_bind. */
static int
bind_waiting(const struct sockaddr *addr, socklen_t len, uint16_t port)
{
	struct timespec pause = {0, 100 * 1000 * 1000};
	int fd, waited_ms = 0;

	while ((fd = tarpit_bind(addr, len)) == -EADDRINUSE &&
	       waited_ms < PORT_WAIT_MS) {
		nanosleep(&pause, NULL);
		waited_ms += 100;
	}
	if (fd >= 0 && waited_ms)
		log_info("tarpit port %u was held by another (a greygated that "
			 "had just died?): bound after %d ms",
			 port, waited_ms);
	return fd;
}

/* The tarpit's listeners are bound here, while greygated may still bind
 * any port; the child serves them, and a restarted child the same ones.
 * slot: 0 for the tarpit's port, 2 for the stutter's. */
static int
bind_port(struct gateway *gw, uint16_t port, int slot, char *err)
{
	struct sockaddr_in in4 = {.sin_family = AF_INET};
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6,
				   .sin6_addr = IN6ADDR_ANY_INIT};
	int fd;

	in4.sin_port = htons(port);
	in6.sin6_port = in4.sin_port;
	fd = bind_waiting((struct sockaddr *)&in4, sizeof(in4), port);
	if (fd < 0) {
		snprintf(err, 512, "tarpit port %u: %s%s", port, strerror(-fd),
			 fd == -EADDRINUSE ? " (still, after 5 s)" : "");
		return fd;
	}
	supervise_adopt_listener(gw->sup, slot, fd);
	fd = bind_waiting((struct sockaddr *)&in6, sizeof(in6), port);
	if (fd == -EAFNOSUPPORT || fd == -EADDRNOTAVAIL)
		return 0; /* no IPv6 on this host */
	if (fd < 0) {
		snprintf(err, 512, "tarpit port %u (IPv6): %s", port,
			 strerror(-fd));
		return fd;
	}
	supervise_adopt_listener(gw->sup, slot + 1, fd);
	return 0;
}

static int
bind_tarpit(struct gateway *gw, char *err)
{
	int r = bind_port(gw, gw->cfg->nft.tarpit_port, 0, err);

	if (r == 0 && gw->cfg->nft.trap_port)
		r = bind_port(gw, gw->cfg->nft.trap_port, 2, err);
	return r;
}

static void gateway_figures(struct gateway *gw, struct metrics_snapshot *s);

/* The root as the commands and the metrics listener see it. */
static void
root_figures(void *gw, struct metrics_snapshot *s)
{
	gateway_figures(gw, s);
}

static int
root_reload(void *gw, char *err)
{
	return gateway_reload(gw, err);
}

/* greygatectl's socket, for root and the admin group, never the child's
 * user. */
static int
open_control(struct gateway *gw, char *err)
{
	const struct config *cfg = gw->cfg;
	struct control_access access = {(gid_t)-1, (uid_t)-1,
					cfg->admin_group};
	struct group *grp = getgrnam(cfg->admin_group);
	struct passwd *pw = getpwnam(cfg->user);

	if (grp)
		access.admin_gid = grp->gr_gid;
	else
		log_warnx("control: group %s does not exist: greygatectl is "
			  "for root only (addgroup --system %s, then add the "
			  "admins to it)",
			  cfg->admin_group, cfg->admin_group);
	if (pw)
		access.child_uid = pw->pw_uid;
	if (grp && pw && grp->gr_gid == pw->pw_gid)
		log_warnx("control: admin_group %s is the child's own group: "
			  "its members may use greygatectl, the child may not",
			  cfg->admin_group);
	struct command_links links = {
	        .figures = root_figures,
	        .reload = root_reload,
	        .root = gw,
	        .loop = gw->loop,
	        .decider = gw->decider,
	        .records = gw->records,
	        .nft = gw->nft,
	        .allow = gw->allow,
	        .hk = gw->hk,
	        .handoff = gw->handoff,
	};

	config_command_part(gw->cfg, &links.cfg);

	return commands_open(&links, &access, &gw->commands, err);
}

/* Each service open so far is given its part of the settings anew
 * (config_parts.h): at a reload, and at start once auto turned the
 * hand-off off under the services made before. The policy door's reload
 * reads its whitelists again too. */
static void
give_parts(struct gateway *gw)
{
	const struct config *cfg = gw->cfg;
	struct decider_settings decider;
	struct handoff_settings handoff;
	struct supervisor_settings sup;
	struct allow_settings allow;
	struct policy_door_settings door;
	struct housekeeping_settings hk;
	struct command_settings commands;

	config_decider_part(cfg, &decider);
	decider_reconfigure(gw->decider, &decider);
	config_handoff_part(cfg, &handoff);
	handoff_reconfigure(gw->handoff, &handoff);
	config_supervisor_part(cfg, &sup);
	supervise_reconfigure(gw->sup, &sup);
	if (gw->hk) {
		config_housekeeping_part(cfg, &hk);
		housekeeping_reconfigure(gw->hk, &hk);
	}
	if (gw->allow) {
		config_allow_part(cfg, &allow);
		allow_lists_reconfigure(gw->allow, &allow);
	}
	config_door_part(cfg, &door);
	policy_door_reload(gw->policy_door, &door);
	signals_reconfigure(gw->signals, &cfg->signals);
	config_command_part(cfg, &commands);
	commands_reconfigure(gw->commands, &commands);
}

/* The firewall's part: the table, the tarpit's ports, a capture tried. */
static int
open_gateway(struct gateway *gw, char *err)
{
	int r = nftset_open(&gw->cfg->nft, &gw->nft);

	if (r < 0) {
		snprintf(err, 512, "nftables table inet %s: %s", gw->cfg->table,
			 nftset_explain(r));
		return r;
	}
	/* (what a turn queued goes out before the loop waits) */
	r = nftset_commit_before_wait(gw->loop, gw->nft);
	if (r < 0) {
		snprintf(err, 512, "nft: the sets' commit: %s", strerror(-r));
		return r;
	}
	r = handoff_route_open(gw->handoff, err);
	if (r < 0 && gw->cfg->handoff.setting == HANDOFF_AUTO) {
		/* auto: the hand-off off, not the gateway */
		snprintf(gw->cfg->handoff.auto_why,
			 sizeof(gw->cfg->handoff.auto_why), "%.180s", err);
		gw->cfg->handoff.auto_on = false;
		config_derive(gw->cfg);
		give_parts(gw);
		r = 0; /* (said once up) */
	}
	if (r < 0)
		return r;
	r = bind_tarpit(gw, err);
	if (r < 0)
		return r;
	return supervise_check_capture(gw->sup, err);
}

/* The child starts (the sets hold what the store does: gateway_open). */
static int
start_gateway(struct gateway *gw, char *err)
{
	int r = supervise_start(gw->sup, err);
	if (r < 0)
		return r;
	handoff_probe_start(gw->handoff);
	return 0;
}

int
gateway_open(struct config *cfg, struct loop *loop, struct gateway **out,
             char *err)
{
	struct gateway *gw = calloc(1, sizeof(*gw));
	struct decision_port decide;
	struct policy_door_settings door;
	struct handoff_settings handoff;
	struct decider_settings decider;
	struct supervisor_settings sup;
	struct allow_settings allow;
	struct metrics_listen_settings metrics;
	struct handoff_child child;
	int r;

	if (!gw)
		return -ENOMEM;
	gw->cfg = cfg;
	gw->loop = loop;
	gw->figures = metrics_figures_new(loop_wall_sec(gw->loop));
	config_handoff_part(cfg, &handoff);
	gw->handoff = handoff_state_new(loop, &handoff);
	config_decider_part(cfg, &decider);
	gw->decider = decider_new(loop, &decider);
	config_supervisor_part(cfg, &sup);
	gw->sup = supervise_new(&(struct supervisor_links){
	        loop, gw->decider, gw->handoff, gw->figures}, &sup);
	if (!gw->figures || !gw->handoff || !gw->sup || !gw->decider) {
		metrics_figures_free(gw->figures);
		handoff_state_free(gw->handoff);
		supervise_free(gw->sup);
		decider_free(gw->decider);
		free(gw);
		return -ENOMEM;
	}
	child = supervise_handoff_child(gw->sup);
	handoff_set_child(gw->handoff, &child);
	r = open_policy(gw, err);
	if (r < 0)
		goto fail;
	r = cfg->gateway ? open_gateway(gw, err) : 0;
	if (r < 0)
		goto fail;
	config_allow_part(cfg, &allow);
	gw->allow = allow_lists_open(&(struct allow_links){gw->loop,
	                                     gw->decider, gw->nft, gw->records},
	                             &allow);
	if (!gw->allow) {
		r = -ENOMEM;
		goto fail;
	}
	r = open_control(gw, err);
	if (r < 0)
		goto fail;
	decide = decider_port(gw->decider);
	r = signals_open(loop, &cfg->signals, cfg->policy.listen[0] != 0,
	                 &gw->signals, err);
	if (r < 0)
		goto fail;
	supervise_use_signals(gw->sup, gw->signals);
	config_door_part(cfg, &door);
	r = policy_door_open(gw->loop, &door, &decide, &gw->policy_door, err);
	if (r < 0)
		goto fail;
	policy_door_use_signals(gw->policy_door, gw->signals);
	config_metrics_listen_part(cfg, &metrics);
	r = metrics_listen_open(gw->loop, &metrics, root_figures, gw,
	                        &gw->metrics_listener, err);
	if (r < 0)
		goto fail;
	allow_lists_reload(gw->allow);
	/* The sets (and the allow entries, the policy door's too) get what
	 * the store holds before the child lets anyone in, and follow
	 * what other gateways sharing it change. */
	struct set_links sets = {gw->loop, gw->decider, gw->nft, gw->records,
	                         gw->allow};

	r = sets_follow_store(&sets, &gw->sets);
	if (r < 0) {
		snprintf(err, 512, "restoring clients from %s: %s",
		         grey_store_where(gw->records), strerror(-r));
		goto fail;
	}
	(void)sets_adopt_kept(&sets); /* (said; the sets keep them anyway) */
	r = cfg->gateway ? start_gateway(gw, err) : 0;
	if (r < 0)
		goto fail;
	housekeeping_start(gw->hk, gw->records, gw->allow);
	handoff_say_route(gw->handoff); /* (nothing can fail now) */
	*out = gw;
	return 0;
fail:
	if (!err[0])
		snprintf(err, 512, "%s", strerror(-r));
	gateway_close(gw);
	return r;
}

int
gateway_reload(struct gateway *gw, char *err)
{
	struct config *cfg = gw->cfg;
	int r = config_reload(cfg, gw->records->settings_agreed, err);

	if (r < 0) {
		log_warnx("reload: %s (the running config stays)", err);
		return r;
	}
	log_set_level((enum log_level)cfg->log_level);
	give_parts(gw);
	grey_recipients_clear(decider_grey(gw->decider));
	for (int i = 0; i < cfg->nexempt; i++)
		grey_exempt_add(decider_grey(gw->decider), cfg->exempt[i]);
	for (int i = 0; i < cfg->ntraps; i++)
		grey_trap_add(decider_grey(gw->decider), cfg->traps[i]);
	{
		char why[512];

		if (load_valid_recipients(gw, why) < 0)
			log_warnx("reload: %s (the recipients before stay)", why);
	}
	allow_lists_reload(gw->allow);
	if (r == CONFIG_CHILD_CHANGED && cfg->gateway) {
		log_info("reload: tarpit or sensor settings changed: a new "
			 "child takes over (the one before finishes the "
			 "sessions it handed to the MTA)");
		supervise_restart(gw->sup);
	}
	log_info("reload: %s applied", cfg->source.path);
	return 0;
}

void
gateway_close(struct gateway *gw)
{
	if (!gw)
		return;
	supervise_stop(gw->sup);
	metrics_listen_close(gw->metrics_listener);
	handoff_abort_all(gw->handoff);
	housekeeping_stop(gw->hk);
	commands_close(gw->commands);
	policy_door_close(gw->policy_door);
	/* (a shared store's connection with it: the report's figures are
	 * saved below, here only) */
	decider_use_records(gw->decider, NULL);
	grey_store_free(gw->records);
	gw->records = NULL;
	allow_lists_close(gw->allow);
	handoff_route_close(gw->handoff);
	handoff_state_free(gw->handoff);
	if (gw->nft) {
		nftset_commit_now(gw->nft); /* (what is queued, not lost) */
		nftset_commit_before_wait_stop(gw->loop, gw->nft);
	}
	nftset_close(gw->nft);
	gw->nft = NULL;
	/* (the figures saved, the store synced, its last snapshot) */
	housekeeping_close(gw->hk);
	decider_close(gw->decider);
	store_close(gw->store);
	supervise_free(gw->sup);
	/* (after the sessions and the door: none asks it now) */
	signals_free(gw->signals);
	decider_free(gw->decider);
	metrics_figures_free(gw->figures);
	sets_follower_free(gw->sets); /* (nobody tells it now) */
	free(gw);
}

/* The signals' resolver counters into s (nothing without lookups). */
static void
dns_figures(const struct signals *signals, struct metrics_snapshot *s)
{
	struct resolver_counters n;
	size_t held;

	if (!signals)
		return;
	signals_counters(signals, &n, &held);
	s->dns_on = true;
	s->dns.asked = n.asked;
	s->dns.cached = n.cached;
	s->dns.joined = n.joined;
	s->dns.timeouts = n.timeouts;
	s->dns.failures = n.failures;
	s->dns.held = held;
	s->dns.silent = n.silent;
	s->dns.silences = n.silences;
}

/* --- figures: the root asks each service for its own (the decider's
 * counters, the child's, the door's, the store's, the sets' counts, the
 * hand-off's) into one snapshot, which metrics.c renders without knowing
 * any service --- */

/* The sets' counts as greygated keeps them, never a dump of the kernel's
 * sets (a million allow entries took minutes): the merged allow ranges
 * greygated sent, and the store's pass and trap records (the kernel's
 * elements expire with them). */
static void
count_sets(struct gateway *gw, struct metrics_snapshot *s)
{
	size_t nallow;
	const struct allow_range *allow =
	        allow_lists_ranges(gw->allow, &nallow, NULL);

	for (size_t i = 0; i < nallow; i++)
		s->sets[NFTSET_ALLOW][allow[i].range.family == AF_INET6]++;
	for (int f = 0; f < 2; f++) {
		int family = f ? AF_INET6 : AF_INET;
		int64_t passes = grey_store_count(gw->records,
		                                  GREY_STORE_PASSES, family);
		int64_t traps =
		        grey_store_count(gw->records, GREY_STORE_TRAPS, family);

		/* (a store every gateway writes keeps no count here) */
		s->sets_uncounted = passes < 0 || traps < 0;
		s->sets[NFTSET_PASS][f] = passes < 0 ? 0 : (uint64_t)passes;
		s->sets[NFTSET_TRAP][f] = traps < 0 ? 0 : (uint64_t)traps;
	}
}

/* gateway_figures - every figure, read now from each service, with the
 * counters' carry: what status and metrics render. */
static void
gateway_figures(struct gateway *gw, struct metrics_snapshot *s)
{
	struct supervise_status sup;
	pid_t pids[METRICS_RETIRING_MAX];
	int64_t since[METRICS_RETIRING_MAX];

	memset(s, 0, sizeof(*s));
	s->now = loop_wall_sec(gw->loop);
	s->cfg = gw->cfg;
	s->decided = *grey_get_counters(decider_grey(gw->decider));
	s->delays = grey_get_delay_histogram(decider_grey(gw->decider));
	s->fetch = decider_fetch_latency(gw->decider);
	supervise_get_status(gw->sup, &sup);
	s->child = *sup.stats;
	s->child_pid = sup.pid;
	s->child_starts = sup.starts;
	s->child_since = sup.since;
	s->child_restarts = sup.starts > 1 ? sup.starts - 1 : 0;
	s->verdicts_unsent = sup.verdicts_unsent;
	s->records_refused = sup.records_refused;
	s->nretiring =
	        retiring_list(gw->sup, pids, since, METRICS_RETIRING_MAX);
	for (size_t i = 0; i < s->nretiring; i++)
		s->retiring[i] = (struct metrics_retiring){pids[i], since[i]};
	s->policy_door_on = gw->policy_door != NULL;
	policy_door_get_stats(gw->policy_door, &s->door);
	s->store = *store_get_counters(gw->store);
	if ((s->snapshot_on = housekeeping_snapshots(gw->hk) != NULL))
		s->snapshots = *housekeeping_snapshots(gw->hk);
	count_sets(gw, s);
	s->triplets = store_count(gw->store, -1);
	s->passes = store_count(gw->store, STORE_PASS);
	s->traps = store_count(gw->store, STORE_TRAP);
	handoff_auto_text(gw->handoff, s->handoff_auto,
	                  sizeof(s->handoff_auto));
	s->handoff_ready = handoff_ready(gw->handoff);
	handoff_get_counts(gw->handoff, &s->handoffs_started,
	                   &s->handoffs_failed);
	s->set_changes_failed = nftset_changes_failed(gw->nft);
	grey_store_get_status(gw->records, &s->shared);
	s->shared_up = s->shared.up;
	s->shared_disagreed = s->shared.disagreed;
	dns_figures(gw->signals, s);
	metrics_figures_carry(gw->figures, s);
}
