// SPDX-License-Identifier: GPL-2.0-or-later
/* The greylist on this host's LMDB store: an attempt's records read,
 * decided (policy/, which does no I/O) and written back; the report's
 * figures kept across restarts as one meta record. */
#include <stdlib.h>

#include "grey_store.h"
#include "store.h"

/* The meta record's name (older stores hold it under this name too). */
#define STATS_KEY "stats"

int
store_decide(struct store *store, struct grey *grey,
	     const struct grey_attempt *a, struct grey_decision *out)
{
	struct grey_records w;
	int r;

	grey_records_prepare(grey, a, &w);
	r = grey_store_lmdb_read(store, &w);
	if (r < 0) {
		memset(out, 0, sizeof(*out));
		return r;
	}
	r = grey_decide_records(grey, a, &w, out);
	return r < 0 ? r : grey_store_lmdb_write(store, &w);
}

int
store_save_stats(struct store *store, const struct grey *grey, int64_t since)
{
	void *rec;
	size_t len;
	int r = grey_stats_encode(grey, since, &rec, &len);

	if (r < 0)
		return r;
	r = store_put_meta(store, STATS_KEY, rec, len);
	free(rec);
	return r;
}

int
store_load_stats(struct store *store, struct grey *grey, int64_t *since)
{
	struct grey_stats saved;
	void *rec;
	size_t len;
	int r = store_get_meta(store, STATS_KEY, &rec, &len);

	if (r != STORE_FOUND)
		return r;
	r = grey_stats_decode(rec, len, &saved);
	free(rec);
	if (r < 0)
		return r;
	grey_stats_add(grey, &saved);
	*since = saved.since;
	grey_stats_free(&saved);
	return STORE_FOUND;
}
