/* SPDX-License-Identifier: GPL-2.0-or-later */
/* For the store backends only: the rows of a walk that came before their
 * reader asked (a Redis scan brings them at its own pace; the memory
 * backend copies them at the start), kept packed, told in order, with a
 * bound on the bytes held. */
#ifndef GREYGATE_GREY_STORE_QUEUE_H
#define GREYGATE_GREY_STORE_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

#include "grey_store.h"

struct grey_store_queue {
	unsigned char *buf;
	size_t len, size, read; /* bytes held, allocated, already told */
	size_t max_bytes;       /* past it rows are dropped: cut */
	bool cut;               /* a row was dropped (or no memory) */
};

/* grey_store_queue_init - empty, holding at most max_bytes. */
void grey_store_queue_init(struct grey_store_queue *q, size_t max_bytes);
void grey_store_queue_deinit(struct grey_store_queue *q);

/* grey_store_queue_client / _triplet - a row kept (or, past the bound
 * or without memory, dropped and the queue marked cut). */
void grey_store_queue_client(struct grey_store_queue *q,
                             const struct grey_client *c,
                             const struct store_client *rec);
void grey_store_queue_triplet(struct grey_store_queue *q,
                              const struct grey_client *c,
                              const char *sender, const char *rcpt,
                              const struct store_triplet *rec);

/* grey_store_queue_tell - up to max rows, oldest first, to rows's
 * function for each. Return: rows told. */
size_t grey_store_queue_tell(struct grey_store_queue *q, size_t max,
                             const struct grey_store_rows *rows);

/* grey_store_queue_empty - every row kept was told. */
bool grey_store_queue_empty(const struct grey_store_queue *q);

#endif
