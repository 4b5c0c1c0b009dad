// SPDX-License-Identifier: GPL-2.0-or-later
/* The settings checked together, once each value is read (config_load.c):
 * errors for what can never work (nothing that would stop all mail is
 * accepted), warnings for what is odd. A refusal names the line of the
 * setting set last, from the lines config_load.c says each key was set on.
 * And config_check_system: what the settings need of the machine (the
 * child's user, the interface, the store's folder, the password file,
 * the policy route). */
#include <arpa/inet.h>
#include <errno.h>
#include <pwd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "build_features.h"
#include "config_check.h"
#include "markroute.h"
#include "store_url.h"

/* The line a key was set on, or "" if it kept its default. */
static const char *
where(const struct config_checking *st, const char *name, char *buf)
{
	int line = st->line_of(st->lines, name);

	if (!line)
		return " ";
	snprintf(buf, 32, "%d: ", line);
	return buf;
}

static bool
is_set(const struct config_checking *st, const char *name)
{
	return st->line_of(st->lines, name) != 0;
}

/* A refusal of two settings together: "FILE:LINE: what" with the line
 * of the one set last in the file (or the one set at all). */
static int
refuse(struct config_checking *st, const char *a, const char *b,
       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int
refuse(struct config_checking *st, const char *a, const char *b,
       const char *fmt, ...)
{
	char at[32], text[400];
	const char *name = a;
	va_list ap;

	if (b && st->line_of(st->lines, b) > st->line_of(st->lines, a))
		name = b;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	snprintf(st->err, 512, "%s:%s%s", st->path, where(st, name, at), text);
	return -EINVAL;
}

static void
tell(config_warn_fn *warn, void *ctx, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
tell(config_warn_fn *warn, void *ctx, const char *fmt, ...)
{
	char text[400];
	va_list ap;

	if (!warn)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	warn(text, ctx);
}

/* Are the address texts of one family? (IPv6 endpoints are bracketed.) */
static bool
same_family(const char *addr, const char *endpoint)
{
	return !strchr(addr, ':') == (endpoint[0] != '[');
}


static uint16_t
handoff_port(const struct handoff_config *h)
{
	const struct sockaddr_in *in = (const void *)&h->addr;

	/* sin_port and sin6_port lie at the same offset. */
	return ntohs(in->sin_port);
}

/* Do a and b take one port of one address (the wildcard takes all)? */
static bool
same_endpoint(const struct sockaddr_storage *a,
              const struct sockaddr_storage *b)
{
	static const uint8_t any6[16];
	const struct sockaddr_in *a4 = (const void *)a, *b4 = (const void *)b;
	const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;

	if (a->ss_family != b->ss_family ||
	    ntohs(a4->sin_port) != ntohs(b4->sin_port))
		return false;
	if (a->ss_family == AF_INET)
		return a4->sin_addr.s_addr == b4->sin_addr.s_addr ||
		       !a4->sin_addr.s_addr || !b4->sin_addr.s_addr;
	return a->ss_family == AF_INET6 &&
	       (!memcmp(&a6->sin6_addr, &b6->sin6_addr, 16) ||
	        !memcmp(&a6->sin6_addr, any6, 16) ||
	        !memcmp(&b6->sin6_addr, any6, 16));
}

static const char *
handoff_address_example(uint8_t mode)
{
	switch (mode) {
	case HANDOFF_PROXY_V2:
		return "PROXY listener, 127.0.0.1:10025 say";
	case HANDOFF_XCLIENT:
		return "port, with XCLIENT allowed to greygate, 127.0.0.1:25 "
		       "say";
	default:
		return "ordinary address and port, the one clients reach, "
		       "203.0.113.1:25 say, or the MTA's own behind a router";
	}
}

/* Transparent mode: connections from the client's own address, whose
 * answers a policy route takes back (handoff_route.h). */
static int
check_transparent(struct config_checking *st)
{
	const struct handoff_config *h = &st->cfg->handoff;
	const struct sockaddr_in *in = (const void *)&h->addr;
	const struct sockaddr_in6 *in6 = (const void *)&h->addr;

	if (h->source[0])
		return refuse(st, "source", "mode",
			      "[handoff] source has no use with mode = "
			      "transparent: each connection comes from its "
			      "client's own address");
	/* A client's address cannot reach the loopback net: the kernel
	 * drops it as a martian. */
	if ((in->sin_family == AF_INET &&
	     (ntohl(in->sin_addr.s_addr) >> 24) == 127) ||
	    (in6->sin6_family == AF_INET6 &&
	     IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)))
		return refuse(st, "address", "mode",
			      "[handoff] address %s is a loopback address: "
			      "with mode = transparent the connection comes "
			      "from the client's address, which the kernel "
			      "never lets reach loopback; give the address "
			      "clients reach the MTA on (this host's own, or "
			      "the MTA's behind a router)",
			      h->address);
	if (handoff_port(h) != st->cfg->nft.smtp_port)
		return refuse(st, "address", "smtp_port",
			      "[handoff] address %s: with mode = transparent "
			      "greygated connects where the client was going, "
			      "the MTA's port %u (smtp_port); give that port",
			      h->address, st->cfg->nft.smtp_port);
	if (h->route_table >= 253 && h->route_table <= 255)
		return refuse(st, "route_table", NULL,
			      "[handoff] route_table %u is one of the kernel's "
			      "own (253 default, 254 main, 255 local): give a "
			      "table greygate may fill and empty alone",
			      h->route_table);
	if (st->cfg->nft.exempt_mark & h->mark)
		return refuse(st, "mark", "exempt_mark",
			      "[handoff] mark %u shares bits with exempt_mark "
			      "%u: give the hand-off a mark of its own",
			      h->mark, st->cfg->nft.exempt_mark);
	return 0;
}

/* The port of an inet listener's address (0: none, or a unix one). */
static uint16_t
listen_port(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)a)->sin_port);
	if (a->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
	return 0;
}

