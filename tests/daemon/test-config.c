// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the config reader: numbers in decimal only and checked before
 * they can overflow, settings that would stop all mail refused with
 * file:line, odd ones warned of, long lines refused with their number
 * (lists go on over lines instead), empty values and directories
 * refused, the child's user checked. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "config.h"

static char path[64];
static char err[512];
static char warned[1024];
static struct config cfg;

static void
on_warn(const char *text, void *ctx)
{
	snprintf(warned + strlen(warned), sizeof(warned) - strlen(warned),
	         "%s\n", text);
}

/* Loads text as a config file. Return: config_load's value. */
static int
load(const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f);
	fputs(text, f);
	fclose(f);
	config_defaults(&cfg);
	err[0] = warned[0] = 0;
	return config_load(&cfg, path, false, on_warn, NULL, err);
}

/* The error, without the temp file's name. */
static const char *
why(void)
{
	size_t n = strlen(path);

	return strncmp(err, path, n) == 0 ? err + n : err;
}

static void
test_numbers_are_decimal(void)
{
	CHECK_INT(load("[greylist]\nclient_prefix4 = 024\n"), 0);
	CHECK_INT(cfg.grey.prefix4, 24);
	CHECK_INT(load("[tarpit]\nmax_per_client = 010\n"), 0);
	CHECK_INT(cfg.tarpit.max_per_client, 10);
	CHECK(load("[greylist]\nclient_prefix4 = 0x18\n") < 0);
	CHECK_STR(why(), ":2: [greylist] client_prefix4 = 0x18: want a whole "
	                 "number (decimal digits)");
	CHECK(load("[tarpit]\nmax_per_client = -1\n") < 0);
	CHECK(load("[tarpit]\nmax_per_client = +5\n") < 0);
}

static void
test_durations_do_not_overflow(void)
{
	uint32_t sec;

	CHECK(load("[greylist]\ndelay = 307445734561825861m\n") < 0);
	CHECK_STR(why(), ":2: [greylist] delay = 307445734561825861m: out of "
	                 "range (0s to 2592000s)");
	CHECK(load("[greylist]\ndelay = 99999999999999999999999\n") < 0);
	CHECK_INT(config_parse_duration("213503982334602d", &sec), -ERANGE);
	CHECK_INT(config_parse_duration("49710d", &sec), 0);
	CHECK_INT(sec, 49710u * 86400);
	CHECK_INT(config_parse_duration("49711d", &sec), -ERANGE);
	CHECK_INT(config_parse_duration("5m", &sec), 0);
	CHECK_INT(sec, 300);
	CHECK_INT(config_parse_duration("m", &sec), -EINVAL);
	CHECK_INT(config_parse_duration("5x", &sec), -EINVAL);
	CHECK_INT(config_parse_duration("", &sec), -EINVAL);
	CHECK(load("[tarpit]\nstutter = 99999999999ms\n") < 0);
	CHECK_INT(load("[tarpit]\nstutter = 250ms\n"), 0);
	CHECK_INT(cfg.tarpit.stutter_ms, 250);
}

