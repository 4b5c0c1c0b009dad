/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The signals service's part of the settings ([signals]): what the
 * service is given, copied, at its start and at each reload
 * (signals_reconfigure); struct config holds it as cfg->signals. */
#ifndef GREYGATE_SIGNALS_CONFIG_H
#define GREYGATE_SIGNALS_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

/* signals_patterns_shipped - the PTR patterns greygate ships (the
 * default rdns_patterns): where a build runs uninstalled they are
 * missing, which is said, not fatal. */
const char *signals_patterns_shipped(void);

/* [signals] trust: which clients are passed at once. */
enum signals_trust {
	SIGNALS_TRUST_NO,         /* nobody: the signals are only logged */
	SIGNALS_TRUST_FCRDNS,     /* FCrDNS, not dynamic-looking */
	SIGNALS_TRUST_FCRDNS_SPF, /* that, and SPF pass for its sender */
};

/* [signals]: what DNS says of a client (issue 31), looked up by
 * greygated while the client talks. */
struct signals_config {
	bool lookups;          /* look up FCrDNS and the PTR's shape (no) */
	char dns_servers[256]; /* "" (the system's) or c-ares's
				  "ADDR[:PORT],..." */
	uint32_t budget_ms;    /* a decision waits for them this long */
	char rdns_patterns[256]; /* dynamic-looking PTR names ("": none) */
	uint8_t trust;         /* enum signals_trust: who is passed at once */
	uint32_t suspicious_delay_sec; /* SPF fail or softfail, DNSBL, a
					  bad HELO, a sender's domain
					  without mail: the delay (when
					  longer than delay) */
	bool suspect_without_fcrdns; /* no PTR, or one not resolving back:
					suspicious too (no: greylisted as
					anyone) */
	bool suspect_dynamic_rdns; /* a dynamic-looking PTR name:
				      suspicious too (no: never trusted,
				      greylisted as anyone) */
	bool refuse_spf_fail;     /* SPF fail: 550 at RCPT (no: suspicious) */
	bool sender_domain;       /* ask whether MAIL FROM's domain takes
	                             mail (MX, A, AAAA) (yes) */
	bool refuse_unknown_sender_domain; /* ... it does not: 550 at RCPT
	                                      (no: suspicious) */
	bool pool_spf;            /* SPF pass for the sender's domain: its
				     triplet keyed by that domain (yes) */
	char dnsbl_sites[1024];   /* postscreen's syntax ("": none) */
	uint32_t dnsbl_threshold; /* a score of this or more: suspicious */
	uint32_t dnswl_threshold; /* of minus this or less: trusted (0:
				     never) */
	uint8_t trust_spf_widest; /* an SPF term naming a wider IPv4 net
				     (IPv6: this plus 16) trusts nobody
				     (15) */
	uint32_t trust_ttl_sec;   /* a trusted client's pass: its address
				     alone, this long, never refreshed
				     (1 day) */
};

#endif