/* Reached from anywhere? Loopback, private (RFC 1918, fc00::/7) and
 * link-local addresses are not; the wildcard is. */
static bool
public_address(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET) {
		const uint8_t *b = (const uint8_t *)&(
		        (const struct sockaddr_in *)a)->sin_addr;

		return !(b[0] == 127 || b[0] == 10 ||
		         (b[0] == 172 && (b[1] & 0xf0) == 16) ||
		         (b[0] == 192 && b[1] == 168) ||
		         (b[0] == 169 && b[1] == 254));
	}
	if (a->ss_family == AF_INET6) {
		const struct in6_addr *in6 =
		        &((const struct sockaddr_in6 *)a)->sin6_addr;

		return !(IN6_IS_ADDR_LOOPBACK(in6) ||
		         (in6->s6_addr[0] & 0xfe) == 0xfc ||
		         IN6_IS_ADDR_LINKLOCAL(in6));
	}
	return false;
}

/* greygated's own listeners (the policy door, the metrics) never on a
 * port the gateway serves or redirects: on smtp_port one would take the
 * MTA's port, and the mail with it. */
static int
check_listener_ports(struct config_checking *st, config_warn_fn *warn,
                     void *ctx)
{
	const struct config *c = st->cfg;
	const struct {
		const char *key, *what;
		uint16_t port;
	} taken[] = {{"smtp_port", "the SMTP port the MTA serves",
	              c->nft.smtp_port},
	             {"tarpit_port", "the tarpit's", c->nft.tarpit_port},
	             {"trap_port", "the stutter's",
	              c->tarpit.stutter_ms ? c->trap_port : 0}};
	const struct {
		const char *key, *name;
		uint16_t port;
	} ours[] = {{"listen", "[policy] listen",
	             c->policy.listen[0] ? listen_port(&c->policy.addr) : 0},
	            {"metrics_listen", "metrics_listen",
	             c->metrics_listen[0] ? listen_port(&c->metrics_addr)
	                                  : 0}};

	for (size_t i = 0; i < 2; i++) {
		if (!ours[i].port)
			continue;
		for (size_t j = 0; j < 3; j++)
			if (ours[i].port == taken[j].port &&
			    (j == 0 || c->gateway))
				return refuse(st, ours[i].key, NULL,
				              "%s is on port %u, %s (%s): it "
				              "would take it; choose another "
				              "port",
				              ours[i].name, ours[i].port,
				              taken[j].what, taken[j].key);
	}
	if (ours[0].port && ours[0].port == ours[1].port)
		return refuse(st, "metrics_listen", "listen",
		              "metrics_listen and [policy] listen are both on "
		              "port %u: each needs its own",
		              ours[0].port);
	if (ours[0].port && public_address(&c->policy.addr))
		tell(warn, ctx,
		     "[policy] listen = %s is reached from anywhere: whoever "
		     "reaches it asks about any client (and passes it by "
		     "retrying): keep it on loopback or a private network",
		     c->policy.listen);
	return 0;
}

/* One folder is the other or holds it ("/a" and "/a/b", trailing
 * slashes aside). */