static void
test_settings_that_stop_all_mail(void)
{
	CHECK(load("[tarpit]\nidle_timeout = 0\n") < 0);
	CHECK_STR(why(), ":2: [tarpit] idle_timeout = 0: out of range (1000ms "
	                 "to 3600s)");
	CHECK(load("[tarpit]\nsession_timeout = 0\n") < 0);
	CHECK(load("[greylist]\ndelay = 1d\nretry_window = 1h\n") < 0);
	CHECK_STR(why(), ":3: delay (86400s) must be shorter than "
	                 "retry_window (3600s): no retry could ever pass");
	CHECK(load("[greylist]\nretry_window = 1m\n") < 0);
	CHECK_STR(why(), ":2: delay (300s) must be shorter than retry_window "
	                 "(60s): no retry could ever pass");
	/* The snapshot elsewhere than the store it keeps (issue 33). */
	CHECK(load("[gateway]\nstore_dir = /run/gg\n"
	           "store_snapshot_dir = /run/gg/\n") < 0);
	CHECK_STR(why(), ":3: store_snapshot_dir /run/gg/ and store_dir /run/gg "
	                 "are one folder or one holds the other: the snapshot "
	                 "belongs on the disk that keeps it across a reboot, "
	                 "store_dir on tmpfs");
	CHECK(load("[gateway]\nstore_snapshot_dir = /var\n"
	           "store_dir = /var/lib/greygate\n") < 0);
	CHECK(strstr(why(), ":3: store_snapshot_dir /var and store_dir"));
	CHECK_INT(load("[gateway]\nstore_dir = /run/gg\n"
	               "store_snapshot_dir = /etc/gg\n"
	               "store_snapshot_interval = 15m\n"), 0);
	CHECK_INT(cfg.store_snapshot.interval_ms, 900000);
	CHECK_INT(load("[gateway]\nstore_dir = /run/gg\n"
	               "store_snapshot_dir = /run/ggsnap\n"), 0);
	CHECK(load("[gateway]\nstore_snapshot_interval = 10s\n") < 0);
	CHECK(load("[tarpit]\nstress_low = 300\nstress_high = 200\n") < 0);
	CHECK_STR(why(), ":3: stress_low (300) is above stress_high (200): "
	                 "stress mode could never end");
	CHECK(load("[tarpit]\nstress_high = 3000\n") < 0);
	CHECK_STR(why(), ":2: stress_high (3000) is above max_connections "
	                 "(2000): stress mode could never begin");
	/* Unset, the watermarks follow max_connections (3/4 and 1/2). */
	CHECK_INT(load("[tarpit]\nmax_connections = 100\n"), 0);
	CHECK(load("[tarpit]\nmax_connections = 100\nstress_low = 80\n") < 0);
	CHECK(load("[gateway]\nsmtp_port = 2525\n") < 0);
	CHECK_STR(why(), ":2: smtp_port and tarpit_port are both 2525: the "
	                 "tarpit needs a port of its own");
	CHECK(load("[gateway]\ntrap_port = 2525\n") < 0);
	CHECK_INT(load("[gateway]\ntrap_port = 2525\n[tarpit]\nstutter = 0\n"),
	          0);
	CHECK(load("[greylist]\npass_ttl = 0\n") < 0);
}

static void
test_odd_settings_warned(void)
{
	CHECK_INT(load("[greylist]\ndelay = 0\n"), 0);
	CHECK(strstr(warned, "delay = 0: any second attempt passes"));
	CHECK_INT(load("[greylist]\nrefresh_interval = 40d\n"), 0);
	CHECK(strstr(warned, "refresh_interval (3456000s) is not shorter than "
	                     "pass_ttl"));
	CHECK_INT(load("[greylist]\ndelay = 60\n"), 0);
	CHECK_STR(warned, "");
}

/* Issue 29 R10: greygated's own listeners on a port the gateway serves
 * (the door on 25 took the SMTP port at start), on one port together,
 * or the door open to anyone: said by --check-config. */
static void
test_listener_ports(void)
{
	CHECK(load("[policy]\nlisten = inet:127.0.0.1:25\n") < 0);
	CHECK_STR(why(), ":2: [policy] listen is on port 25, the SMTP port the "
	                 "MTA serves (smtp_port): it would take it; choose "
	                 "another port");
	CHECK(load("[gateway]\ngateway = no\nmetrics_listen = 127.0.0.1:25\n"
	           "[policy]\nlisten = inet:127.0.0.1:10023\n") < 0);
	CHECK(strstr(why(), "metrics_listen is on port 25"));
	CHECK(load("[gateway]\nmetrics_listen = 127.0.0.1:2525\n") < 0);
	CHECK(strstr(why(), "the tarpit's (tarpit_port)"));
	/* the door alone serves no tarpit: its port is free */
	CHECK_INT(load("[gateway]\ngateway = no\n[policy]\nlisten = "
	               "inet:127.0.0.1:2525\n"),
	          0);
	CHECK(load("[gateway]\nmetrics_listen = 127.0.0.1:10023\n[policy]\n"
	           "listen = "
	           "inet:127.0.0.1:10023\n") < 0);
	CHECK(strstr(why(), "both on port 10023"));
	CHECK_INT(load("[policy]\nlisten = inet:0.0.0.0:10023\n"), 0);
	CHECK(strstr(warned, "[policy] listen = inet:0.0.0.0:10023 is reached "
	                     "from anywhere"));
	/* on a port beside the gateway: any local user may ask (issue 55);
	 * the door alone, or on a unix socket: said nothing */
	CHECK_INT(load("[policy]\nlisten = inet:10.1.2.3:10023\n"), 0);
	CHECK(strstr(warned, "[policy] listen = inet:10.1.2.3:10023 with the "
	                     "gateway: any local user can send the door "
	                     "requests"));
	CHECK_INT(load("[gateway]\ngateway = no\n[policy]\nlisten = "
	               "inet:10.1.2.3:10023\n"),
	          0);
	CHECK_STR(warned, "");
	CHECK_INT(load("[policy]\nlisten = unix:/run/greygate/door\n"), 0);
	CHECK_STR(warned, "");
	/* the door's passes: its own beside the gateway, unless
	 * passes_gateway; the store's when it is the only door */
	CHECK(!cfg.grey.door_passes_gateway);
	CHECK_INT(load("[policy]\nlisten = unix:/run/greygate/door\n"
	               "passes_gateway = yes\n"),
	          0);
	CHECK(cfg.grey.door_passes_gateway);
	CHECK_INT(load("[gateway]\ngateway = no\n[policy]\nlisten = "
	               "unix:/run/greygate/door\n"),
	          0);
	CHECK(cfg.grey.door_passes_gateway);
}

