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

#include "control.h"
#include "fmt.h"
#include "gateway-int.h"
#include "recipients.h"
#include "grey_store.h"
#include "handoff.h"
#include "log.h"
#include "metrics.h"
#include "metrics_http.h"
#include "policy_door.h"
#include "shared.h"
#include "site_report.h"



int
gateway_key_of(const struct gateway *gw, const char *client,
               struct grey_client *given_out, struct grey_client *key)
{
	struct grey_client given;
	struct grey_addr a;

	if (grey_cidr_parse(client, &given) < 0)
		return -EINVAL;
	/* A wider network holds many keys: not one at once. */
	if (given.prefix < (given.family == AF_INET ? gw->cfg->grey.prefix4
						    : gw->cfg->grey.prefix6))
		return -ERANGE;
	/* "198.51.100.7" and "198.51.100.0/24" both mean the key /24. */
	a.family = given.family;
	memcpy(a.bytes, given.bytes, 16);
	grey_client_of(&a, given.family == AF_INET ? gw->cfg->grey.prefix4
						   : gw->cfg->grey.prefix6,
		       key);
	if (given_out)
		*given_out = given;
	return 0;
}

int
gateway_forget(struct gateway *gw, const char *client, char *key_out,
	       size_t key_len)
{
	struct grey_client given, key;
	struct nftset_prefix p;
	int r = gateway_key_of(gw, client, &given, &key), d;

	if (r < 0)
		return r;
	grey_client_format(&key, key_out, key_len);
	/* Traps are kept by single address. */
	bool one = given.prefix == (given.family == AF_INET ? 32 : 128);

	/* A store that answers later logs what it deleted then (a shared
	 * one tells every gateway, and drops them from their sets). */
	r = grey_store_forget(gw->records, &key, one ? &given : NULL);
	if (r < 0)
		return r;
	if (one) {
		int t;

		decider_prefix_of(&given, &p);
		if (gw->nft && (t = nftset_del(gw->nft, NFTSET_TRAP, &p)) < 0)
			decider_set_failed(gw->decider, "forget", client, t);
	}
	decider_prefix_of(&key, &p);
	if (gw->nft && (d = nftset_del(gw->nft, NFTSET_PASS, &p)) < 0)
		decider_set_failed(gw->decider, "forget", key_out, d);
	decider_commit_sync(gw->decider);
	if (r != GREY_STORE_UNDER_WAY)
		log_info("action=forget, client=%s, key=%s, records=%d", client,
		         key_out, r);
	return r;
}

/* --- start --- */

/* The store's folder is greygated's alone: a folder another user owns, or
 * may write to, could be given links and files of theirs (as OpenSMTPD
 * refuses a spool that is not its own). */
static int
check_store_folder(const char *dir, char *err)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		snprintf(err, 512, "store %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (lstat(dir, &st) < 0) {
		snprintf(err, 512, "store %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, 512, "store %s: not a folder (a link?): refused",
			 dir);
		return -ENOTDIR;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(err, 512, "store %.200s: owned by uid %u, mode %03o: "
				   "refused (it must be greygated's own, uid "
				   "%u, and writable by nobody else: chmod 700)",
			 dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777),
			 (unsigned)geteuid());
		return -EPERM;
	}
	return 0;
}

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