static bool
folders_nest(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), n;

	while (la > 1 && a[la - 1] == '/')
		la--;
	while (lb > 1 && b[lb - 1] == '/')
		lb--;
	n = la < lb ? la : lb;
	return strncmp(a, b, n) == 0 &&
	       (la == lb || (la < lb ? b[n] : a[n]) == '/');
}

/* The settings together: errors for what can never work, warnings for
 * what is odd. */
int
config_check_together(struct config_checking *st, config_warn_fn *warn,
                      void *ctx)
{
	const struct config *c = st->cfg;
	const struct tarpit_config *t = &c->tarpit;
	const struct grey_config *g = &c->grey;
	uint32_t high = t->stress_high ? t->stress_high
				       : t->max_conns - t->max_conns / 4;
	uint32_t low = t->stress_low ? t->stress_low : t->max_conns / 2;

	if (!GG_WITH_METRICS_HTTP && c->metrics_listen[0])
		return refuse(st, "metrics_listen", NULL, "metrics_listen: %s",
		              BUILD_LACKS("metrics_http"));
	if (!GG_WITH_POLICY_DOOR && c->policy.listen[0])
		return refuse(st, "listen", NULL, "[policy] listen: %s",
		              BUILD_LACKS("policy_door"));
	if (c->store_snapshot.dir[0] &&
	    folders_nest(c->store_snapshot.dir, c->store_dir))
		return refuse(st, "store_snapshot_dir", "store_dir",
			      "store_snapshot_dir %s and store_dir %s are one "
			      "folder or one holds the other: the snapshot "
			      "belongs on the disk that keeps it across a "
			      "reboot, store_dir on tmpfs",
			      c->store_snapshot.dir, c->store_dir);
	if (c->store_url.redis && c->store_url.user[0] &&
	    !c->store_password_file[0])
		return refuse(st, "store", NULL,
			      "store names the ACL user %s but no "
			      "store_password_file says its password",
			      c->store_url.user);
	if (g->delay_sec >= g->retry_window_sec)
		return refuse(st, "delay", "retry_window",
			      "delay (%us) must be shorter than retry_window "
			      "(%us): no retry could ever pass",
			      g->delay_sec, g->retry_window_sec);
	if (c->nft.smtp_port == c->nft.tarpit_port)
		return refuse(st, "smtp_port", "tarpit_port",
			      "smtp_port and tarpit_port are both %u: the "
			      "tarpit needs a port of its own",
			      c->nft.tarpit_port);
	if (t->stutter_ms && (c->trap_port == c->nft.smtp_port ||
			      c->trap_port == c->nft.tarpit_port))
		return refuse(st, "trap_port", NULL,
			      "trap_port %u is taken by %s: the stutter needs "
			      "a port of its own (or stutter = 0)",
			      c->trap_port,
			      c->trap_port == c->nft.smtp_port ? "smtp_port"
							       : "tarpit_port");
	if ((is_set(st, "stress_high") || is_set(st, "max_connections")) &&
	    high > t->max_conns)
		return refuse(st, "stress_high", "max_connections",
			      "stress_high (%u) is above max_connections "
			      "(%u): stress mode could never begin",
			      high, t->max_conns);
	if (low > high)
		return refuse(st, "stress_low", "stress_high",
			      "stress_low (%u) is above stress_high (%u): "
			      "stress mode could never end",
			      low, high);
	if (!c->gateway && !c->policy.listen[0])
		return refuse(st, "gateway", NULL,
			      "gateway = no leaves nothing to do: set [policy] "
			      "listen (inet:127.0.0.1:10023, say) for the "
			      "policy door");
	if (!c->gateway && c->handoff.mode != HANDOFF_OFF)
		return refuse(st, "mode", "gateway",
			      "[handoff] mode = %s needs the gateway (gateway "
			      "= no): only the tarpit hands clients over",
			      config_handoff_mode_name(c->handoff.mode));
	if (c->handoff.mode != HANDOFF_OFF && !c->handoff.address[0])
		return refuse(st, "mode", NULL,
			      "[handoff] mode = %s needs an address (the MTA's "
			      "%s)",
			      config_handoff_mode_name(c->handoff.mode),
			      handoff_address_example(c->handoff.mode));
	/* auto with an address: the address transparent mode would ask */
	if (c->handoff.mode == HANDOFF_TRANSPARENT ||
	    (c->handoff.setting == HANDOFF_AUTO && c->handoff.address[0])) {
		int r = check_transparent(st);

		if (r < 0)
			return r;
	}
	if (c->handoff.mode != HANDOFF_OFF &&
	    handoff_port(&c->handoff) == c->nft.tarpit_port)
		return refuse(st, "address", "tarpit_port",
			      "[handoff] address %s is on tarpit_port: a "
			      "passing client would be handed back to the "
			      "tarpit",
			      c->handoff.address);
	/* (the start refused these two, --check-config passed them: issue
	 * 57 item 9) */
	if (c->handoff.mode != HANDOFF_OFF && c->nft.trap_port &&
	    handoff_port(&c->handoff) == c->nft.trap_port)
		return refuse(st, "address", "trap_port",
			      "[handoff] address %s is on trap_port: a "
			      "passing client would be handed to the stutter",
			      c->handoff.address);
	if (c->handoff.mode != HANDOFF_OFF && c->metrics_listen[0] &&
	    same_endpoint(&c->metrics_addr, &c->handoff.addr))
		return refuse(st, "metrics_listen", "address",
			      "metrics_listen %s is the hand-off's address %s "
			      "(the MTA's): one of the two would not get it",
			      c->metrics_listen, c->handoff.address);
	if (c->handoff.mode != HANDOFF_OFF && c->handoff.source[0] &&
	    c->handoff.address[0] &&
	    !same_family(c->handoff.source, c->handoff.address))
		return refuse(st, "source", "address",
			      "[handoff] source %s and address %s are not of "
			      "one family: greygated cannot connect from one "
			      "to the other",
			      c->handoff.source, c->handoff.address);
	if (c->policy.mta_asks && !c->policy.listen[0])
		return refuse(st, "mta_asks", NULL,
			      "mta_asks = yes says the MTA asks the policy door "
			      "about every recipient: set [policy] listen too");
	/* (auto counts: its resolution at start refuses strict where it
	 * finds no hand-off, config_resolve_auto; issue 57) */
	if (c->tls_mode == CONFIG_TLS_STRICT &&
	    ((c->handoff.mode == HANDOFF_OFF &&
	      c->handoff.setting != HANDOFF_AUTO) ||
	     !c->policy.mta_asks))
		return refuse(st, "tls_pass", NULL,
			      "tls_pass = strict hands a STARTTLS client to the "
			      "MTA unpassed and lets the MTA greylist it: it "
			      "needs [handoff] mode and [policy] mta_asks = yes "
			      "(the MTA asking the door with "
			      "check_policy_service)");
	/* greygate never makes plaintext a session the MTA alone would run
	 * in TLS: without STARTTLS at the tarpit, the attempt that passes
	 * would be handed over, and delivered, in the clear. */
	if (c->tls_mode == CONFIG_TLS_NO && c->handoff.mode != HANDOFF_OFF)
		return refuse(st, "tls_pass", "mode",
			      "tls_pass = no with the hand-off on would "
			      "deliver the passing attempt in the clear where "
			      "the MTA offers STARTTLS: choose tls_pass = "
			      "greylist (the default: greylisted by address at "
			      "STARTTLS, handed over in TLS), strict (the MTA "
			      "asks the policy door: [policy] listen, mta_asks = "
			      "yes), yes (passed at STARTTLS, bots too), or "
			      "[handoff] mode = off");
	if (c->handoff.mode != HANDOFF_OFF && g->tls_pass)
		tell(warn, ctx,
		     "[handoff] with tls_pass = yes: a client that says "
		     "STARTTLS is delivered on its first attempt, so bots "
		     "that say it are not greylisted at all (bench/RESULTS.md "
		     "measures it; tls_pass = greylist, the default, keeps "
		     "them out and the mail in TLS)");
	if (c->handoff.mode == HANDOFF_PROXY_V2 &&
	    handoff_port(&c->handoff) == c->nft.smtp_port)
		tell(warn, ctx,
		     "[handoff] mode = proxy-v2 to port %u: that listener "
		     "must expect a PROXY header (Postfix: "
		     "smtpd_upstream_proxy_protocol = haproxy), or every "
		     "hand-off fails and passing clients hear 451 as before",
		     c->nft.smtp_port);
	if (g->delay_sec == 0)
		tell(warn, ctx, "delay = 0: any second attempt passes, "
				"however soon it comes");
	if (g->refresh_interval_sec >= g->pass_ttl_sec)
		tell(warn, ctx,
		     "refresh_interval (%us) is not shorter than pass_ttl "
		     "(%us): a pass ends before any delivery can refresh it",
		     g->refresh_interval_sec, g->pass_ttl_sec);
	if (t->session_timeout_ms < t->idle_timeout_ms)
		tell(warn, ctx,
		     "session_timeout (%ums) is shorter than idle_timeout "
		     "(%ums): idle_timeout never applies",
		     t->session_timeout_ms, t->idle_timeout_ms);
	/* The door has no authentication (postgrey's neither): on a port,
	 * every local user may ask it, and its passes are the gateway's. */
	if (c->gateway && !strncmp(c->policy.listen, "inet:", 5))
		tell(warn, ctx,
		     "[policy] listen = %s with the gateway: any local user "
		     "can send the door requests, and a client it passes "
		     "passes at the firewall too; listen = unix:/PATH (its "
		     "socket_group alone may write it) keeps it the MTA's",
		     c->policy.listen);
	if (g->prefix4 < 24 || g->prefix6 < 48)
		tell(warn, ctx, "client_prefix4 = %u, client_prefix6 = %u: one "
				"pass opens a network wider than a provider's "
				"bank (/24, /48 or longer is usual)",
		     g->prefix4, g->prefix6);
	return check_listener_ports(st, warn, ctx);
}