static void
test_handoff(void)
{
	CHECK_INT(load(""), 0);
	CHECK_INT(cfg.handoff.mode, HANDOFF_OFF);
	CHECK_INT(cfg.handoff.timeout_ms, 10000);
	CHECK_INT(load("[handoff]\nmode = proxy-v2\naddress = 127.0.0.1:10025\n"
	               "timeout = 3s\n"),
	          0);
	CHECK_INT(cfg.handoff.mode, HANDOFF_PROXY_V2);
	CHECK_INT(cfg.handoff.addr.ss_family, AF_INET);
	CHECK_INT(cfg.handoff.timeout_ms, 3000);
	CHECK_INT(load("[handoff]\nmode = xclient\naddress = [2001:db8::1]:25\n"),
	          0);
	CHECK_INT(cfg.handoff.mode, HANDOFF_XCLIENT);
	CHECK_INT(cfg.handoff.addr.ss_family, AF_INET6);
	CHECK_STR(cfg.handoff.address, "[2001:db8::1]:25");
	CHECK(load("[handoff]\nmode = proxy\n") < 0);
	CHECK(load("[handoff]\nmode = proxy-v2\n") < 0);
	CHECK_STR(why(), ":2: [handoff] mode = proxy-v2 needs an address (the "
	                 "MTA's PROXY listener, 127.0.0.1:10025 say)");
	static const char *const bad[] = {
		"127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536",
		"2001:db8::1:25", "[2001:db8::1]", "[127.0.0.1]:25",
		"mx.example.org:25", "127.0.0.1:0x19"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		char text[128];

		snprintf(text, sizeof(text),
		         "[handoff]\nmode = xclient\naddress = %s\n", bad[i]);
		if (load(text) == 0) {
			fprintf(stderr, "accepted: %s\n", bad[i]);
			CHECK(0);
		}
	}
	CHECK(load("[handoff]\nmode = proxy-v2\naddress = 127.0.0.1:2525\n") <
	      0);
	CHECK_STR(why(), ":3: [handoff] address 127.0.0.1:2525 is on "
	                 "tarpit_port: a passing client would be handed back "
	                 "to the tarpit");
	/* the stutter's port, the metrics listener on the MTA's address
	 * (issue 57: --check-config passed them, the start refused) */
	CHECK(load("[handoff]\nmode = proxy-v2\naddress = 127.0.0.1:2526\n") <
	      0);
	CHECK(strstr(why(), "[handoff] address 127.0.0.1:2526 is on trap_port"));
	CHECK(load("[gateway]\nmetrics_listen = 127.0.0.1:10025\n[handoff]\n"
	           "mode = proxy-v2\naddress = 127.0.0.1:10025\n") < 0);
	CHECK(strstr(why(), "metrics_listen 127.0.0.1:10025 is the hand-off's "
	                    "address"));
	CHECK(load("[gateway]\nmetrics_listen = 0.0.0.0:10025\n[handoff]\n"
	           "mode = proxy-v2\naddress = 127.0.0.1:10025\n") < 0);
	CHECK_INT(load("[gateway]\nmetrics_listen = 127.0.0.1:9125\n[handoff]\n"
	               "mode = proxy-v2\naddress = 127.0.0.1:10025\n"),
	          0);
	CHECK_INT(load("[handoff]\nmode = proxy-v2\naddress = 127.0.0.1:25\n"),
	          0);
	CHECK(strstr(warned, "that listener must expect a PROXY header"));
	/* tls_pass = greylist by default: STARTTLS bots stay out */
	CHECK(cfg.grey.tls_greylist && !cfg.grey.tls_pass);
	CHECK(!strstr(warned, "tls_pass"));
	CHECK_INT(load("[greylist]\ntls_pass = yes\n[handoff]\nmode = "
	               "proxy-v2\naddress = 127.0.0.1:10025\n"),
	          0);
	CHECK(strstr(warned, "with tls_pass = yes: a client that says STARTTLS "
	                     "is delivered on its first attempt"));
	CHECK(strstr(warned, "tls_pass = greylist, the default, keeps them "
	                     "out and the mail in TLS"));
	/* No STARTTLS at the tarpit, the hand-off on: the passing attempt
	 * would be delivered in the clear. Refused, naming the choices. */
	CHECK(load("[greylist]\ntls_pass = no\n[handoff]\nmode = xclient\n"
	           "address = 127.0.0.1:25\n") < 0);
	CHECK_STR(why(), ":4: tls_pass = no with the hand-off on would deliver "
	                 "the passing attempt in the clear where the MTA "
	                 "offers STARTTLS: choose tls_pass = greylist (the "
	                 "default: greylisted by address at STARTTLS, handed "
	                 "over in TLS), strict (the MTA asks the policy door: "
	                 "[policy] listen, mta_asks = yes), yes (passed at "
	                 "STARTTLS, bots too), or [handoff] mode = off");
	CHECK_INT(load("[greylist]\ntls_pass = no\n"), 0);
	CHECK_STR(warned, "");
	CHECK(load("[handoff]\ntimeout = 100ms\n") < 0);
}