static int
open_policy(struct gateway *gw, char *err)
{
	const struct config *cfg = gw->cfg;
	int r = check_store_folder(cfg->store_dir, err);

	if (r < 0)
		return r;
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
	gw->hk = housekeeping_open(&(struct housekeeping_links){
	        gw->loop, gw->cfg, gw->store, gw->decider, gw->figures});
	if (!gw->hk)
		return -ENOMEM;
	metrics_figures_begin(gw->figures, grey_get_counters(decider_grey(gw->decider)));
	/* The greylist's store: Redis (shared_open sets it) or this file. */
	if (cfg->store_url.redis) {
		struct shared_allow_source allow = {allow_entries_of, gw};

		r = shared_open(gw->loop, cfg, &allow, &gw->records, err);
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
	supervise_adopt_listener(gw, slot, fd);
	fd = bind_waiting((struct sockaddr *)&in6, sizeof(in6), port);
	if (fd == -EAFNOSUPPORT || fd == -EADDRNOTAVAIL)
		return 0; /* no IPv6 on this host */
	if (fd < 0) {
		snprintf(err, 512, "tarpit port %u (IPv6): %s", port,
			 strerror(-fd));
		return fd;
	}
	supervise_adopt_listener(gw, slot + 1, fd);
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
	return control_open(cfg->control_socket, &access, gw->loop,
			    commands_run, gw, &gw->control, err);
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
	decider_use_sets(gw->decider, gw->nft);
	r = handoff_route_open(gw->handoff, err);
	if (r < 0 && gw->cfg->handoff.setting == HANDOFF_AUTO) {
		/* auto: the hand-off off, not the gateway */
		snprintf(gw->cfg->handoff.auto_why,
			 sizeof(gw->cfg->handoff.auto_why), "%.180s", err);
		gw->cfg->handoff.auto_on = false;
		config_derive(gw->cfg);
		r = 0; /* (said once up) */
	}
	if (r < 0)
		return r;
	r = bind_tarpit(gw, err);
	if (r < 0)
		return r;
	return supervise_check_capture(gw, err);
}

/* The child starts (the sets hold what the store does: gateway_open). */
static int
start_gateway(struct gateway *gw, char *err)
{
	int r = supervise_start(gw, err);
	if (r < 0)
		return r;
	handoff_probe_start(gw->handoff);
	return 0;
}

int
gateway_open(struct config *cfg, const char *path, bool missing_ok,
	     struct loop *loop, struct gateway **out, char *err)
{
	struct gateway *gw = calloc(1, sizeof(*gw));
	struct decision_port decide;
	struct handoff_child child;
	int r;

	if (!gw)
		return -ENOMEM;
	gw->cfg = cfg;
	gw->cfg_source.path = path;
	gw->cfg_source.missing_ok = missing_ok;
	gw->loop = loop;
	gw->figures = metrics_figures_new(loop_wall_sec(gw->loop));
	gw->handoff = handoff_state_new(loop, cfg);
	gw->sup = supervise_new();
	gw->decider = decider_new(loop, cfg);
	if (!gw->figures || !gw->handoff || !gw->sup || !gw->decider) {
		metrics_figures_free(gw->figures);
		handoff_state_free(gw->handoff);
		supervise_free(gw->sup);
		decider_free(gw->decider);
		free(gw);
		return -ENOMEM;
	}
	child = supervise_handoff_child(gw);
	handoff_set_child(gw->handoff, &child);
	r = open_policy(gw, err);
	if (r < 0)
		goto fail;
	r = cfg->gateway ? open_gateway(gw, err) : 0;
	if (r < 0)
		goto fail;
	r = open_control(gw, err);
	if (r < 0)
		goto fail;
	decide = decider_port(gw->decider);
	r = policy_door_open(gw->loop, gw->cfg, &decide, &gw->policy_door,
			     err);
	if (r < 0)
		goto fail;
	r = metrics_listen_open(gw, &gw->metrics_listener, err);
	if (r < 0)
		goto fail;
	gw->allow = allow_lists_open(&(struct allow_links){
	        gw->loop, gw->cfg, gw->decider, gw->nft, gw->records});
	if (!gw->allow) {
		r = -ENOMEM;
		goto fail;
	}
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
	int r = config_reload(cfg, gw->cfg_source.path, gw->cfg_source.missing_ok,
	                      gw->records->settings_agreed, err);

	if (r < 0) {
		log_warnx("reload: %s (the running config stays)", err);
		return r;
	}
	log_set_level((enum log_level)cfg->log_level);
	grey_set_config(decider_grey(gw->decider), &cfg->grey);
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
	policy_door_reload(gw->policy_door);
	if (r == CONFIG_CHILD_CHANGED && cfg->gateway) {
		log_info("reload: tarpit or sensor settings changed: a new "
			 "child takes over (the one before finishes the "
			 "sessions it handed to the MTA)");
		supervise_restart(gw);
	}
	log_info("reload: %s applied", gw->cfg_source.path);
	return 0;
}

void
gateway_close(struct gateway *gw)
{
	if (!gw)
		return;
	supervise_stop(gw);
	metrics_listen_close(gw->metrics_listener);
	handoff_abort_all(gw->handoff);
	housekeeping_stop(gw->hk);
	control_close(gw->control);
	policy_door_close(gw->policy_door);
	/* (a shared store's connection with it: the report's figures are
	 * saved below, here only) */
	decider_use_records(gw->decider, NULL);
	grey_store_free(gw->records);
	gw->records = NULL;
	allow_lists_close(gw->allow);
	handoff_route_close(gw->handoff);
	handoff_state_free(gw->handoff);
	decider_use_sets(gw->decider, NULL);
	nftset_close(gw->nft);
	gw->nft = NULL;
	housekeeping_close(gw->hk); /* (the figures saved: committed
				       below) */
	decider_close(gw->decider);
	if (gw->store) {
		size_t waiting = store_pending(gw->store);
		int r = store_sync(gw->store);

		/* Said, never dropped unsaid (store_close would try again in
		 * silence). */
		if (r < 0)
			log_warnx("store: %zu write(s) could not be saved at "
			          "stop (%s): they are lost with this stop; "
			          "the clients passed among them are "
			          "greylisted once more after the restart (is "
			          "the disk full?)",
			          waiting, strerror(-r));
	}
	store_close(gw->store);
	supervise_free(gw->sup);
	decider_free(gw->decider);
	metrics_figures_free(gw->figures);
	sets_follower_free(gw->sets); /* (nobody tells it now) */
	free(gw);
}
