// SPDX-License-Identifier: GPL-2.0-or-later
/* libpcap capture for the sensor: live (immediate mode, a sized kernel
 * buffer, non-blocking, BPF for the SMTP ports) or from a pcap/pcapng
 * file, feeding frames to sensor_frame. libpcap is reached through
 * pcap_lib.h: each capture holds it while open. */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcap_lib.h"
#include "sensor.h"

struct sensor_capture {
	const struct pcap_lib *pc;
	pcap_t *pcap;
	int linktype;
	bool live;
	char *file_buf; /* the capture file's stdio buffer (NULL: live) */
};

/* A capture file is read through a 1 MiB stdio buffer: libpcap's own
 * fopen reads 4 KiB at a time, a system call per few dozen packets. */
#define CAPTURE_FILE_BUFFER (1 << 20)

struct dispatch_ctx {
	struct sensor *sensor;
	int linktype;
};

static void
on_packet(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes)
{
	struct dispatch_ctx *d = (struct dispatch_ctx *)user;

	sensor_frame(d->sensor, d->linktype, &h->ts, bytes, h->caplen);
}

void
sensor_capture_filter(const struct sensor_config *cfg, int linktype,
		      char *expr, size_t size)
{
	char ports[64], segs[512];

	if (cfg->tarpit_port)
		snprintf(ports, sizeof(ports), "tcp port %u or tcp port %u",
			 cfg->smtp_port, cfg->tarpit_port);
	else
		snprintf(ports, sizeof(ports), "tcp port %u", cfg->smtp_port);
	/* Only the segments the sensor reads: with SYN, FIN or RST, or with
	 * payload. A bare ACK (a third of an SMTP session's packets) would
	 * cost a copy into the ring and a wake-up for nothing. IPv6 by fixed
	 * offsets: libpcap's tcp[] is IPv4 only, and its "tcp port" already
	 * means a TCP header right after the IPv6 one. */
	snprintf(segs, sizeof(segs),
		 "((%s) and ((ip and (tcp[13] & 7 != 0 or "
		 "ip[2:2] - ((ip[0] & 0xf) << 2) - ((tcp[12] & 0xf0) >> 2) "
		 "!= 0)) or (ip6 and (ip6[53] & 7 != 0 or "
		 "ip6[4:2] - ((ip6[52] & 0xf0) >> 2) != 0)))) or "
		 /* IPv6 with extension headers before TCP (hop-by-hop,
		  * routing, destination options, AH): BPF cannot walk them,
		  * and "tcp port" never matches them; they are rare, so all
		  * go up and the sensor's decoder finds their ports. */
		 "(ip6 and (ip6[6] == 0 or ip6[6] == 43 or ip6[6] == 60 or "
		 "ip6[6] == 51))",
		 ports);
	/* On Ethernet, tagged frames need "vlan" to shift the offsets: one
	 * tag (802.1Q) or two (QinQ). */
	if (linktype == DLT_EN10MB)
		snprintf(expr, size, "(%s) or (vlan and ((%s) or (vlan and (%s))))",
			 segs, segs, segs);
	else
		snprintf(expr, size, "%s", segs);
}

/* The message a caller gets: what failed and libpcap's words, cut to the
 * caller's 256 bytes on purpose (an interface's or a file's name can be
 * as long as libpcap's message). */
static void
capture_error(char *err, const char *what, const char *why)
{
	if (snprintf(err, 256, "%s: %s", what, why) >= 256)
		memcpy(err + 252, "...", 4);
}

static int
set_filter(const struct pcap_lib *pc, pcap_t *p,
	   const struct sensor_config *cfg, char *err)
{
	struct bpf_program prog;
	char expr[SENSOR_FILTER_MAX];

	sensor_capture_filter(cfg, pc->datalink(p), expr, sizeof(expr));
	if (pc->compile(p, &prog, expr, 1, PCAP_NETMASK_UNKNOWN) < 0 ||
	    pc->setfilter(p, &prog) < 0) {
		capture_error(err, "filter", pc->geterr(p));
		return -EINVAL;
	}
	pc->freecode(&prog);
	return 0;
}

/* (takes over the hold on libpcap: given back here on failure) */
static int
capture_new(const struct pcap_lib *pc, pcap_t *p, bool live,
	    struct sensor_capture **out)
{
	struct sensor_capture *cap = calloc(1, sizeof(*cap));

	if (!cap) {
		pc->close(p);
		pcap_lib_release();
		return -ENOMEM;
	}
	cap->pc = pc;
	cap->pcap = p;
	cap->linktype = pc->datalink(p);
	cap->live = live;
	*out = cap;
	return 0;
}