/* Transparent mode: the MTA's ordinary port, the mark and table of the
 * way back, and what has no meaning there. */
static void
test_handoff_transparent(void)
{
	CHECK_INT(load("[handoff]\nmode = transparent\n"
	               "address = 203.0.113.1:25\n"),
	          0);
	CHECK_INT(cfg.handoff.mode, HANDOFF_TRANSPARENT);
	CHECK_INT(cfg.handoff.mark, 18279);
	CHECK_INT(cfg.handoff.route_table, 4767);
	CHECK_INT(cfg.nft.handoff_mark, 18279);
	CHECK_INT(cfg.nft.handoff_family, 0); /* no PROXY listener to guard */
	CHECK_INT(load("[handoff]\nmode = proxy-v2\naddress = 127.0.0.1:10025\n"),
	          0);
	CHECK_INT(cfg.nft.handoff_mark, 0);
	CHECK_INT(load("[handoff]\nmode = transparent\n"
	               "address = [2001:db8::25]:25\nmark = 7\n"
	               "route_table = 100\n"),
	          0);
	CHECK_INT(cfg.nft.handoff_mark, 7);
	CHECK(load("[handoff]\nmode = transparent\n") < 0);
	CHECK(strstr(why(), "the MTA's ordinary address and port"));
	CHECK(load("[handoff]\nmode = transparent\naddress = 127.0.0.1:25\n") <
	      0);
	CHECK(strstr(why(), "is a loopback address"));
	CHECK(load("[handoff]\nmode = transparent\naddress = [::1]:25\n") < 0);
	CHECK(load("[handoff]\nmode = transparent\n"
	           "address = 203.0.113.1:10025\n") < 0);
	CHECK(strstr(why(), "the MTA's port 25 (smtp_port)"));
	CHECK(load("[handoff]\nmode = transparent\naddress = 203.0.113.1:25\n"
	           "source = 203.0.113.2\n") < 0);
	CHECK(strstr(why(), "source has no use with mode = transparent"));
	CHECK(load("[handoff]\nmode = transparent\naddress = 203.0.113.1:25\n"
	           "route_table = 254\n") < 0);
	CHECK(strstr(why(), "one of the kernel's own"));
	CHECK(load("[gateway]\nexempt_mark = 3\n[handoff]\nmode = transparent\n"
	           "address = 203.0.113.1:25\nmark = 2\n") < 0);
	CHECK(strstr(why(), "shares bits with exempt_mark"));
	CHECK(load("[handoff]\nmark = 0\n") < 0);
}

