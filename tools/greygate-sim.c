// SPDX-License-Identifier: GPL-2.0-or-later
/* greygate-sim: a month of mail (or any workload) through the real policy
 * core and store, in virtual time, to see what a setting would stop and
 * how long it would keep wanted mail waiting, before deploying it. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "recipients.h"
#include "report.h"
#include "signals.h"
#include "sim.h"

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: greygate-sim [--config FILE] [--workload FILE] "
		"[--seed N] [--days N] [--json] [--svg FILE]\n"
		"  --config    greygated's config: its [greylist] settings are "
		"simulated (default: the defaults)\n"
		"  --workload  the senders (default: the article's month, "
		"sim-month.ini)\n");
}

static const char *
default_workload(void)
{
	static const char *const paths[] = {SIM_WORKLOAD_INSTALLED,
					    SIM_WORKLOAD_SOURCE};

	for (size_t i = 0; i < sizeof(paths) / sizeof(*paths); i++)
		if (access(paths[i], R_OK) == 0)
			return paths[i];
	return paths[0];
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

struct delay_stats {
	uint32_t median, p90, p99, max;
	double mean;
};

/* Over d[0..n), sorted already. */
static void
delay_stats(const uint32_t *d, uint64_t n, struct delay_stats *s)
{
	double sum = 0;

	memset(s, 0, sizeof(*s));
	if (!n)
		return;
	for (uint64_t i = 0; i < n; i++)
		sum += d[i];
	s->mean = sum / (double)n;
	s->median = d[(n - 1) / 2];
	s->p90 = d[(n * 90 + 99) / 100 - 1];
	s->p99 = d[(n * 99 + 99) / 100 - 1];
	s->max = d[n - 1];
}

static double
pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0;
}

static void
print_text(const struct sim_workload *w, const char *path, bool handoff,
	   bool pool, const struct sim_stats *st, const struct delay_stats *ds,
	   const struct delay_stats *tarpit)
{
	printf("\nsimulation: %u days, seed %llu, workload %s, hand-off %s, "
	       "pool senders by SPF %s\n",
	       w->days, (unsigned long long)w->seed, path,
	       handoff ? "on" : "off", pool ? "on" : "off");
	printf("legitimate messages %10llu  delivered %llu (%.1f%%), lost %llu "
	       "(%llu refused), delayed %llu (%.1f%%)\n",
	       (unsigned long long)st->legit_messages,
	       (unsigned long long)st->legit_delivered,
	       pct(st->legit_delivered, st->legit_messages),
	       (unsigned long long)st->legit_lost,
	       (unsigned long long)st->legit_refused,
	       (unsigned long long)st->legit_delayed,
	       pct(st->legit_delayed, st->legit_messages));
	printf("  delay to delivery of the %llu that met the tarpit: median "
	       "%us, mean %.0fs, p90 %us, p99 %us, max %us\n",
	       (unsigned long long)st->ntarpit_delays, tarpit->median, tarpit->mean,
	       tarpit->p90, tarpit->p99, tarpit->max);
	printf("  delay of the delayed: median %us, mean %.0fs, p90 %us, p99 "
	       "%us, max %us\n",
	       ds->median, ds->mean, ds->p90, ds->p99, ds->max);
	printf("unwanted messages   %10llu  stopped %llu (%.1f%%; %llu refused), "
	       "let through %llu (%llu by a STARTTLS pass), in %llu attempts\n",
	       (unsigned long long)st->unwanted_messages,
	       (unsigned long long)(st->unwanted_messages -
				    st->unwanted_delivered),
	       pct(st->unwanted_messages - st->unwanted_delivered,
		   st->unwanted_messages),
	       (unsigned long long)st->unwanted_refused,
	       (unsigned long long)st->unwanted_delivered,
	       (unsigned long long)st->unwanted_by_tls,
	       (unsigned long long)st->unwanted_attempts);
	printf("  of them: %llu let through on their first attempt; bots that "
	       "retry (greylisting does not stop them by design) %llu, let "
	       "through %llu\n",
	       (unsigned long long)st->unwanted_first,
	       (unsigned long long)st->retrying_messages,
	       (unsigned long long)st->retrying_delivered);
	printf("store at the end: %llu triplets, %llu passed clients, %llu KiB "
	       "on disk; purged %llu triplets, %llu passes; "
	       "%llu sessions\n",
	       (unsigned long long)st->store_triplets,
	       (unsigned long long)st->store_passes,
	       (unsigned long long)st->store_bytes / 1024,
	       (unsigned long long)st->purged_triplets,
	       (unsigned long long)st->purged_passes,
	       (unsigned long long)st->sessions);
	printf("store writes: %llu commits, %llu KiB written by LMDB\n",
	       (unsigned long long)st->store_commits,
	       (unsigned long long)st->store_written / 1024);
	if (st->snapshots)
		printf("store snapshots: %llu taken, %llu KiB written (the "
		       "store's own writes above went to tmpfs)\n",
		       (unsigned long long)st->snapshots,
		       (unsigned long long)st->snapshot_written / 1024);
	if (st->dns_asked + st->dns_cached)
		printf("DNS (lookups): %llu questions sent, %llu answered from "
		       "the cache (%.1f%%); %.2f sent a session\n",
		       (unsigned long long)st->dns_asked,
		       (unsigned long long)st->dns_cached,
		       pct(st->dns_cached, st->dns_asked + st->dns_cached),
		       st->sessions ? (double)st->dns_asked /
		                              (double)st->sessions
		                    : 0);
}

