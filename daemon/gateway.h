/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The gateway: greygated's privileged side. It keeps the policy, the
 * store and the nft sets, runs the unprivileged child (sensor and tarpit)
 * and acts on its events, and answers greygatectl. */
#ifndef GREYGATE_GATEWAY_H
#define GREYGATE_GATEWAY_H

#include <stdbool.h>

#include "config.h"

struct gateway;
struct loop;

/*
 * gateway_open - open the store, build the nft table and put every live
 * pass and trap back in it, load the allow lists, bind the tarpit and the
 * control socket, and start the child.
 * @cfg: borrowed; must outlive the gateway (a reload reads its source
 *       again and rewrites it)
 * @loop: borrowed
 * @err: a one-line reason on failure (at least 512 bytes)
 * Return: 0 or -errno.
 */
int gateway_open(struct config *cfg, struct loop *loop, struct gateway **out,
                 char *err);

/* gateway_close - stop the child, close everything; the nft table goes
 * with it. */
void gateway_close(struct gateway *gw);

/* gateway_reload - read the config and the allow lists again; the allow
 * sets are replaced in one batch. Return: 0, or -errno (the old config
 * stays) with err set. */
int gateway_reload(struct gateway *gw, char *err);

#endif
