// SPDX-License-Identifier: GPL-2.0-or-later
/* The LMDB store's records (store_lmdb.h): the keys of clients and
 * triplets, a record got, put or deleted in the store's one write
 * transaction (store_lmdb-int.h), the meta records, the counts of
 * passed and trapped clients. */
#include <errno.h>
#include <lmdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "store_lmdb-int.h"

void
store_lmdb_client_key(const struct grey_client *client, uint8_t *key)
{
	key[0] = client->family;
	key[1] = client->prefix;
	memcpy(key + 2, client->bytes, 16);
}

void
store_lmdb_client_of_key(const uint8_t *key, struct grey_client *client)
{
	client->family = key[0];
	client->prefix = key[1];
	memcpy(client->bytes, key + 2, 16);
}

static size_t
triplet_key(const struct grey_client *client, const char *sender,
	    const char *rcpt, uint8_t *key)
{
	size_t ls = strnlen(sender, STORE_KEY_ADDR_MAX);
	size_t lr = strnlen(rcpt, STORE_KEY_ADDR_MAX);

	store_lmdb_client_key(client, key);
	memcpy(key + CLIENT_KEY_LEN, sender, ls);
	key[CLIENT_KEY_LEN + ls] = 0;
	memcpy(key + CLIENT_KEY_LEN + ls + 1, rcpt, lr);
	return CLIENT_KEY_LEN + ls + 1 + lr;
}

static int
get_fixed(struct store *store, int db, MDB_val *key, void *out, size_t len)
{
	MDB_txn *txn = NULL;
	MDB_val val;
	int rc = store_lmdb_txn(store, &txn);

	store->counters.reads++;
	if (rc)
		return rc;
	rc = mdb_get(txn, store->dbi[db], key, &val);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc)
		return store_lmdb_errno(rc);
	if (val.mv_size != len)
		return -EPROTO;
	memcpy(out, val.mv_data, len);
	return STORE_FOUND;
}

static int
put_fixed(struct store *store, int db, MDB_val *key, const void *rec,
	  size_t len)
{
	MDB_val val = {len, (void *)rec};

	store->counters.writes++;
	return store_lmdb_write(store, db, key, &val, 0);
}

/* Meta records other than the schema stamp: any size, copied out. */
int
store_get_meta(struct store *store, const char *name, void **out,
	       size_t *len)
{
	MDB_val key = {strlen(name), (void *)name}, val;
	MDB_txn *txn = NULL;
	int rc = store_lmdb_txn(store, &txn);

	store->counters.reads++;
	*out = NULL;
	*len = 0;
	if (rc)
		return rc;
	if (!strcmp(name, "schema"))
		return -EINVAL;
	rc = mdb_get(txn, store->dbi[DB_META], &key, &val);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc)
		return store_lmdb_errno(rc);
	*out = malloc(val.mv_size ? val.mv_size : 1);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, val.mv_data, val.mv_size);
	*len = val.mv_size;
	return STORE_FOUND;
}

int
store_put_meta(struct store *store, const char *name, const void *val,
	       size_t len)
{
	MDB_val key = {strlen(name), (void *)name};

	if (!strcmp(name, "schema") || !name[0])
		return -EINVAL;
	return put_fixed(store, DB_META, &key, val, len);
}

int
store_get_triplet(struct store *store, const struct grey_client *client,
		  const char *sender, const char *rcpt,
		  struct store_triplet *out)
{
	uint8_t buf[512];
	MDB_val key = {triplet_key(client, sender, rcpt, buf), buf};

	return get_fixed(store, DB_TRIPLET, &key, out, sizeof(*out));
}

int
store_put_triplet(struct store *store, const struct grey_client *client,
		  const char *sender, const char *rcpt,
		  const struct store_triplet *rec)
{
	uint8_t buf[512];
	MDB_val key = {triplet_key(client, sender, rcpt, buf), buf};

	return put_fixed(store, DB_TRIPLET, &key, rec, sizeof(*rec));
}

int
store_lmdb_client_db(enum store_table table)
{
	return table == STORE_TRAP ? DB_TRAP : DB_PASS;
}

int
store_get_client(struct store *store, enum store_table table,
		 const struct grey_client *client, struct store_client *out)
{
	uint8_t buf[CLIENT_KEY_LEN];
	MDB_val key = {sizeof(buf), buf};

	store_lmdb_client_key(client, buf);
	return get_fixed(store, store_lmdb_client_db(table), &key, out, sizeof(*out));
}

int
store_put_client(struct store *store, enum store_table table,
		 const struct grey_client *client,
		 const struct store_client *rec)
{
	uint8_t buf[CLIENT_KEY_LEN];
	MDB_val key = {sizeof(buf), buf}, val = {sizeof(*rec), (void *)rec};
	int db = store_lmdb_client_db(table);
	int rc;

	MDB_val probe = val;

	store->counters.writes++;
	store_lmdb_client_key(client, buf);
	/* New, or an update: the counts need to know which. On
	 * MDB_KEYEXIST LMDB points probe at the record already there, so
	 * the update writes val, not probe. */
	rc = store_lmdb_write(store, db, &key, &probe, MDB_NOOVERWRITE);
	if (rc == 0)
		(*store_lmdb_client_count(store, db, client->family))++;
	else if (rc == MDB_KEYEXIST)
		rc = store_lmdb_write(store, db, &key, &val, 0);
	return rc;
}

size_t
store_count_clients(const struct store *store, enum store_table table,
		    int family)
{
	return store->clients[table == STORE_TRAP][family == AF_INET6];
}

int
store_del_client(struct store *store, enum store_table table,
		 const struct grey_client *client)
{
	uint8_t buf[CLIENT_KEY_LEN];
	MDB_val key = {sizeof(buf), buf};
	int rc;

	store->counters.writes++;
	store_lmdb_client_key(client, buf);
	rc = store_lmdb_write(store, store_lmdb_client_db(table), &key, NULL, 0);
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc)
		return rc;
	(*store_lmdb_client_count(store, store_lmdb_client_db(table), client->family))--;
	return STORE_FOUND;
}