int
config_resolve_auto(struct config *cfg, char *err)
{
	struct handoff_config *h = &cfg->handoff;
	int r;

	if (h->setting != HANDOFF_AUTO)
		return 0;
	h->auto_on = false;
	if (!cfg->gateway)
		snprintf(h->auto_why, sizeof(h->auto_why),
			 "no tarpit here (gateway = no)");
	else if (cfg->tls_mode == CONFIG_TLS_NO)
		snprintf(h->auto_why, sizeof(h->auto_why),
			 "tls_pass = no would deliver the passing attempt in "
			 "the clear");
	else if ((r = markroute_check()) < 0)
		snprintf(h->auto_why, sizeof(h->auto_why),
			 "transparent cannot work here: %s",
			 markroute_explain(r));
	else
		h->auto_on = true;
	if (h->auto_on)
		snprintf(h->auto_why, sizeof(h->auto_why),
			 "transparent, once the MTA at %s answers",
			 h->address[0] ? h->address
				       : "the address clients go to");
	config_derive(cfg);
	if (cfg->tls_mode == CONFIG_TLS_STRICT && !h->auto_on) {
		snprintf(err, 512,
		         "tls_pass = strict hands a STARTTLS client to the MTA "
		         "and [handoff] mode = auto found no hand-off here (%s): "
		         "choose a mode (proxy-v2, xclient) or tls_pass = "
		         "greylist",
		         h->auto_why);
		return -EINVAL;
	}
	return 0;
}

