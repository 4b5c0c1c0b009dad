// SPDX-License-Identifier: GPL-2.0-or-later
/* greygatectl check (issue 59): what is wrong with this gateway, one
 * line a check, "OK", "WARN" or "FAIL", each saying what to do. It reads
 * the running greygated (the root's figures, the kernel's tables, the
 * store's disk, the sockets) and asks the MTA behind the hand-off now;
 * greygatectl's exit status is the worst line's (0, 1, 2). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <netinet/in.h> /* (before linux/netfilter.h: its in.h) */
#include <linux/netfilter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/timex.h>
#include <time.h>

#include "commands-int.h"
#include "config.h"
#include "control.h"
#include "fmt.h"
#include "handoff.h"
#include "metrics.h"
#include "nftset.h"

/* greygate's steering chain: nat, prerouting, dstnat - 10 (ruleset.c) */
#define STEER_PRIORITY (-110)
/* The store's disk: below these, WARN, then FAIL (LMDB's map grows into
 * it; a write that finds no room is redone later, but the decisions of
 * the time between are lost at a crash). */
#define DISK_WARN_PCT 10
#define DISK_FAIL_BYTES (64ull << 20)
/* A clock before this greygate was written is a board without one. */
#define CLOCK_EARLIEST 1767225600 /* 2026-01-01 */

struct check {
	struct metrics_snapshot s;
	const struct command_links *links;
	struct handoff_waiter waiter;
	void *wake;    /* control's, while the MTA is asked */
	bool asking;   /* the probe is under way */
	bool told;     /* ... and it ended */
};

/* One check's line: level 0 OK, 1 WARN, 2 FAIL (greygatectl's exit
 * status is the worst line's). */