/* The policy door's settings, and the gateway switched off. */
static void
test_policy_door(void)
{
	const struct sockaddr_in6 *in6 = (const void *)&cfg.policy.addr;

	CHECK_INT(load(""), 0);
	CHECK_STR(cfg.policy.listen, "");
	CHECK(cfg.gateway);
	CHECK(cfg.policy.x_greylist_header);
	CHECK(!cfg.policy.test_time);
	CHECK_INT(load("[policy]\nlisten = inet:127.0.0.1:10023\n"
		       "greylist_text = 4.7.1 Greylisted, come back in %s s\n"),
		  0);
	CHECK_INT(cfg.policy.addr.ss_family, AF_INET);
	CHECK_STR(cfg.policy.greylist_text, "4.7.1 Greylisted, come back in "
					    "%s s");
	CHECK_INT(load("[policy]\nlisten = inet:[::1]:10023\n"), 0);
	CHECK_INT(cfg.policy.addr.ss_family, AF_INET6);
	CHECK_INT(ntohs(in6->sin6_port), 10023);
	CHECK_INT(load("[policy]\nlisten = unix:/run/greygate/policy\n"), 0);
	CHECK_INT(cfg.policy.addr.ss_family, AF_UNIX);
	CHECK(load("[policy]\nlisten = 127.0.0.1:10023\n") < 0);
	CHECK_STR(why(), ":2: [policy] listen = 127.0.0.1:10023: want "
			 "inet:127.0.0.1:10023, inet:[::1]:10023 or "
			 "unix:/an/absolute/path (or nothing: off)");
	CHECK(load("[policy]\nlisten = unix:relative\n") < 0);
	CHECK(load("[policy]\nlisten = inet:localhost:10023\n") < 0);
	CHECK(load("[policy]\nlisten = unix:/a\"b\n") < 0);
	/* the gateway off: the door is all there is */
	CHECK(load("[gateway]\ngateway = no\n") < 0);
	CHECK_STR(why(), ":2: gateway = no leaves nothing to do: set [policy] "
			 "listen (inet:127.0.0.1:10023, say) for the policy "
			 "door");
	CHECK_INT(load("[gateway]\ngateway = no\n[policy]\n"
		       "listen = inet:127.0.0.1:10023\n"),
		  0);
	CHECK(!cfg.gateway);
	/* no child then: its user is not needed */
	snprintf(cfg.user, sizeof(cfg.user), "no-such-user-here");
	CHECK_INT(config_check_system(&cfg, err), 0);
	CHECK(load("[gateway]\ngateway = no\n[policy]\n"
		   "listen = inet:127.0.0.1:10023\n[handoff]\nmode = xclient\n"
		   "address = 127.0.0.1:25\n") < 0);
	CHECK(strstr(why(), "needs the gateway"));
	/* tls_pass = strict: the hand-off and the door, or refused */
	CHECK(load("[greylist]\ntls_pass = strict\n") < 0);
	CHECK(strstr(why(), "needs [handoff] mode and [policy] mta_asks = yes"));
	CHECK(load("[greylist]\ntls_pass = maybe\n") < 0);
	CHECK(strstr(why(), "want greylist, strict, yes or no"));
	CHECK_INT(load("[greylist]\ntls_pass = greylist\n"), 0);
	CHECK(cfg.grey.tls_greylist && cfg.tarpit.offer_starttls);
	CHECK_INT(load("[greylist]\ntls_pass = yes\n"), 0);
	CHECK(cfg.grey.tls_pass && !cfg.grey.tls_greylist);
	CHECK_INT(load("[greylist]\ntls_pass = strict\n[handoff]\n"
		       "mode = proxy-v2\naddress = 127.0.0.1:10025\n[policy]\n"
		       "listen = inet:127.0.0.1:10023\nmta_asks = yes\n"),
		  0);
	CHECK(cfg.grey.tls_strict && !cfg.grey.tls_pass);
	CHECK(cfg.tarpit.offer_starttls && cfg.policy.mta_asks);
	CHECK(load("[policy]\nmta_asks = yes\n") < 0);
	CHECK(strstr(why(), "set [policy] listen too"));
	CHECK_INT(load("[greylist]\ntls_pass = no\n"), 0);
	CHECK(!cfg.tarpit.offer_starttls && !cfg.grey.tls_pass);
	/* a name two sections share names the line of the one set */
	CHECK(load("[tarpit]\nmax_connections = 100\nstress_high = 200\n"
		   "[policy]\nmax_connections = 5\n") < 0);
	CHECK(!strncmp(why(), ":3: ", 4));
}

static void
test_empty_values_refused(void)
{
	static const char *const keys[] = {
	        "table",     "hostname",  "store_dir", "control_socket",
	        "allow_dir", "interface", "user",      "admin_group",
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
		char text[128];

		snprintf(text, sizeof(text), "[gateway]\n%s =\n", keys[i]);
		CHECK(load(text) < 0);
	}
	CHECK(load("[gateway]\nstore_dir = relative/path\n") < 0);
	CHECK(load("[gateway]\ntable = my table\n") < 0);
	CHECK(load("[gateway]\nhostname = two words\n") < 0);
	CHECK(load("[gateway]\ninterface = a-name-longer-than-15\n") < 0);
}

static void
test_directory_is_no_config(void)
{
	config_defaults(&cfg);
	CHECK(config_load(&cfg, "/tmp", false, NULL, NULL, err) < 0);
	CHECK_STR(err, "/tmp: not a file");
}

