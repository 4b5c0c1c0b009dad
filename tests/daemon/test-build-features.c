// SPDX-License-Identifier: GPL-2.0-or-later
/* What a build has and lacks (meson features redis, metrics_http, pcre2,
 * policy_door): greygated --version says it, a config that asks for a
 * part the build lacks is refused by name (and one it has is taken), the
 * left-out parts' entry points answer with the same words, and the
 * admin's patterns work in the build's engine. Run in the full build and
 * in the small one (scripts/test). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config_parts.h"
#include "build_features.h"
#include "check.h"
#include "config.h"
#include "metrics_http.h"
#include "pattern.h"
#include "policy_door.h"

static char path[64];
static char err[512];
static struct config cfg;

static void
on_warn(const char *text, void *ctx)
{
}

static int
load(const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f);
	fputs(text, f);
	fclose(f);
	config_defaults(&cfg);
	err[0] = 0;
	return config_load(&cfg, path, false, on_warn, NULL, err);
}

static void
test_version_names_the_parts(void)
{
	CHECK(strstr(build_features, GG_WITH_REDIS ? "+redis" : "-redis"));
	CHECK(strstr(build_features,
	             GG_WITH_METRICS_HTTP ? "+metrics_http" : "-metrics_http"));
	CHECK(strstr(build_features, GG_WITH_PCRE2 ? "+pcre2" : "-pcre2"));
	CHECK(strstr(build_features,
	             GG_WITH_POLICY_DOOR ? "+policy_door" : "-policy_door"));
}

/* text asks for feature: taken when built with it, else refused with the
 * line and the build's words. */
static void
asks(const char *text, bool built, const char *feature)
{
	char words[120];

	if (built) {
		CHECK_INT(load(text), 0);
		return;
	}
	CHECK(load(text) < 0);
	snprintf(words, sizeof(words), "built without %s (meson -D%s=disabled)",
	         feature, feature);
	CHECK(strstr(err, words));
	CHECK(strstr(err, ":2: "));
}

static void
test_config_asks_for_what_the_build_has(void)
{
	asks("[gateway]\nstore = redis://198.51.100.9/2\n", GG_WITH_REDIS,
	     "redis");
	asks("[gateway]\nstore = redis+unix:///run/r.sock\n", GG_WITH_REDIS,
	     "redis");
	asks("[gateway]\nmetrics_listen = 127.0.0.1:9154\n",
	     GG_WITH_METRICS_HTTP, "metrics_http");
	asks("[policy]\nlisten = inet:127.0.0.1:10023\n", GG_WITH_POLICY_DOOR,
	     "policy_door");
	/* and the rest is the same */
	CHECK_INT(load("[gateway]\nstore = lmdb\n"), 0);
}

/* What a left-out part's entry points answer (never reached through a
 * config the check took). */
static void
test_left_out_entry_points(void)
{
	config_defaults(&cfg);
	snprintf(cfg.metrics_listen, sizeof(cfg.metrics_listen),
	         "127.0.0.1:9154");
	snprintf(cfg.policy.listen, sizeof(cfg.policy.listen),
	         "inet:127.0.0.1:10023");
#if !GG_WITH_METRICS_HTTP
	{
		struct metrics_listener *m = (void *)1;
		struct metrics_listen_settings part;

		config_metrics_listen_part(&cfg, &part);
		CHECK_INT(metrics_listen_open(NULL, &part, NULL, NULL, &m, err),
		          -ENOTSUP);
		CHECK(!m);
		CHECK(strstr(err, "metrics_listen: this greygated was built "
		                  "without metrics_http"));
	}
#endif
#if !GG_WITH_POLICY_DOOR
	{
		struct policy_door *door = (void *)1;
		struct policy_door_stats s = {.requests = 9};
		struct policy_door_settings part;

		config_door_part(&cfg, &part);
		CHECK_INT(policy_door_open(NULL, &part, NULL, &door, err),
		          -ENOTSUP);
		CHECK(!door);
		CHECK(strstr(err, "without policy_door"));
		part.policy.listen[0] = 0;
		CHECK_INT(policy_door_open(NULL, &part, NULL, &door, err), 0);
		CHECK(!door);
		policy_door_get_stats(NULL, &s);
		CHECK_INT(s.requests, 0);
	}
#endif
}

/* The shipped patterns' forms work in either engine, in any case; a
 * pattern that does not compile is refused with the engine's words. */
static void
test_patterns(void)
{
	/* (the length given, not the NUL: "xx" is not part of it) */
	struct pattern *p = pattern_compile("(^|[.-])dyn(amic)?[0-9]*[.-]xx",
	                                    28, err, sizeof(err));

	CHECK(p);
	CHECK_INT(pattern_search(p, "host.DYNAMIC12.example.net"), 1);
	CHECK_INT(pattern_search(p, "host.dyn-12.example.net"), 1);
	CHECK_INT(pattern_search(p, "mail.dynamo.example.net"), 0);
	pattern_free(p);
	CHECK(!pattern_compile("dyn(", 4, err, sizeof(err)));
	CHECK(err[0]);
	if (GG_WITH_PCRE2) {
		CHECK_STR(pattern_syntax, "PCRE2");
		CHECK(strstr(err, "at byte"));
	} else {
		CHECK_STR(pattern_syntax, "POSIX extended");
		CHECK(strstr(err, "(POSIX extended syntax)"));
	}
	/* Perl's \d: digits to PCRE2; to the C library's regcomp "d" (glibc)
	 * or nothing defined, so refused there rather than matched wrongly */
	p = pattern_compile("^mx\\d+\\.", 8, err, sizeof(err));
	if (GG_WITH_PCRE2) {
		CHECK(p);
		CHECK_INT(pattern_search(p, "MX12.example.net"), 1);
		CHECK_INT(pattern_search(p, "mxd.example.net"), 0);
		pattern_free(p);
	} else {
		CHECK(!p);
		CHECK(strstr(err, "at byte 4: \\d is not POSIX extended syntax"));
	}
}

int
main(void)
{
	snprintf(path, sizeof(path), "/tmp/gg-features-XXXXXX");
	CHECK(mkstemp(path) >= 0);
	printf("this build: %s\n", build_features);
	RUN(test_version_names_the_parts);
	RUN(test_config_asks_for_what_the_build_has);
	RUN(test_left_out_entry_points);
	RUN(test_patterns);
	unlink(path);
	return 0;
}