static void
say(FILE *out, int level, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static void
say(FILE *out, int level, const char *fmt, ...)
{
	static const char *const names[] = {"OK  ", "WARN", "FAIL"};
	va_list ap;

	fprintf(out, "%s ", names[level]);
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fputc('\n', out);
}

/* --- the child --- */

static void
check_child(struct check *c, FILE *out)
{
	const struct metrics_snapshot *s = &c->s;
	int64_t up = s->now - s->child_since;

	if (!s->child_pid) {
		say(out, 2, "child: none running (%u started so far): the "
		    "tarpit and the sensor are down; the log says why it "
		    "ended", s->child_starts);
		return;
	}
	if (s->child_starts > 1 && up < 600)
		say(out, 1, "child: pid %d, up %" PRId64 " s, restarted (%u "
		    "starts): the log says why the last one ended",
		    (int)s->child_pid, up, s->child_starts);
	else
		say(out, 0, "child: pid %d, up %" PRId64 " s",
		    (int)s->child_pid, up);
}

/* --- the kernel's tables --- */

struct hooks {
	const char *table;
	bool ours;                /* greygate's steering chain found */
	int32_t ours_at;
	char before[256];         /* another table's nat chain run first */
	int nbefore;
};

static int
on_chain(const struct nftset_chain *ch, void *ctx)
{
	struct hooks *h = ctx;
	bool same_family = ch->family == NFPROTO_INET ||
	                   ch->family == NFPROTO_IPV4 ||
	                   ch->family == NFPROTO_IPV6;

	if (ch->hook != NF_INET_PRE_ROUTING || !same_family)
		return 0;
	if (ch->family == NFPROTO_INET && !strcmp(ch->table, h->table)) {
		if (!strcmp(ch->name, "prerouting")) {
			h->ours = true;
			h->ours_at = ch->priority;
		}
		return 0;
	}
	/* A nat chain first (or at the same priority: either order) may
	 * redirect or forward port 25 before greygate sees it. */
	if (strcmp(ch->type, "nat") || ch->priority > STEER_PRIORITY)
		return 0;
	if (h->nbefore++ < 3) {
		size_t n = strlen(h->before);

		snprintf(h->before + n, sizeof(h->before) - n,
		         "%stable %s %s chain %s at %d",
		         n ? ", " : "",
		         ch->family == NFPROTO_INET   ? "inet"
		         : ch->family == NFPROTO_IPV4 ? "ip"
		                                      : "ip6",
		         ch->table, ch->name, (int)ch->priority);
	}
	return 0;
}

static void
check_table(struct check *c, FILE *out)
{
	struct hooks h = {.table = c->s.cfg->table};
	int r;

	if (!c->links->nft)
		return;
	r = nftset_each_base_chain(c->links->nft, on_chain, &h);
	if (r < 0) {
		say(out, 2, "table: the kernel's chains cannot be read: %s",
		    strerror(-r));
		return;
	}
	if (!h.ours) {
		say(out, 2, "table: inet %s has no prerouting chain: nobody "
		    "is greylisted; restart greygated", h.table);
		return;
	}
	if (h.nbefore)
		say(out, 1, "table: inet %s steers port 25 at priority %d, "
		    "but %s %s first: a redirect or forward of port 25 there "
		    "passes greylisting by; give that chain a priority above "
		    "%d, or leave port 25 to greygate",
		    h.table, (int)h.ours_at, h.before,
		    h.nbefore == 1 ? "runs" : "run", STEER_PRIORITY);
	else
		say(out, 0, "table: inet %s steers port 25 at priority %d, "
		    "before every other nat chain on prerouting",
		    h.table, (int)h.ours_at);
}

/* --- the store --- */

static void
check_store(struct check *c, FILE *out)
{
	const struct metrics_snapshot *s = &c->s;
	const char *dir = s->cfg->store_dir;
	struct statvfs v;
	unsigned long long free_bytes, pct;

	if (s->shared.remote) {
		if (s->shared.up)
			say(out, 0, "store: %s: up, agreed", s->shared.where);
		else
			say(out, s->shared.disagreed ? 2 : 1,
			    "store: %s: %s%s%s", s->shared.where,
			    s->shared.disagreed ? "holds other settings: this "
			                          "gateway yields"
			                        : "not reached: this gateway "
			                          "decides from what it keeps",
			    s->shared.last_error[0] ? ": " : "",
			    s->shared.last_error);
	}
	if (s->store.write_errors) {
		say(out, 2, "store: %" PRIu64 " write(s) or commit(s) "
		    "failed in %s: the log says why (a full disk?)",
		    s->store.write_errors, dir);
		return;
	}
	if (statvfs(dir, &v) < 0) {
		say(out, 2, "store: %s: %s", dir, strerror(errno));
		return;
	}
	free_bytes = (unsigned long long)v.f_bavail * v.f_frsize;
	pct = v.f_blocks ? 100ull * v.f_bavail / v.f_blocks : 0;
	if (free_bytes < DISK_FAIL_BYTES)
		say(out, 2, "store: %s has %llu MiB free: the store cannot "
		    "grow; make room", dir, free_bytes >> 20);
	else if (pct < DISK_WARN_PCT)
		say(out, 1, "store: %s has %llu%% free (%llu MiB): make "
		    "room before the store fills it", dir, pct,
		    free_bytes >> 20);
	else
		say(out, 0, "store: %s writable, %llu MiB free (%llu%%), "
		    "%" PRIu64 " MiB mapped", dir, free_bytes >> 20, pct,
		    s->store.map_bytes >> 20);
}

/* --- DNS --- */

static void
check_dns(struct check *c, FILE *out)
{
	const struct metrics_snapshot *s = &c->s;

	if (!s->dns_on) {
		say(out, 0, "DNS: lookups off: every new client is "
		    "greylisted");
		return;
	}
	if (s->dns.silent)
		say(out, 2, "DNS: no server answers (%" PRIu64 " of %" PRIu64
		    " questions timed out): every new client is greylisted "
		    "as unknown; see [signals] dns_servers",
		    s->dns.timeouts, s->dns.asked);
	else if (s->dns.asked && s->dns.timeouts * 10 > s->dns.asked)
		say(out, 1, "DNS: answering, but %" PRIu64 " of %" PRIu64
		    " questions timed out", s->dns.timeouts, s->dns.asked);
	else
		say(out, 0, "DNS: answering (%" PRIu64 " questions, %" PRIu64
		    " timed out)", s->dns.asked, s->dns.timeouts);
}

/* --- the clock --- */

static void
check_clock(struct check *c, FILE *out)
{
	struct timex tx = {0};
	int state = adjtimex(&tx);
	char when[FMT_UTC_MAX];

	if (c->s.now < CLOCK_EARLIEST)
		say(out, 2, "clock: it says %" PRId64 " s since 1970, before "
		    "2026: a board without a clock? greylisting's delays and "
		    "the passes' ages are wrong until it is set (NTP)",
		    c->s.now);
	else
		say(out, 0, "clock: %s UTC%s", fmt_utc(c->s.now, when),
		    state == TIME_ERROR
		            ? ", not synchronised (no NTP here: a clock set "
		              "by hand stretches or shortens the delays as "
		              "it drifts or jumps)"
		            : ", synchronised");
}

/* --- the sockets --- */

static void
check_socket(struct check *c, FILE *out, const char *what,
             const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		say(out, 2, "%s: %s: %s", what, path, strerror(errno));
		return;
	}
	if (st.st_mode & (S_IWOTH | S_IROTH))
		say(out, 2, "%s: %s is open to every local user (mode "
		    "%04o): chmod o-rw it, or restart greygated, which makes "
		    "it so", what, path, (unsigned)(st.st_mode & 07777));
	else
		say(out, 0, "%s: %s mode %04o, uid %u gid %u", what, path,
		    (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid,
		    (unsigned)st.st_gid);
}

static void
check_sockets(struct check *c, FILE *out)
{
	const struct config *cfg = c->s.cfg;

	check_socket(c, out, "control socket", cfg->control_socket);
	if (!strncmp(cfg->policy.listen, "unix:", 5))
		check_socket(c, out, "policy door", cfg->policy.listen + 5);
}

/* --- the hand-off --- */

static void
on_probe_ended(struct handoff_waiter *w)
{
	struct check *c = (struct check *)((char *)w - offsetof(struct check,
	                                                         waiter));

	c->told = true;
	if (c->wake)
		control_stream_wake(c->wake);
}

static void
say_handoff(struct check *c, FILE *out)
{
	const struct config *cfg = c->s.cfg;
	const char *mode = config_handoff_mode_name(cfg->handoff.mode);
	char where[160];

	handoff_auto_text(c->links->handoff, where, sizeof(where));
	if (handoff_mta_answers(c->links->handoff))
		say(out, 0, "hand-off: %s: %s", mode, where);
	else
		say(out, 2, "hand-off: %s: the MTA does not answer as %s: "
		    "passing clients hear 451 until it does (%s); see its "
		    "listener and [handoff] address", mode, mode, where);
}

static void
check_handoff_start(struct check *c, FILE *out)
{
	const struct config *cfg = c->s.cfg;

	if (cfg->handoff.mode == HANDOFF_OFF) {
		if (cfg->handoff.setting == HANDOFF_AUTO)
			say(out, 1, "hand-off: auto, off: %s: a passing "
			    "attempt hears 451 and its retry passes",
			    cfg->handoff.auto_why);
		else
			say(out, 0, "hand-off: off: a passing attempt hears "
			    "451 and its retry passes");
		return;
	}
	c->waiter.fn = on_probe_ended;
	c->asking = handoff_probe_now(c->links->handoff, &c->waiter);
	if (c->asking)
		return;
	if (!handoff_knows_mta(c->links->handoff)) /* (auto, at start) */
		say(out, 0, "hand-off: auto: waiting for the first client "
		    "to show where the MTA is (until then a passing attempt "
		    "hears 451)");
	else
		say_handoff(c, out);
}

/* --- the command --- */

static int
check_more(void *state, FILE *out, void *wake)
{
	struct check *c = state;

	if (c->asking && !c->told) {
		c->wake = wake;
		return CONTROL_MORE_LATER;
	}
	say_handoff(c, out);
	return 0;
}

static void
check_free(void *state)
{
	struct check *c = state;

	if (c->asking && !c->told)
		handoff_wait_cancel(c->links->handoff, &c->waiter);
	free(c);
}

int
check_start(const struct command_links *links, FILE *out,
            struct control_stream *stream)
{
	struct check *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->links = links;
	links->figures(links->root, &c->s);
	if (c->s.cfg->gateway) {
		check_child(c, out);
		check_table(c, out);
	}
	check_store(c, out);
	check_dns(c, out);
	check_clock(c, out);
	check_sockets(c, out);
	if (c->s.cfg->gateway && links->handoff)
		check_handoff_start(c, out);
	if (!c->asking) {
		free(c);
		return 0;
	}
	stream->state = c;
	stream->more_later = check_more;
	stream->free = check_free;
	return 0;
}