static void
test_long_lines(void)
{
	char text[2048], *p = text;

	/* 199 characters of list, then what inih would read as a line. */
	p += sprintf(p, "[greylist]\ntrap_recipients = ");
	while (p - text < 230)
		p += sprintf(p, "t%02d@x.example, ", (int)(p - text) % 100);
	p += sprintf(p, "delay = 0\n");
	CHECK(load(text) < 0);
	CHECK_STR(why(), ":2: line too long (a list goes on over lines that "
	                 "start with a blank)");
	CHECK_INT(cfg.grey.delay_sec, 300);

	/* A long hostname is refused as such, on its own line number. */
	p = text + sprintf(text, "[gateway]\nhostname = ");
	memset(p, 'h', 300);
	strcpy(p + 300, "\n");
	CHECK(load(text) < 0);
	CHECK_STR(why(), ":2: line too long (a list goes on over lines that "
	                 "start with a blank)");

	/* Lists go on over lines; other keys do not. */
	CHECK_INT(load("[greylist]\ntrap_recipients = a@x.example,\n"
	               "  b@x.example, c@x.example\n\tdelay@x.example\n"
	               "delay = 60\n"),
	          0);
	CHECK_INT(cfg.ntraps, 4);
	CHECK_STR(cfg.traps[3], "delay@x.example");
	CHECK_INT(cfg.grey.delay_sec, 60);
	CHECK(load("[gateway]\nhostname = mx\n  delay = 0\n") < 0);
	CHECK(strstr(why(), ":3: [gateway] hostname = delay = 0: goes on over "
	                    "the next line"));
	CHECK(load("[greylist]\ntrap_recipients = not-an-address\n") < 0);
}

static void
test_child_user(void)
{
	config_defaults(&cfg);
	snprintf(cfg.user, sizeof(cfg.user), "no-such-user-here");
	CHECK(config_check_system(&cfg, err) < 0);
	CHECK(strstr(err, "no such user"));
	snprintf(cfg.user, sizeof(cfg.user), "root");
	CHECK(config_check_system(&cfg, err) < 0);
	CHECK(strstr(err, "must not run as root"));
	snprintf(cfg.user, sizeof(cfg.user), "nobody");
	CHECK_INT(config_check_system(&cfg, err), 0);
}

/* The store: lmdb, or a Redis URL with no password in it; the password
 * from a file root alone may read. */