int
config_check_system(const struct config *cfg, char *err)
{
	struct passwd *pw = getpwnam(cfg->user);

	struct stat sb;

	/* The store's folder is greygated's own, never a link (refused at
	 * start too: said here first). */
	if (lstat(cfg->store_dir, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
		snprintf(err, 512, "store_dir = %s: not a folder (a link?): "
				   "refused",
			 cfg->store_dir);
		return -ENOTDIR;
	}
	/* No child without the gateway. */
	if (!cfg->gateway)
		return 0;
	if (!pw) {
		snprintf(err, 512, "user = %s: no such user (create it: adduser "
				   "--system --group %s)",
			 cfg->user, cfg->user);
		return -EINVAL;
	}
	if (pw->pw_uid == 0) {
		snprintf(err, 512, "user = %s: the child must not run as root "
				   "(uid 0)",
			 cfg->user);
		return -EINVAL;
	}
	/* On NFLOG the interface only names the rules' iifname, which nft
	 * takes for any name: a typo would greylist nothing, silently. */
	if (strcmp(cfg->interface, "any") && !if_nametoindex(cfg->interface)) {
		snprintf(err, 512, "interface = %s: no such interface (\"any\" "
				   "for every interface)",
			 cfg->interface);
		return -ENODEV;
	}
	if (cfg->store_url.redis && cfg->store_password_file[0]) {
		char password[256];
		int r = store_password_read(cfg->store_password_file, password,
		                            sizeof(password), err);

		explicit_bzero(password, sizeof(password));
		if (r < 0)
			return r;
	}
	if (cfg->handoff.mode == HANDOFF_TRANSPARENT) {
		int r = markroute_check();

		if (r < 0) {
			snprintf(err, 512, "[handoff] mode = transparent: %s",
				 markroute_explain(r));
			return -EINVAL;
		}
	}
	return 0;
}
