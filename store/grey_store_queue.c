// SPDX-License-Identifier: GPL-2.0-or-later
/* The rows a walk holds for its reader (grey_store_queue.h): one buffer,
 * each row a kind byte, the client key, the record, and for a triplet
 * its two addresses with their NULs; the buffer is compacted once half
 * of it was told. */
#include <stdlib.h>
#include <string.h>

#include "grey_store_queue.h"

enum { ROW_CLIENT = 1, ROW_TRIPLET = 2 };

void
grey_store_queue_init(struct grey_store_queue *q, size_t max_bytes)
{
	memset(q, 0, sizeof(*q));
	q->max_bytes = max_bytes;
}

void
grey_store_queue_deinit(struct grey_store_queue *q)
{
	free(q->buf);
	memset(q, 0, sizeof(*q));
}

/* Room for n more bytes. Return: where they go, or NULL (cut). */
static unsigned char *
room(struct grey_store_queue *q, size_t n)
{
	unsigned char *more;
	size_t size;

	if (q->read && q->read >= q->len / 2) {
		memmove(q->buf, q->buf + q->read, q->len - q->read);
		q->len -= q->read;
		q->read = 0;
	}
	if (q->len - q->read + n > q->max_bytes) {
		q->cut = true;
		return NULL;
	}
	if (q->len + n > q->size) {
		size = q->size ? q->size : 4096;
		while (size < q->len + n)
			size *= 2;
		more = realloc(q->buf, size);
		if (!more) {
			q->cut = true;
			return NULL;
		}
		q->buf = more;
		q->size = size;
	}
	q->len += n;
	return q->buf + q->len - n;
}

void
grey_store_queue_client(struct grey_store_queue *q,
                        const struct grey_client *c,
                        const struct store_client *rec)
{
	unsigned char *p = room(q, 1 + sizeof(*c) + sizeof(*rec));

	if (!p)
		return;
	*p++ = ROW_CLIENT;
	memcpy(p, c, sizeof(*c));
	memcpy(p + sizeof(*c), rec, sizeof(*rec));
}

void
grey_store_queue_triplet(struct grey_store_queue *q,
                         const struct grey_client *c, const char *sender,
                         const char *rcpt, const struct store_triplet *rec)
{
	size_t ls = strlen(sender) + 1, lr = strlen(rcpt) + 1;
	unsigned char *p = room(q, 1 + sizeof(*c) + sizeof(*rec) + ls + lr);

	if (!p)
		return;
	*p++ = ROW_TRIPLET;
	memcpy(p, c, sizeof(*c));
	p += sizeof(*c);
	memcpy(p, rec, sizeof(*rec));
	p += sizeof(*rec);
	memcpy(p, sender, ls);
	memcpy(p + ls, rcpt, lr);
}

size_t
grey_store_queue_tell(struct grey_store_queue *q, size_t max,
                      const struct grey_store_rows *rows)
{
	size_t told = 0;

	while (told < max && q->read < q->len) {
		const unsigned char *p = q->buf + q->read + 1;
		struct grey_client c;

		memcpy(&c, p, sizeof(c));
		p += sizeof(c);
		if (q->buf[q->read] == ROW_CLIENT) {
			struct store_client rec;

			memcpy(&rec, p, sizeof(rec));
			q->read += 1 + sizeof(c) + sizeof(rec);
			if (rows->client)
				rows->client(&c, &rec, rows->ctx);
		} else {
			struct store_triplet rec;
			const char *sender, *rcpt;

			memcpy(&rec, p, sizeof(rec));
			sender = (const char *)p + sizeof(rec);
			rcpt = sender + strlen(sender) + 1;
			q->read += 1 + sizeof(c) + sizeof(rec) +
			           strlen(sender) + 1 + strlen(rcpt) + 1;
			/* (the strings stay put until the next row is kept) */
			if (rows->triplet)
				rows->triplet(&c, sender, rcpt, &rec,
				              rows->ctx);
		}
		told++;
	}
	return told;
}

bool
grey_store_queue_empty(const struct grey_store_queue *q)
{
	return q->read == q->len;
}
