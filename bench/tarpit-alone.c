// SPDX-License-Identifier: GPL-2.0-or-later
/* tarpit-alone: greygate's tarpit by itself on a port, for the tarpit
 * benchmark to compare with smtp-floor on equal terms (no nft redirect,
 * no capture, no policy): the real tarpit code, its dialogue, caps and
 * timers, at its defaults but for the connection caps, raised for a
 * benchmark's clients.
 *   tarpit-alone PORT                                            */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loop.h"
#include "tarpit.h"

int
main(int argc, char **argv)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	struct tarpit_config cfg;
	struct tarpit *tarpit;
	struct loop *loop;
	int r;

	if (argc != 2 || !(sin.sin_port = htons((uint16_t)atoi(argv[1])))) {
		fprintf(stderr, "usage: tarpit-alone PORT\n");
		return 2;
	}
	tarpit_config_defaults(&cfg);
	cfg.hostname = "gw.test";
	cfg.max_conns = 12000;
	cfg.max_per_client = 2000;
	loop = loop_new(timesrc_system());
	tarpit = loop ? tarpit_new(&cfg, loop) : NULL;
	if (!tarpit) {
		perror("tarpit-alone");
		return 1;
	}
	r = tarpit_listen(tarpit, (struct sockaddr *)&sin, sizeof(sin));
	if (r < 0) {
		fprintf(stderr, "tarpit-alone: listen: %s\n", strerror(-r));
		return 1;
	}
	return loop_run(loop) < 0 ? 1 : 0;
}