static void
test_store(void)
{
	char pw_path[64], pw[64];
	FILE *f;
	int fd;

	CHECK_INT(load(""), 0);
	CHECK_STR(cfg.store, "lmdb");
	CHECK(!cfg.store_url.redis);
	CHECK_INT(load("[gateway]\nstore = redis://198.51.100.9/2\n"), 0);
	CHECK(cfg.store_url.redis);
	CHECK_STR(cfg.store_url.host, "198.51.100.9");
	CHECK_INT(cfg.store_url.port, 6379);
	CHECK_INT(cfg.store_url.db, 2);
	CHECK_STR(cfg.store_url.user, "");
	CHECK_INT(load("[gateway]\nstore = redis://[2001:db8::9]:6380\n"), 0);
	CHECK_STR(cfg.store_url.host, "2001:db8::9");
	CHECK_INT(cfg.store_url.port, 6380);
	CHECK_INT(cfg.store_url.db, 0);
	CHECK_INT(load("[gateway]\nstore = redis+unix:///run/r.sock?db=5\n"
	               "store_password_file = /etc/greygate/redis.pass\n"),
	          0);
	CHECK_STR(cfg.store_url.unix_path, "/run/r.sock");
	CHECK_INT(cfg.store_url.db, 5);
	CHECK_INT(load("[gateway]\nstore = redis://gg@198.51.100.9:6379/1\n"
	               "store_password_file = /etc/greygate/redis.pass\n"),
	          0);
	CHECK_STR(cfg.store_url.user, "gg");
	/* an ACL user with no password */
	CHECK(load("[gateway]\nstore = redis://gg@198.51.100.9\n") < 0);
	CHECK(strstr(why(), ":2: store names the ACL user gg"));
	/* a password in the URL, a name, a port or database out of range */
	CHECK(load("[gateway]\nstore = redis://gg:secret@198.51.100.9\n") < 0);
	CHECK(strstr(why(), "never here"));
	CHECK(load("[gateway]\nstore = redis://redis.example/0\n") < 0);
	CHECK(load("[gateway]\nstore = redis://198.51.100.9:0\n") < 0);
	CHECK(load("[gateway]\nstore = redis://198.51.100.9:70000\n") < 0);
	CHECK(load("[gateway]\nstore = redis://198.51.100.9/16\n") < 0);
	CHECK(load("[gateway]\nstore = redis://2001:db8::9\n") < 0);
	CHECK(load("[gateway]\nstore = redis+unix://relative.sock\n") < 0);
	CHECK(load("[gateway]\nstore = lmdb:/var/lib/greygate\n") < 0);
	CHECK(load("[gateway]\nstore = \n") < 0);
	/* (read only with a Redis store) */
	CHECK_INT(load("[gateway]\nstore_password_file = /x\n"), 0);

	/* the file: root's alone, its first line */
	snprintf(pw_path, sizeof(pw_path), "/tmp/gg-pass-XXXXXX");
	fd = mkstemp(pw_path);
	CHECK(fd >= 0);
	f = fdopen(fd, "w");
	fputs("s3cret\nsecond line\n", f);
	fclose(f);
	if (geteuid() == 0) {
		CHECK_INT(chmod(pw_path, 0600), 0);
		CHECK_INT(store_password_read(pw_path, pw, sizeof(pw), err), 0);
		CHECK_STR(pw, "s3cret");
		CHECK_INT(chmod(pw_path, 0640), 0);
		CHECK(store_password_read(pw_path, pw, sizeof(pw), err) < 0);
		CHECK(strstr(err, "mode 640: refused"));
		CHECK_INT(chmod(pw_path, 0600), 0);
		CHECK_INT(chown(pw_path, 65534, 0), 0);
		CHECK(store_password_read(pw_path, pw, sizeof(pw), err) < 0);
		CHECK(strstr(err, "owned by uid 65534"));
		/* --check-config reads it too */
		config_defaults(&cfg);
		snprintf(cfg.user, sizeof(cfg.user), "nobody");
		snprintf(cfg.store, sizeof(cfg.store), "redis://198.51.100.9");
		snprintf(cfg.store_password_file,
		         sizeof(cfg.store_password_file), "%s", pw_path);
		CHECK_INT(store_url_parse(cfg.store, &cfg.store_url,
		                          &(const char *){NULL}),
		          0);
		CHECK(config_check_system(&cfg, err) < 0);
		CHECK(strstr(err, "owned by uid 65534"));
	}
	unlink(pw_path);
	CHECK(store_password_read(pw_path, pw, sizeof(pw), err) < 0);
	CHECK(strstr(err, "No such file"));
}

/* [handoff] mode = auto, the default: off until start resolves it, then
 * transparent where the machine can (root here: policy routing), off
 * with the reason where not; a reload keeps what start found; an address
 * given with it is checked as transparent mode's. */