static void
print_json(const struct report *rep, bool handoff, bool pool,
	   const struct sim_stats *st, const struct delay_stats *ds,
	   const struct delay_stats *tarpit)
{
	printf("{\"report\":");
	report_print_json(stdout, rep);
	printf(",\"sim\":{\"handoff\":%s,\"pool_spf\":%s,"
	       "\"legit_messages\":%llu,"
	       "\"legit_delivered\":%llu,"
	       "\"legit_lost\":%llu,\"legit_delayed\":%llu,\"delay\":{"
	       "\"median\":%u,\"mean\":%.1f,\"p90\":%u,\"p99\":%u,\"max\":%u},"
	       "\"met_tarpit\":%llu,\"delay_tarpit\":{\"median\":%u,\"mean\":%.1f,\"p90\":%u,"
	       "\"p99\":%u,\"max\":%u},"
	       "\"unwanted_messages\":%llu,\"unwanted_delivered\":%llu,"
	       "\"unwanted_by_tls\":%llu,\"unwanted_first\":%llu,"
	       "\"retrying_messages\":%llu,\"retrying_delivered\":%llu,"
	       "\"legit_refused\":%llu,\"unwanted_refused\":%llu,"
	       "\"unwanted_attempts\":%llu,\"sessions\":%llu,"
	       "\"store_triplets\":%llu,\"store_passes\":%llu,"
	       "\"store_bytes\":%llu,"
	       "\"purged_triplets\":%llu,\"purged_passes\":%llu,"
	       "\"store_commits\":%llu,\"store_written\":%llu,"
	       "\"snapshots\":%llu,\"snapshot_written\":%llu,"
	       "\"dns_asked\":%llu,\"dns_cached\":%llu}}\n",
	       handoff ? "true" : "false", pool ? "true" : "false",
	       (unsigned long long)st->legit_messages,
	       (unsigned long long)st->legit_delivered,
	       (unsigned long long)st->legit_lost,
	       (unsigned long long)st->legit_delayed, ds->median, ds->mean,
	       ds->p90, ds->p99, ds->max,
	       (unsigned long long)st->ntarpit_delays, tarpit->median, tarpit->mean,
	       tarpit->p90,
	       tarpit->p99, tarpit->max,
	       (unsigned long long)st->unwanted_messages,
	       (unsigned long long)st->unwanted_delivered,
	       (unsigned long long)st->unwanted_by_tls,
	       (unsigned long long)st->unwanted_first,
	       (unsigned long long)st->retrying_messages,
	       (unsigned long long)st->retrying_delivered,
	       (unsigned long long)st->legit_refused,
	       (unsigned long long)st->unwanted_refused,
	       (unsigned long long)st->unwanted_attempts,
	       (unsigned long long)st->sessions,
	       (unsigned long long)st->store_triplets,
	       (unsigned long long)st->store_passes,
	       (unsigned long long)st->store_bytes,
	       (unsigned long long)st->purged_triplets,
	       (unsigned long long)st->purged_passes,
	       (unsigned long long)st->store_commits,
	       (unsigned long long)st->store_written,
	       (unsigned long long)st->snapshots,
	       (unsigned long long)st->snapshot_written,
	       (unsigned long long)st->dns_asked,
	       (unsigned long long)st->dns_cached);
}

/* With [greylist] valid_recipients named, the model's recipients stand
 * for the file: example.org's user0 to userN (N the largest rcpt_pool),
 * so a class's unknown_recipients share (nobodyN@example.org) is
 * refused at the tarpit as greygated refuses them. */
static int
model_recipients(const struct sim_workload *w, struct grey *grey)
{
	char path[] = "/tmp/greygate-sim-rcpt-XXXXXX", err[256];
	uint32_t pool = 0;
	struct recipients *r;
	FILE *f;
	int fd = mkstemp(path);

	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	for (int i = 0; i < w->ncls; i++)
		if (w->cls[i].rcpt_pool > pool)
			pool = w->cls[i].rcpt_pool;
	for (uint32_t u = 0; u < pool; u++)
		fprintf(f, "user%u@example.org\n", u);
	if (fclose(f) != 0) {
		unlink(path);
		return -EIO;
	}
	r = recipients_load(path, err, sizeof(err));
	unlink(path);
	if (!r)
		return -EINVAL;
	grey_set_valid_recipients(grey, r);
	return 0;
}

