// SPDX-License-Identifier: GPL-2.0-or-later
/* greygate's ruleset in each of its shapes, as the kernel holds it: built
 * by nftset_open in a network namespace of this process's own (unshare:
 * it goes with the process) and read back with nft(8), line by line,
 * against what ruleset.c's header promises: the steering chain in its
 * order (the site's mark, the interface, allow, trap, trust, pass, the
 * rest to the tarpit), the pass sets' masks for each key length, the
 * tarpit's guard, and the chains only some settings make (the PROXY
 * listener's guard, the transparent hand-off's marks, the sensor's NFLOG
 * rules). Skipped (77) where no namespace can be made (not root). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "own_netns.h"
#include "nftset.h"

static char listing[65536];

/* The table as nft(8) prints it, into listing. */
static void
read_table(void)
{
	FILE *p = popen("nft list table inet gg_test", "r");
	size_t n;

	CHECK(p);
	n = fread(listing, 1, sizeof(listing) - 1, p);
	listing[n] = 0;
	CHECK_INT(pclose(p), 0);
}

/* The line is in the listing, whole, after a tab (a rule's indent is
 * two: its text begins with the second). */
static void
has(const char *line)
{
	char want[512];

	snprintf(want, sizeof(want), "\t%s\n", line);
	if (!strstr(listing, want)) {
		fprintf(stderr, "missing: %s\nin:\n%s", line, listing);
		exit(1);
	}
}

static void
lacks(const char *text)
{
	if (strstr(listing, text)) {
		fprintf(stderr, "unexpected: %s\nin:\n%s", text, listing);
		exit(1);
	}
}

/* b comes after a in the listing (both there). */
static void
in_order(const char *a, const char *b)
{
	const char *pa = strstr(listing, a), *pb = strstr(listing, b);

	CHECK(pa && pb && pa < pb);
}

static struct nftset *
open_with(struct nftset_config cfg)
{
	struct nftset *nft;

	cfg.table = "gg_test";
	CHECK_INT(nftset_open(&cfg, &nft), 0);
	read_table();
	return nft;
}

/* The defaults: the steering chain and the guard, nothing else. */
static void
test_plain(void)
{
	struct nftset *nft = open_with((struct nftset_config){
	        .smtp_port = 25, .tarpit_port = 2525, .pass_prefix4 = 24,
	        .pass_prefix6 = 64});

	has("\ttcp dport 25 ip saddr @allow4 counter name \"allowed\" accept");
	has("\ttcp dport 25 ip saddr & 255.255.255.0 == @pass4 counter name "
	    "\"passed\" accept");
	has("\ttcp dport 25 ip6 saddr & ffff:ffff:ffff:ffff:: == @pass6 "
	    "counter name \"passed\" accept");
	has("\ttcp dport 25 ip saddr @trust4 counter name \"trusted\" accept");
	/* without a stutter, trapped clients meet the plain tarpit */
	has("\ttcp dport 25 ip saddr @trap4 counter name \"trapped\" "
	    "redirect to :2525");
	has("\ttcp dport 25 counter name \"greylisted\" redirect to :2525");
	has("\ttcp dport 2525 ct status ! dnat drop");
	in_order("@allow4", "@trap4");
	in_order("@trap4", "@trust4");
	in_order("@trust4", "@pass4");
	in_order("@pass6", "\"greylisted\" redirect");
	lacks("meta mark");
	lacks("iifname");
	lacks("chain handoff");
	lacks("chain sensor");
	nftset_close(nft);
}

/* The site's mark and one interface; a stutter's own port for traps. */
static void
test_mark_interface_stutter(void)
{
	struct nftset *nft = open_with((struct nftset_config){
	        .smtp_port = 25, .tarpit_port = 2525, .trap_port = 2526,
	        .exempt_mark = 0x10, .iifname = "eth0", .pass_prefix4 = 24,
	        .pass_prefix6 = 64});

	has("\tmeta mark & 0x00000010 != 0x00000000 accept");
	has("\ttcp dport 25 iifname != \"eth0\" accept");
	has("\ttcp dport 25 ip saddr @trap4 counter name \"trapped\" "
	    "redirect to :2526");
	has("\ttcp dport 2526 ct status ! dnat drop");
	in_order("meta mark", "iifname != \"eth0\"");
	in_order("iifname != \"eth0\"", "@allow4");
	nftset_close(nft);
}

