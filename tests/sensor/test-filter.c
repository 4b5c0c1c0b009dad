// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the live capture's BPF filter, compiled by libpcap and run by
 * its BPF interpreter (the same program the kernel runs) over hand-built
 * frames: segments with SYN, FIN, RST or payload on the SMTP and tarpit
 * ports pass, bare ACKs and other ports do not, IPv6 behind extension
 * headers goes up to the decoder, over IPv4 and IPv6, on
 * Ethernet with and without VLAN tags, on raw IP and on "any" (SLL). */
#include <arpa/inet.h>
#include <pcap/pcap.h>
#include <string.h>

#include "check.h"
#include "sensor.h"

#define SYN 0x02
#define FIN 0x01
#define RST 0x04
#define ACK 0x10
#define PSH 0x08

struct frame {
	uint8_t b[256];
	size_t len;
};

/* The link layer's header before the IP packet: linktype's, with vlans
 * tags (0, 1 or 2) on Ethernet. */
static uint8_t *
link_header(uint8_t *p, int linktype, int vlans, int family)
{
	if (linktype == DLT_LINUX_SLL) { /* "any": the protocol at 14 */
		p[14] = family == AF_INET ? 0x08 : 0x86;
		p[15] = family == AF_INET ? 0x00 : 0xdd;
		return p + 16;
	}
	if (linktype != DLT_EN10MB)
		return p;
	p += 12;
	for (int i = 0; i < vlans; i++) {
		p[0] = 0x81; /* 802.1Q; the tag's TCI left 0 */
		p += 4;
	}
	p[0] = family == AF_INET ? 0x08 : 0x86;
	p[1] = family == AF_INET ? 0x00 : 0xdd;
	return p + 2;
}

/* A frame of linktype holding an IP packet of family with a TCP segment
 * from port sport to dport carrying payload bytes. */
static struct frame
build(int linktype, int vlans, int family, uint16_t sport, uint16_t dport,
      uint8_t flags, size_t payload)
{
	struct frame f = {{0}, 0};
	uint8_t *p = link_header(f.b, linktype, vlans, family), *tcp;
	size_t iplen;

	if (family == AF_INET) {
		iplen = 20 + 20 + payload;
		p[0] = 0x45;
		p[2] = (uint8_t)(iplen >> 8);
		p[3] = (uint8_t)iplen;
		p[8] = 64;
		p[9] = 6;
		CHECK_INT(inet_pton(AF_INET, "198.51.100.7", p + 12), 1);
		CHECK_INT(inet_pton(AF_INET, "203.0.113.1", p + 16), 1);
		tcp = p + 20;
	} else {
		iplen = 40 + 20 + payload;
		p[0] = 0x60;
		p[4] = (uint8_t)((iplen - 40) >> 8);
		p[5] = (uint8_t)(iplen - 40);
		p[6] = 6;
		p[7] = 64;
		CHECK_INT(inet_pton(AF_INET6, "2001:db8::7", p + 8), 1);
		CHECK_INT(inet_pton(AF_INET6, "2001:db8::1", p + 24), 1);
		tcp = p + 40;
	}
	tcp[0] = (uint8_t)(sport >> 8);
	tcp[1] = (uint8_t)sport;
	tcp[2] = (uint8_t)(dport >> 8);
	tcp[3] = (uint8_t)dport;
	tcp[12] = 5 << 4;
	tcp[13] = flags;
	memset(tcp + 20, 'x', payload);
	f.len = (size_t)(tcp + 20 + payload - f.b);
	return f;
}

/* The same IPv6 frame with an 8-byte destination options header between
 * the IPv6 header and TCP. */
static struct frame
with_dest_opts(struct frame f, int linktype, int vlans)
{
	uint8_t *ip = link_header(f.b, linktype, vlans, AF_INET6);
	size_t at = (size_t)(ip - f.b) + 40, plen = (size_t)ip[4] << 8 | ip[5];

	memmove(f.b + at + 8, f.b + at, f.len - at);
	memset(f.b + at, 0, 8);
	f.b[at] = 6;    /* then TCP */
	ip[6] = 60;     /* destination options */
	plen += 8;
	ip[4] = (uint8_t)(plen >> 8);
	ip[5] = (uint8_t)plen;
	f.len += 8;
	return f;
}

static bool
passes(const struct bpf_program *prog, struct frame f)
{
	struct pcap_pkthdr h = {.caplen = (bpf_u_int32)f.len,
				.len = (bpf_u_int32)f.len};

	return pcap_offline_filter(prog, &h, f.b) != 0;
}