static int
run(const struct config *cfg, struct sim_workload *w, const char *wpath,
    bool json, const char *svg)
{
	struct store *store;
	struct grey *grey;
	struct sim_stats st;
	struct delay_stats ds, tarpit;
	struct report rep;
	bool handoff = cfg->handoff.mode != HANDOFF_OFF;
	/* (SPF and FCrDNS are a class's say: the sim asks no DNS) */
	bool pool = cfg->signals.lookups && cfg->signals.pool_spf;
	struct sim_signals sig = {
		.lookups = cfg->signals.lookups,
		.dnsbl = cfg->signals.dnsbl_sites[0] != 0,
		.sender_domain = cfg->signals.sender_domain,
		.rules = signals_rules(&cfg->signals)};
	struct timespec t0, t1;
	int r = store_open_temp(&store);

	if (r < 0) {
		fprintf(stderr, "greygate-sim: store: %s\n", strerror(-r));
		return 2;
	}
	grey = grey_new(&cfg->grey);
	if (!grey) {
		store_close(store);
		return 2;
	}
	for (int i = 0; i < cfg->nexempt; i++)
		grey_exempt_add(grey, cfg->exempt[i]);
	for (int i = 0; i < cfg->ntraps; i++)
		grey_trap_add(grey, cfg->traps[i]);
	if (cfg->valid_recipients[0] && (r = model_recipients(w, grey)) < 0) {
		fprintf(stderr, "greygate-sim: the model's recipients: %s\n",
		        strerror(-r));
		grey_free(grey);
		store_close(store);
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = sim_run(w, &cfg->grey, handoff, &sig, grey, store,
	            cfg->store_commit_ms,
	            cfg->store_snapshot.dir[0] ? cfg->store_snapshot.interval_ms : 0,
	            &st);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (r < 0) {
		fprintf(stderr, "greygate-sim: %s\n", strerror(-r));
	} else {
		report_compute(&rep, grey, SIM_EPOCH,
			       SIM_EPOCH + (int64_t)w->days * 86400);
		/* Sorted, the delayed (more than 0 s) are the tail. */
		qsort(st.delays, st.ndelays, sizeof(*st.delays), cmp_u32);
		qsort(st.tarpit_delays, st.ntarpit_delays,
		      sizeof(*st.tarpit_delays), cmp_u32);
		delay_stats(st.tarpit_delays, st.ntarpit_delays, &tarpit);
		delay_stats(st.delays + (st.ndelays - st.legit_delayed),
			    st.legit_delayed, &ds);
		if (json) {
			print_json(&rep, handoff, pool, &st, &ds, &tarpit);
		} else {
			report_print_text(stdout, &rep);
			print_text(w, wpath, handoff, pool, &st, &ds, &tarpit);
		}
		if (svg) {
			FILE *f = fopen(svg, "w");

			if (f)
				report_print_svg(f, &rep);
			if (!f || fclose(f) != 0) {
				fprintf(stderr, "greygate-sim: %s: %s\n", svg,
					strerror(errno));
				r = -EIO;
			}
		}
		fprintf(stderr, "greygate-sim: %llu sessions in %.1f s\n",
			(unsigned long long)st.sessions,
			(double)(t1.tv_sec - t0.tv_sec) +
				(double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	}
	free(st.delays);
	free(st.tarpit_delays);
	grey_free(grey);
	store_close(store);
	return r < 0 ? 2 : 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"workload", required_argument, NULL, 'w'},
		{"seed", required_argument, NULL, 's'},
		{"days", required_argument, NULL, 'd'},
		{"json", no_argument, NULL, 'j'},
		{"svg", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static struct config cfg;
	static struct sim_workload w;
	const char *cpath = NULL, *wpath = default_workload(), *svg = NULL;
	long long seed = -1, days = -1;
	char err[512];
	bool json = false;
	int c;

	while ((c = getopt_long(argc, argv, "c:w:s:d:jS:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cpath = optarg;
			break;
		case 'w':
			wpath = optarg;
			break;
		case 's':
			seed = atoll(optarg);
			break;
		case 'd':
			days = atoll(optarg);
			if (days <= 0 || days > 3650) {
				fprintf(stderr, "greygate-sim: bad --days\n");
				return 2;
			}
			break;
		case 'j':
			json = true;
			break;
		case 'S':
			svg = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	log_init("greygate-sim", false, LOG_LEVEL_WARN);
	config_defaults(&cfg);
	if (cpath && config_load(&cfg, cpath, false, NULL, NULL, err) < 0) {
		fprintf(stderr, "greygate-sim: %s\n", err);
		return 2;
	}
	/* The simulated gateway has an MTA that answers where its clients
	 * go: [handoff] mode = auto is the transparent hand-off, as
	 * greygated makes it where the kernel can (config_resolve_auto). */
	cfg.handoff.auto_on = cfg.handoff.setting == HANDOFF_AUTO &&
			      cfg.gateway && cfg.tls_mode != CONFIG_TLS_NO;
	config_derive(&cfg);
	if (sim_load(wpath, &w, err) < 0) {
		fprintf(stderr, "greygate-sim: %s\n", err);
		return 2;
	}
	if (seed >= 0)
		w.seed = (uint64_t)seed;
	if (days > 0)
		w.days = (uint32_t)days;
	return run(&cfg, &w, wpath, json, svg);
}