/* Pass keys of other lengths: the rule masks the source to them, and a
 * key of the full address needs no mask. */
static void
test_pass_key_lengths(void)
{
	struct nftset *nft = open_with((struct nftset_config){
	        .smtp_port = 25, .tarpit_port = 2525, .pass_prefix4 = 16,
	        .pass_prefix6 = 48});

	has("\ttcp dport 25 ip saddr & 255.255.0.0 == @pass4 counter name "
	    "\"passed\" accept");
	has("\ttcp dport 25 ip6 saddr & ffff:ffff:ffff:: == @pass6 counter "
	    "name \"passed\" accept");
	nftset_close(nft);
	nft = open_with((struct nftset_config){.smtp_port = 25,
	                                       .tarpit_port = 2525,
	                                       .pass_prefix4 = 32,
	                                       .pass_prefix6 = 128});
	has("\ttcp dport 25 ip saddr @pass4 counter name \"passed\" accept");
	has("\ttcp dport 25 ip6 saddr @pass6 counter name \"passed\" "
	    "accept");
	nftset_close(nft);
}

/* A PROXY hand-off: its listener reached by greygated alone (over lo). */
static void
test_proxy_listener_guarded(void)
{
	struct nftset_config cfg = {.smtp_port = 25, .tarpit_port = 2525,
	                            .pass_prefix4 = 24, .pass_prefix6 = 64,
	                            .handoff_family = AF_INET,
	                            .handoff_port = 10025};
	struct nftset *nft;

	CHECK(inet_pton(AF_INET, "203.0.113.25", cfg.handoff_addr) == 1);
	nft = open_with(cfg);
	has("\tip daddr 203.0.113.25 tcp dport 10025 iifname != \"lo\" "
	    "counter name \"handoff_refused\" drop");
	lacks("chain handoff_out");
	nftset_close(nft);
	cfg.handoff_family = AF_INET6;
	CHECK(inet_pton(AF_INET6, "2001:db8::25", cfg.handoff_addr) == 1);
	nft = open_with(cfg);
	has("\tip6 daddr 2001:db8::25 tcp dport 10025 iifname != \"lo\" "
	    "counter name \"handoff_refused\" drop");
	nftset_close(nft);
}

/* A transparent hand-off: the mark goes from greygated's sockets to
 * their connections and back onto the MTA's answers. */
static void
test_transparent_marks(void)
{
	struct nftset *nft = open_with((struct nftset_config){
	        .smtp_port = 25, .tarpit_port = 2525, .pass_prefix4 = 24,
	        .pass_prefix6 = 64, .handoff_mark = 0x4747});

	has("\tct state new meta mark 0x00004747 ct mark set meta mark");
	has("\tct mark 0x00004747 meta mark set ct mark");
	CHECK(strstr(listing, "chain handoff_out"));
	CHECK(strstr(listing, "chain handoff_in"));
	lacks("chain handoff_guard");
	nftset_close(nft);
}

/* The sensor on NFLOG: the fast path's SMTP both ways, each set's
 * clients once (an address in two sets is logged by the first). */
static void
test_sensor_rules(void)
{
	struct nftset *nft = open_with((struct nftset_config){
	        .smtp_port = 25, .tarpit_port = 2525, .pass_prefix4 = 24,
	        .pass_prefix6 = 64, .sensor_group = 5});

	has("\ttcp dport 25 iifname != \"lo\" ip saddr @allow4 log group 5 "
	    "accept");
	has("\ttcp dport 25 iifname != \"lo\" ip saddr @trust4 log group 5 "
	    "accept");
	has("\ttcp dport 25 iifname != \"lo\" ip saddr & 255.255.255.0 == "
	    "@pass4 log group 5 accept");
	has("\ttcp sport 25 oifname != \"lo\" ip6 daddr & "
	    "ffff:ffff:ffff:ffff:: == @pass6 log group 5 accept");
	lacks("@trap4 log");
	nftset_close(nft);
}

int
main(void)
{
	own_netns_or_skip();
	RUN(test_plain);
	RUN(test_mark_interface_stutter);
	RUN(test_pass_key_lengths);
	RUN(test_proxy_listener_guarded);
	RUN(test_transparent_marks);
	RUN(test_sensor_rules);
	return 0;
}