static void
compile(int linktype, struct bpf_program *prog)
{
	struct sensor_config cfg;
	char expr[SENSOR_FILTER_MAX];
	pcap_t *dead = pcap_open_dead(linktype, 65535);

	CHECK(dead);
	sensor_config_defaults(&cfg);
	cfg.tarpit_port = 2525;
	sensor_capture_filter(&cfg, linktype, expr, sizeof(expr));
	if (pcap_compile(dead, prog, expr, 1, PCAP_NETMASK_UNKNOWN) < 0) {
		fprintf(stderr, "%s\n%s\n", expr, pcap_geterr(dead));
		CHECK(!"filter compiles");
	}
	pcap_close(dead);
}

static void
check_kinds(const struct bpf_program *prog, int link, int vlans, int fam)
{
	/* what the sensor reads */
	CHECK(passes(prog, build(link, vlans, fam, 40000, 25, SYN, 0)));
	CHECK(passes(prog, build(link, vlans, fam, 25, 40000, SYN | ACK, 0)));
	CHECK(passes(prog, build(link, vlans, fam, 25, 40000, ACK | PSH, 14)));
	CHECK(passes(prog, build(link, vlans, fam, 40000, 25, ACK | PSH, 1)));
	CHECK(passes(prog, build(link, vlans, fam, 40000, 25, FIN | ACK, 0)));
	CHECK(passes(prog, build(link, vlans, fam, 40000, 25, RST, 0)));
	CHECK(passes(prog, build(link, vlans, fam, 40000, 2525, ACK, 6)));
	CHECK(passes(prog, build(link, vlans, fam, 2525, 40000, FIN, 0)));
	/* what it does not */
	CHECK(!passes(prog, build(link, vlans, fam, 40000, 25, ACK, 0)));
	CHECK(!passes(prog, build(link, vlans, fam, 25, 40000, ACK, 0)));
	CHECK(!passes(prog, build(link, vlans, fam, 40000, 2525, ACK, 0)));
	CHECK(!passes(prog, build(link, vlans, fam, 40000, 587, ACK | PSH, 9)));
	CHECK(!passes(prog, build(link, vlans, fam, 40000, 80, SYN, 0)));
	/* IPv6 behind an extension header: BPF cannot find its port, so it
	 * goes up for the decoder to judge */
	if (fam == AF_INET6)
		CHECK(passes(prog, with_dest_opts(build(link, vlans, fam, 40000,
							25, ACK | PSH, 6),
						  link, vlans)));
}

static void
test_ethernet(void)
{
	struct bpf_program prog;

	compile(DLT_EN10MB, &prog);
	for (int vlans = 0; vlans <= 2; vlans++) {
		check_kinds(&prog, DLT_EN10MB, vlans, AF_INET);
		check_kinds(&prog, DLT_EN10MB, vlans, AF_INET6);
	}
	pcap_freecode(&prog);
}

static void
test_raw_ip(void)
{
	struct bpf_program prog;

	compile(DLT_RAW, &prog);
	check_kinds(&prog, DLT_RAW, 0, AF_INET);
	check_kinds(&prog, DLT_RAW, 0, AF_INET6);
	pcap_freecode(&prog);
}

static void
test_any(void)
{
	struct bpf_program prog;

	compile(DLT_LINUX_SLL, &prog);
	check_kinds(&prog, DLT_LINUX_SLL, 0, AF_INET);
	check_kinds(&prog, DLT_LINUX_SLL, 0, AF_INET6);
	pcap_freecode(&prog);
}

static int ext_rcpts;

static void
on_event(const struct sensor_event *ev, void *ctx)
{
	if (ev->type == SENSOR_EV_RCPT && strcmp(ev->to, "c@example.org") == 0)
		ext_rcpts++;
}

/* What the filter lets up behind an extension header, the decoder reads:
 * the RCPT in it is reported (at the flow's end, with no reply seen). */
static void
test_ipv6_extension_header_decoded(void)
{
	static const char cmds[] =
		"HELO x\r\nMAIL FROM:<a@example.org>\r\nRCPT TO:<c@example.org>\r\n";
	struct sensor_config cfg;
	struct sensor *s;
	struct frame f = build(DLT_RAW, 0, AF_INET6, 40000, 25, ACK | PSH,
			       sizeof(cmds) - 1);
	struct timeval tv = {.tv_sec = 1700000000};

	memcpy(f.b + f.len - (sizeof(cmds) - 1), cmds, sizeof(cmds) - 1);
	f = with_dest_opts(f, DLT_RAW, 0);
	sensor_config_defaults(&cfg);
	s = sensor_new(&cfg, on_event, NULL);
	CHECK(s);
	sensor_frame(s, DLT_RAW, &tv, f.b, f.len);
	sensor_finish(s);
	CHECK_INT(ext_rcpts, 1);
	sensor_free(s);
}

int
main(void)
{
	RUN(test_ethernet);
	RUN(test_raw_ip);
	RUN(test_any);
	RUN(test_ipv6_extension_header_decoded);
	return 0;
}
