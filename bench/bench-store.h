/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The benchmarks' commit of the LMDB store: a figure measured past a
 * failed write would be a false one, so a failure ends the run. */
#ifndef GREYGATE_BENCH_STORE_H
#define GREYGATE_BENCH_STORE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "store.h"

static inline void
bench_store_flush(struct store *store)
{
	int r = store_flush(store);

	if (r < 0) {
		fprintf(stderr, "bench: the store cannot be written: %s\n",
			strerror(-r));
		exit(1);
	}
}

#endif
