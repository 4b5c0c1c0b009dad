// SPDX-License-Identifier: GPL-2.0-or-later
/* Frames decoded for the flows (sensor.h): the link layers a capture
 * gives (Ethernet with stacked VLAN tags, Linux cooked, NFLOG, raw IP),
 * IPv4 and IPv6 with extension headers walked, TCP; each SMTP segment
 * goes to the flows (flow.c), what cannot be read is counted. */
#include <pcap/dlt.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "flow-int.h"

#define VLAN_MAX 3    /* stacked 802.1Q / QinQ tags walked */
#define IPV6_EXT_MAX 8 /* extension headers walked */

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static bool
decode_tcp(struct segment *seg, const uint8_t *p, size_t len)
{
	size_t off;

	if (len < 20)
		return false;
	off = (size_t)(p[12] >> 4) * 4;
	if (off < 20 || off > len)
		return false;
	seg->sport = be16(p);
	seg->dport = be16(p + 2);
	seg->seq = be32(p + 4);
	seg->flags = p[13];
	seg->payload = p + off;
	seg->len = len - off;
	return true;
}

/* Returns 1 with seg filled, 0 if not TCP, -1 if malformed. */
static int
decode_ipv4(struct sensor *s, struct segment *seg, const uint8_t *p,
	    size_t len)
{
	size_t ihl, total;

	if (len < 20 || (p[0] >> 4) != 4)
		return -1;
	ihl = (size_t)(p[0] & 0x0f) * 4;
	total = be16(p + 2);
	if (ihl < 20 || total < ihl || total > len)
		return -1;
	if (be16(p + 6) & 0x3fff) { /* MF set or an offset: a fragment */
		s->counters.fragments++;
		return 0;
	}
	if (p[9] != 6)
		return 0;
	seg->family = AF_INET;
	seg->src = p + 12;
	seg->dst = p + 16;
	return decode_tcp(seg, p + ihl, total - ihl) ? 1 : -1;
}

static int
decode_ipv6(struct sensor *s, struct segment *seg, const uint8_t *p,
	    size_t len)
{
	size_t plen, off = 40;
	uint8_t next;

	if (len < 40 || (p[0] >> 4) != 6)
		return -1;
	plen = be16(p + 4);
	if (40 + plen > len)
		return -1;
	len = 40 + plen;
	next = p[6];
	for (int i = 0; i < IPV6_EXT_MAX && next != 6; i++) {
		size_t hl;

		switch (next) {
		case 0:  /* hop-by-hop */
		case 43: /* routing */
		case 60: /* destination options */
			if (off + 8 > len)
				return -1;
			hl = ((size_t)p[off + 1] + 1) * 8;
			break;
		case 51: /* authentication header */
			if (off + 8 > len)
				return -1;
			hl = ((size_t)p[off + 1] + 2) * 4;
			break;
		case 44: /* fragment */
			s->counters.fragments++;
			return 0;
		default:
			return 0;
		}
		next = p[off];
		off += hl;
		if (off > len)
			return -1;
	}
	if (next != 6)
		return 0;
	seg->family = AF_INET6;
	seg->src = p + 8;
	seg->dst = p + 24;
	return decode_tcp(seg, p + off, len - off) ? 1 : -1;
}

/* NFLOG (an nft "log group" rule, captured on libpcap's nflog:GROUP):
 * a 4-byte header (address family, version, group), then attributes,
 * each a length and a type in the host's byte order (the capture is the
 * kernel's, read on the same machine), padded to 4 bytes; the packet is
 * the payload attribute's, from its IP header on.
 * Return: the IP packet's offset with *len and *etype set, or 0 (no
 * packet in it: not decoded). */
#define NFLOG_PAYLOAD 9

static size_t
nflog_packet(const uint8_t *data, size_t caplen, size_t *len, uint16_t *etype)
{
	size_t off = 4;

	if (caplen < 4 || (data[0] != AF_INET && data[0] != AF_INET6))
		return 0;
	*etype = data[0] == AF_INET ? 0x0800 : 0x86dd;
	while (off + 4 <= caplen) {
		uint16_t tlv_len, type;

		memcpy(&tlv_len, data + off, 2);
		memcpy(&type, data + off + 2, 2);
		if (tlv_len < 4 || tlv_len > caplen - off)
			return 0;
		if ((type & 0x7fff) == NFLOG_PAYLOAD) {
			*len = tlv_len - 4u;
			return off + 4;
		}
		off += (tlv_len + 3u) & ~3u;
	}
	return 0;
}

void
sensor_frame(struct sensor *s, int linktype, const struct timeval *ts,
	     const uint8_t *data, size_t caplen)
{
	struct segment seg;
	uint16_t etype = 0;
	size_t off = 0;
	int r;

	s->counters.packets++;
	switch (linktype) {
	case DLT_EN10MB:
		if (caplen < 14)
			goto bad;
		etype = be16(data + 12);
		off = 14;
		for (int i = 0; i < VLAN_MAX &&
				(etype == 0x8100 || etype == 0x88a8 ||
				 etype == 0x9100);
		     i++) {
			if (off + 4 > caplen)
				goto bad;
			etype = be16(data + off + 2);
			off += 4;
		}
		break;
	case DLT_LINUX_SLL:
		if (caplen < 16)
			goto bad;
		etype = be16(data + 14);
		off = 16;
		break;
	case DLT_LINUX_SLL2:
		if (caplen < 20)
			goto bad;
		etype = be16(data);
		off = 20;
		break;
	case DLT_NULL:
		if (caplen < 4)
			goto bad;
		/* Host byte order family: 2 is IPv4, the rest IPv6. */
		etype = (data[0] == 2 || data[3] == 2) ? 0x0800 : 0x86dd;
		off = 4;
		break;
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
		if (caplen < 1)
			goto bad;
		etype = (data[0] >> 4) == 4 ? 0x0800 : 0x86dd;
		break;
	case DLT_NFLOG: {
		size_t len = 0;

		off = nflog_packet(data, caplen, &len, &etype);
		if (!off)
			goto bad;
		caplen = off + len;
		break;
	}
	default:
		goto bad;
	}
	if (etype == 0x0800)
		r = decode_ipv4(s, &seg, data + off, caplen - off);
	else if (etype == 0x86dd)
		r = decode_ipv6(s, &seg, data + off, caplen - off);
	else
		return; /* ARP and friends: not ours */
	if (r < 0)
		goto bad;
	if (r > 0)
		sensor_on_segment(s, ts, &seg);
	return;
bad:
	s->counters.not_decoded++;
}