static void
test_handoff_auto(void)
{
	CHECK_INT(load(""), 0);
	CHECK(cfg.signals.lookups); /* (issue 31: on by default) */
	CHECK_STR(cfg.signals.rdns_patterns, signals_patterns_shipped());
	CHECK_INT(cfg.handoff.setting, HANDOFF_AUTO);
	CHECK_INT(cfg.handoff.mode, HANDOFF_OFF);
	CHECK_INT(config_resolve_auto(&cfg, err), 0);
	if (geteuid() == 0) {
		CHECK(cfg.handoff.auto_on);
		CHECK_INT(cfg.handoff.mode, HANDOFF_TRANSPARENT);
		CHECK(cfg.grey.handoff);
		CHECK_INT(cfg.nft.handoff_mark, 0x4767);
		CHECK_STR(cfg.handoff.auto_why,
			  "transparent, once the MTA at the address clients "
			  "go to answers");
		/* a reload keeps it (mode is a restart key) */
		CHECK_INT(config_reload(&cfg, false, err), 0);
		CHECK_INT(cfg.handoff.mode, HANDOFF_TRANSPARENT);
		CHECK(cfg.handoff.auto_on);
	}
	CHECK_INT(load("[greylist]\ntls_pass = no\n"), 0);
	CHECK_INT(config_resolve_auto(&cfg, err), 0);
	CHECK(!cfg.handoff.auto_on);
	CHECK_INT(cfg.handoff.mode, HANDOFF_OFF);
	CHECK(strstr(cfg.handoff.auto_why, "tls_pass = no"));
	CHECK_INT(load("[gateway]\ngateway = no\n[policy]\nlisten = "
		       "inet:127.0.0.1:10023\n"),
		  0);
	CHECK_INT(config_resolve_auto(&cfg, err), 0);
	CHECK_INT(cfg.handoff.mode, HANDOFF_OFF);
	CHECK(strstr(cfg.handoff.auto_why, "gateway = no"));
	/* a chosen mode is left as it is */
	CHECK_INT(load("[handoff]\nmode = off\n"), 0);
	CHECK_INT(config_resolve_auto(&cfg, err), 0);
	CHECK_INT(cfg.handoff.mode, HANDOFF_OFF);
	CHECK_STR(cfg.handoff.auto_why, "");
	/* auto with an address: transparent mode's checks */
	CHECK(load("[handoff]\naddress = 127.0.0.1:25\n") < 0);
	CHECK(strstr(why(), "is a loopback address"));
	CHECK_INT(load("[handoff]\naddress = 203.0.113.1:25\n"), 0);
	/* strict with auto (issue 57: refused before auto was resolved):
	 * taken, and at start refused only where auto finds no hand-off */
	CHECK_INT(load("[greylist]\ntls_pass = strict\n[policy]\nlisten = "
		       "inet:127.0.0.1:10023\nmta_asks = yes\n"),
		  0);
	if (geteuid() == 0) {
		CHECK_INT(config_resolve_auto(&cfg, err), 0);
		CHECK_INT(cfg.handoff.mode, HANDOFF_TRANSPARENT);
		CHECK(cfg.grey.tls_strict);
	}
	CHECK_INT(load("[gateway]\ngateway = no\n[greylist]\ntls_pass = "
		       "strict\n[policy]\nlisten = inet:127.0.0.1:10023\n"
		       "mta_asks = yes\n"),
		  0);
	CHECK(config_resolve_auto(&cfg, err) < 0);
	CHECK(strstr(err, "auto found no hand-off here (no tarpit here"));
	/* ... the door still needed */
	CHECK(load("[greylist]\ntls_pass = strict\n") < 0);
	CHECK(load("[handoff]\nmode = maybe\n") < 0);
	CHECK(strstr(why(), "want auto, off, proxy-v2, xclient or transparent"));
}

/* The settings remember where they were read: a reload reads that file
 * again (a value changed there is taken; a key that needs a restart
 * keeps its value, said; an error keeps all of it); the default path
 * may be missing, a named one may not. */
static void
test_source_read_again(void)
{
	FILE *f;

	CHECK_INT(load("[greylist]\ndelay = 5m\n[gateway]\ntarpit_port = "
	               "2626\n"),
	          0);
	CHECK_STR(cfg.source.path, path);
	CHECK(!cfg.source.missing_ok);
	CHECK_INT(cfg.grey.delay_sec, 300);
	CHECK((f = fopen(path, "w")));
	fputs("[greylist]\ndelay = 10m\n[gateway]\ntarpit_port = 2727\n", f);
	fclose(f);
	CHECK(config_reload(&cfg, false, err) >= 0);
	CHECK_INT(cfg.grey.delay_sec, 600);
	CHECK_INT(cfg.nft.tarpit_port, 2626); /* (a restart key) */
	CHECK_STR(cfg.source.path, path);
	CHECK((f = fopen(path, "w")));
	fputs("[greylist]\ndelay = soon\n", f);
	fclose(f);
	CHECK(config_reload(&cfg, false, err) < 0);
	CHECK(strstr(err, "delay"));
	CHECK_INT(cfg.grey.delay_sec, 600);
	/* the default path, missing: the defaults, read again as such */
	config_defaults(&cfg);
	CHECK_INT(config_load(&cfg, "/nonexistent/greygate.conf", true, NULL,
	                      NULL, err),
	          0);
	CHECK(cfg.source.missing_ok);
	CHECK(config_reload(&cfg, false, err) >= 0);
	config_defaults(&cfg);
	CHECK(config_load(&cfg, "/nonexistent/greygate.conf", false, NULL, NULL,
	                  err) < 0);
}

int
main(void)
{
	snprintf(path, sizeof(path), "/tmp/gg-config-XXXXXX");
	CHECK(mkstemp(path) >= 0);
	RUN(test_numbers_are_decimal);
	RUN(test_durations_do_not_overflow);
	RUN(test_settings_that_stop_all_mail);
	RUN(test_odd_settings_warned);
	RUN(test_listener_ports);
	RUN(test_handoff);
	RUN(test_handoff_transparent);
	RUN(test_policy_door);
	RUN(test_empty_values_refused);
	RUN(test_directory_is_no_config);
	RUN(test_long_lines);
	RUN(test_child_user);
	RUN(test_store);
	RUN(test_handoff_auto);
	RUN(test_source_read_again);
	unlink(path);
	return 0;
}
