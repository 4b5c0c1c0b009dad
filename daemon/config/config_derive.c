// SPDX-License-Identifier: GPL-2.0-or-later
/* The settings that follow from others (config.h): the hand-off's mode
 * once auto is resolved, addresses parsed into socket addresses, and
 * each service's part of the settings filled from the admin's words. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "config.h"
#include "config_value.h"
#include "store_url.h"

/* Settings that follow from others, and pointers into cfg's buffers. */
void
config_derive(struct config *cfg)
{
	/* auto is what start found it to be (config_resolve_auto). */
	cfg->handoff.mode = cfg->handoff.setting != HANDOFF_AUTO
				    ? cfg->handoff.setting
			    : cfg->handoff.auto_on ? HANDOFF_TRANSPARENT
						   : HANDOFF_OFF;
	/* The hand-off's address as a socket address (the text was checked
	 * when read). */
	if (cfg->handoff.address[0])
		config_parse_endpoint(cfg->handoff.address, &cfg->handoff);
	if (cfg->handoff.source[0])
		config_parse_address(cfg->handoff.source, &cfg->handoff.source_addr);
	if (cfg->policy.listen[0])
		config_parse_listen(cfg->policy.listen, &cfg->policy);
	{
		const char *why;

		store_url_parse(cfg->store, &cfg->store_url, &why);
	}
	if (cfg->metrics_listen[0]) {
		struct handoff_config where;

		config_parse_endpoint(cfg->metrics_listen, &where);
		cfg->metrics_addr = where.addr;
		cfg->metrics_addr_len = where.addr_len;
	}
	cfg->nft.handoff_family = 0;
	if (cfg->handoff.mode == HANDOFF_PROXY_V2 && cfg->handoff.address[0]) {
		const struct sockaddr_in *in = (const void *)&cfg->handoff.addr;
		const struct sockaddr_in6 *in6 =
			(const void *)&cfg->handoff.addr;

		cfg->nft.handoff_family = (uint8_t)cfg->handoff.addr.ss_family;
		if (in->sin_family == AF_INET)
			memcpy(cfg->nft.handoff_addr, &in->sin_addr, 4);
		else
			memcpy(cfg->nft.handoff_addr, &in6->sin6_addr, 16);
		cfg->nft.handoff_port = ntohs(in->sin_port);
	}
	cfg->nft.handoff_mark = cfg->handoff.mode == HANDOFF_TRANSPARENT
					? cfg->handoff.mark
					: 0;
	cfg->nft.table = cfg->table;
	cfg->tarpit.capabilities = cfg->capabilities;
	cfg->tarpit.hostname = cfg->hostname;
	cfg->grey.tls_pass = cfg->tls_mode == CONFIG_TLS_PASS;
	cfg->grey.tls_strict = cfg->tls_mode == CONFIG_TLS_STRICT;
	cfg->grey.tls_greylist = cfg->tls_mode == CONFIG_TLS_GREYLIST;
	cfg->tarpit.offer_starttls = cfg->tls_mode != CONFIG_TLS_NO;
	cfg->grey.handoff = cfg->handoff.mode != HANDOFF_OFF;
	/* The door alone (no gateway): its passes are the only passes, the
	 * store's, shared with the site's other doors; beside the gateway
	 * they are the door's own unless the admin says otherwise. */
	cfg->grey.door_passes_gateway = cfg->policy.passes_gateway || !cfg->gateway;
	cfg->grey.suspicious_delay_sec = cfg->signals.suspicious_delay_sec;
	cfg->grey.trust_ttl_sec = cfg->signals.trust_ttl_sec;
	cfg->tarpit.retry_sec = cfg->grey.delay_sec;
	cfg->sensor.smtp_port = cfg->nft.smtp_port;
	cfg->nft.pass_prefix4 = cfg->grey.prefix4;
	cfg->nft.pass_prefix6 = cfg->grey.prefix6;
	/* Greylist only what the sensor can see. */
	cfg->nft.iifname = strcmp(cfg->interface, "any") ? cfg->interface : NULL;
	/* The fast path alone, logged by greygate's own rules, or every
	 * port-25 packet of the interface. */
	cfg->nft.sensor_group = (uint16_t)cfg->nflog_group;
	if (cfg->nflog_group)
		snprintf(cfg->capture_device, sizeof(cfg->capture_device),
		         "nflog:%u", cfg->nflog_group);
	else
		snprintf(cfg->capture_device, sizeof(cfg->capture_device),
		         "%s", cfg->interface);
	/* Without a stutter, trapped clients meet the plain tarpit. */
	cfg->nft.trap_port = cfg->tarpit.stutter_ms ? cfg->trap_port : 0;
}
