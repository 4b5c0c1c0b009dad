/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The gateway: the parts joined on one event loop. The sensor's events go
 * to the policy, its decisions to the nft sets and the log. */
#ifndef GREYGATE_GATEWAY_H
#define GREYGATE_GATEWAY_H

#include "config.h"

struct gateway;
struct loop;

/*
 * gateway_open - open the store, load the allow lists, build the nft
 * table and put every live pass and trap back in it, bind the tarpit and
 * open the capture.
 * @cfg: borrowed; must outlive the gateway
 * @loop: borrowed
 * @err: a one-line reason on failure (at least 512 bytes)
 * Return: 0 or -errno.
 */
int gateway_open(const struct config *cfg, struct loop *loop,
		 struct gateway **out, char *err);

/* gateway_close - everything closed; the nft table goes with it. */
void gateway_close(struct gateway *gw);

/* gateway_reload_allow - read the allow directory again and replace the
 * allow sets in one batch. Return: entries loaded, or -errno. */
int gateway_reload_allow(struct gateway *gw);

#endif
