// SPDX-License-Identifier: GPL-2.0-or-later
/* Privacy (issue 32; postgrey's --privacy): senders and recipients kept
 * in the store only as keyed hashes, HMAC-SHA-256 under a secret of the
 * site's, so that the store, a copy of it, or a shared Redis holds no
 * address. The same address gives the same hash under the same key (the
 * greylist works as before); without the key an address cannot be
 * checked against a hash, not even by guessing it. */
#ifndef GREYGATE_PRIVACY_H
#define GREYGATE_PRIVACY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PRIVACY_KEY_LEN 32
/* "h:" and 128 bits of the HMAC in hex, and the NUL */
#define PRIVACY_HASH_SIZE 35
#define PRIVACY_HASH_PREFIX "h:"
/* 64 bits of the HMAC of a fixed text, in hex, and the NUL: names the
 * key (gateways sharing a store compare it) and tells nothing of it */
#define PRIVACY_FINGERPRINT_SIZE 17

/* privacy_hash - in as stored: "h:" and 32 hex digits. out holds
 * PRIVACY_HASH_SIZE bytes. */
void privacy_hash(const uint8_t key[PRIVACY_KEY_LEN], const char *in,
                  char out[PRIVACY_HASH_SIZE]);

/* privacy_fingerprint - the key's name, safe to show and to share. */
void privacy_fingerprint(const uint8_t key[PRIVACY_KEY_LEN],
                         char out[PRIVACY_FINGERPRINT_SIZE]);

/*
 * privacy_key_load - the key in path: 64 hex digits (a line), in a file
 * only its owner may read.
 * @create: when path does not exist, make it from getrandom(2) (mode
 *          0600) and say so in *made
 * @err: why not (256 bytes)
 * Return: 0, -ENOENT (absent, create false), or -errno.
 */
int privacy_key_load(const char *path, bool create,
                     uint8_t key[PRIVACY_KEY_LEN], bool *made, char *err);

#endif
