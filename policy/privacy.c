// SPDX-License-Identifier: GPL-2.0-or-later
/* Keyed hashes of addresses and their key's file (privacy.h), over
 * nettle's HMAC-SHA-256. */
#include <errno.h>
#include <fcntl.h>
#include <nettle/hmac.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "privacy.h"

/* What the fingerprint hashes: any fixed text no address can be. */
#define FINGERPRINT_TEXT "greygate privacy key fingerprint"

static void
hex(const uint8_t *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = 0;
}

static void
hmac(const uint8_t key[PRIVACY_KEY_LEN], const char *in,
     uint8_t out[SHA256_DIGEST_SIZE])
{
	struct hmac_sha256_ctx ctx;

	hmac_sha256_set_key(&ctx, PRIVACY_KEY_LEN, key);
	hmac_sha256_update(&ctx, strlen(in), (const uint8_t *)in);
	hmac_sha256_digest(&ctx, SHA256_DIGEST_SIZE, out);
}

void
privacy_hash(const uint8_t key[PRIVACY_KEY_LEN], const char *in,
             char out[PRIVACY_HASH_SIZE])
{
	uint8_t mac[SHA256_DIGEST_SIZE];

	hmac(key, in, mac);
	memcpy(out, PRIVACY_HASH_PREFIX, 2);
	hex(mac, (PRIVACY_HASH_SIZE - 3) / 2, out + 2);
}

void
privacy_fingerprint(const uint8_t key[PRIVACY_KEY_LEN],
                    char out[PRIVACY_FINGERPRINT_SIZE])
{
	uint8_t mac[SHA256_DIGEST_SIZE];

	hmac(key, FINGERPRINT_TEXT, mac);
	hex(mac, (PRIVACY_FINGERPRINT_SIZE - 1) / 2, out);
}

static int
unhex(const char *text, uint8_t key[PRIVACY_KEY_LEN])
{
	for (size_t i = 0; i < 2 * PRIVACY_KEY_LEN; i++) {
		char c = text[i];
		int v = c >= '0' && c <= '9'   ? c - '0'
		        : c >= 'a' && c <= 'f' ? c - 'a' + 10
		        : c >= 'A' && c <= 'F' ? c - 'A' + 10
		                               : -1;

		if (v < 0)
			return -EINVAL;
		key[i / 2] = (uint8_t)(i % 2 ? key[i / 2] | v : v << 4);
	}
	/* then only the line's end, or nothing */
	for (const char *p = text + 2 * PRIVACY_KEY_LEN; *p; p++)
		if (*p != '\n' && *p != '\r' && *p != ' ' && *p != '\t')
			return -EINVAL;
	return 0;
}

static int
make_key(const char *path, uint8_t key[PRIVACY_KEY_LEN], char *err)
{
	char text[2 * PRIVACY_KEY_LEN + 2];
	int fd, r = 0;

	if (getrandom(key, PRIVACY_KEY_LEN, 0) != PRIVACY_KEY_LEN) {
		r = -errno;
		snprintf(err, 256, "%s: no random bytes for a new key: %s",
		         path, strerror(-r));
		return r;
	}
	hex(key, PRIVACY_KEY_LEN, text);
	strcat(text, "\n");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	          0600);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) ||
	    fsync(fd) < 0)
		r = -errno;
	if (fd >= 0 && close(fd) < 0 && r == 0)
		r = -errno;
	if (r < 0) {
		if (fd >= 0)
			unlink(path);
		snprintf(err, 256, "%s: cannot write a new key: %s", path,
		         strerror(-r));
	}
	return r;
}

int
privacy_key_load(const char *path, bool create, uint8_t key[PRIVACY_KEY_LEN],
                 bool *made, char *err)
{
	char text[2 * PRIVACY_KEY_LEN + 16] = "";
	struct stat st;
	ssize_t n;
	int fd, r;

	*made = false;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		if (!create) {
			snprintf(err, 256, "%s does not exist", path);
			return -ENOENT;
		}
		r = make_key(path, key, err);
		*made = r == 0;
		return r;
	}
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, 256, "%s: %s", path, strerror(-r));
		if (fd >= 0)
			close(fd);
		return r;
	}
	/* Anyone who can read it can check a guessed address against the
	 * store: as ssh does with its keys, refuse it. */
	if (!S_ISREG(st.st_mode) || (st.st_mode & 077)) {
		close(fd);
		snprintf(err, 256, "%s: %s", path,
		         !S_ISREG(st.st_mode)
		                 ? "not a file"
		                 : "others may read it (chmod 600; only its "
		                   "owner may)");
		return -EPERM;
	}
	n = read(fd, text, sizeof(text) - 1);
	r = n < 0 ? -errno : 0;
	close(fd);
	if (n < 0) {
		snprintf(err, 256, "%s: %s", path, strerror(-r));
		return r;
	}
	text[n] = 0;
	if ((size_t)n < 2 * PRIVACY_KEY_LEN || unhex(text, key) < 0) {
		snprintf(err, 256, "%s: not a key (want 64 hex digits on one "
		         "line)", path);
		return -EINVAL;
	}
	return 0;
}