int
sensor_capture_open_live(const char *iface, int buffer_bytes,
			 const struct sensor_config *cfg,
			 struct sensor_capture **out, char *err)
{
	char perr[PCAP_ERRBUF_SIZE] = "";
	const struct pcap_lib *pc = pcap_lib_hold(perr);
	pcap_t *p;
	int r;

	if (!pc) { /* (the loader's words name the library) */
		capture_error(err, "libpcap", perr);
		return -ELIBACC;
	}
	p = pc->create(iface, perr);
	if (!p) {
		capture_error(err, iface, perr);
		pcap_lib_release();
		return -ENODEV;
	}
	pc->set_snaplen(p, 65535);
	pc->set_promisc(p, 0);
	pc->set_immediate_mode(p, 1);
	if (buffer_bytes > 0)
		pc->set_buffer_size(p, buffer_bytes);
	r = pc->activate(p);
	if (r < 0) {
		capture_error(err, iface, pc->geterr(p));
		r = r == PCAP_ERROR_NO_SUCH_DEVICE	 ? -ENODEV
		    : r == PCAP_ERROR_PERM_DENIED ? -EPERM
						  : -EIO;
		goto fail;
	}
	/* NFLOG: greygate's rules chose the packets (libpcap has no
	 * filters for it). */
	if ((pc->datalink(p) != DLT_NFLOG && set_filter(pc, p, cfg, err) < 0) ||
	    pc->setnonblock(p, 1, perr) < 0) {
		if (!err[0])
			capture_error(err, iface, perr);
		r = -EIO;
		goto fail;
	}
	return capture_new(pc, p, true, out);
fail:
	pc->close(p);
	pcap_lib_release();
	return r;
}

int
sensor_capture_open_file(const char *path, const struct sensor_config *cfg,
			 struct sensor_capture **out, char *err)
{
	char perr[PCAP_ERRBUF_SIZE] = "";
	bool is_stdin = strcmp(path, "-") == 0;
	const struct pcap_lib *pc;
	FILE *fp;
	char *buf;
	pcap_t *p;
	int r;

	(void)cfg;
	pc = pcap_lib_hold(perr);
	if (!pc) {
		capture_error(err, "libpcap", perr);
		return -ELIBACC;
	}
	fp = is_stdin ? stdin : fopen(path, "rb");
	if (!fp) {
		capture_error(err, path, strerror(errno));
		pcap_lib_release();
		return -ENOENT;
	}
	/* stdin keeps its own buffer: it outlives the capture. */
	buf = is_stdin ? NULL : malloc(CAPTURE_FILE_BUFFER);
	if (buf)
		setvbuf(fp, buf, _IOFBF, CAPTURE_FILE_BUFFER);
	p = pc->fopen_offline(fp, perr);
	if (!p) {
		/* The file is still ours when libpcap refuses it. */
		capture_error(err, path, perr);
		if (!is_stdin)
			fclose(fp);
		free(buf);
		pcap_lib_release();
		return -ENOENT;
	}
	/* No BPF on a file: it would run in user space, once per packet,
	 * to do what the sensor's port check does anyway. */
	r = capture_new(pc, p, false, out);
	if (r < 0)
		free(buf);
	else
		(*out)->file_buf = buf;
	return r;
}

void
sensor_capture_close(struct sensor_capture *cap)
{
	if (!cap)
		return;
	cap->pc->close(cap->pcap); /* closes the file too */
	free(cap->file_buf);
	free(cap);
	pcap_lib_release();
}

int
sensor_capture_fd(const struct sensor_capture *cap)
{
	return cap->live ? cap->pc->get_selectable_fd(cap->pcap) : -1;
}

int
sensor_capture_stats(struct sensor_capture *cap, uint64_t *received,
		     uint64_t *dropped)
{
	struct pcap_stat st;

	if (!cap->live || cap->pc->stats(cap->pcap, &st) < 0)
		return -EIO;
	*received = st.ps_recv;
	*dropped = st.ps_drop;
	return 0;
}

int
sensor_capture_dispatch(struct sensor_capture *cap, struct sensor *sensor,
			int max)
{
	struct dispatch_ctx d = {sensor, cap->linktype};
	int n;

	/* NFLOG: one read of the netlink socket brings a batch, kept in
	 * libpcap's buffer past max; what stayed there would wait for the
	 * socket's next packet (the loop watches the socket, not the
	 * buffer), so the whole batch is fed now (one read: bounded). */
	if (cap->linktype == DLT_NFLOG && cap->live)
		max = -1;
	errno = 0;
	n = cap->pc->dispatch(cap->pcap, max, on_packet, (u_char *)&d);
	/* (libpcap's NFLOG reader calls a socket with nothing waiting an
	 * error: nothing to read is not one) */
	if (n == PCAP_ERROR && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (n == PCAP_ERROR)
		return -EIO;
	return n < 0 ? 0 : n;
}
