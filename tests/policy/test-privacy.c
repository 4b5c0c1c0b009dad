// SPDX-License-Identifier: GPL-2.0-or-later
/* Privacy's keyed hashes and its key file (policy/privacy.h), and the
 * greylist under privacy: the store holds no address, yet the retry
 * finds its triplet, the exempt and trap lists still match, the null
 * sender stays empty. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "policy.h"
#include "store.h"
#include "privacy.h"

#define T0 1700000000LL

static char tmpdir[64];

static void
make_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/gg-privacy-XXXXXX");
	CHECK(mkdtemp(tmpdir));
}

static void
remove_tmpdir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	CHECK_INT(system(cmd), 0);
}

static void
key_0_to_31(uint8_t key[PRIVACY_KEY_LEN])
{
	for (int i = 0; i < PRIVACY_KEY_LEN; i++)
		key[i] = (uint8_t)i;
}

/* Known answers (Python's hmac over the same key and text), and a
 * hash that depends on its key. */
static void
test_hash_known_answers(void)
{
	uint8_t key[PRIVACY_KEY_LEN];
	char h[PRIVACY_HASH_SIZE], other[PRIVACY_HASH_SIZE];
	char fp[PRIVACY_FINGERPRINT_SIZE];

	key_0_to_31(key);
	privacy_hash(key, "alice@example.org", h);
	CHECK_STR(h, "h:03a2cceef95fc1b3c5757f658be5a2fe");
	privacy_fingerprint(key, fp);
	CHECK_STR(fp, "2b0a286de629787f");
	key[0] ^= 1;
	privacy_hash(key, "alice@example.org", other);
	CHECK(strcmp(h, other) != 0);
}

static void
write_file(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	CHECK(f);
	CHECK(fputs(text, f) >= 0);
	CHECK_INT(fclose(f), 0);
	CHECK_INT(chmod(path, mode), 0);
}

/* The key file: made when absent (0600, 64 hex digits, read back the
 * same), absent and not to be made, readable by others, not a key. */
static void
test_key_file(void)
{
	uint8_t key[PRIVACY_KEY_LEN], again[PRIVACY_KEY_LEN], want[PRIVACY_KEY_LEN];
	char path[128], err[256];
	struct stat st;
	bool made;

	make_tmpdir();
	snprintf(path, sizeof(path), "%s/privacy.key", tmpdir);
	CHECK_INT(privacy_key_load(path, false, key, &made, err), -ENOENT);
	CHECK(strstr(err, "does not exist"));
	CHECK_INT(privacy_key_load(path, true, key, &made, err), 0);
	CHECK(made);
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_mode & 0777, 0600);
	CHECK_INT(st.st_size, 65);
	CHECK_INT(privacy_key_load(path, true, again, &made, err), 0);
	CHECK(!made);
	CHECK(memcmp(key, again, sizeof(key)) == 0);

	write_file(path,
	           "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n",
	           0600);
	key_0_to_31(want);
	CHECK_INT(privacy_key_load(path, false, key, &made, err), 0);
	CHECK(memcmp(key, want, sizeof(key)) == 0);
	chmod(path, 0644);
	CHECK_INT(privacy_key_load(path, false, key, &made, err), -EPERM);
	CHECK(strstr(err, "chmod 600"));
	write_file(path, "not a key\n", 0600);
	CHECK_INT(privacy_key_load(path, false, key, &made, err), -EINVAL);
	CHECK(strstr(err, "64 hex digits"));
	write_file(path,
	           "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f junk\n",
	           0600);
	CHECK_INT(privacy_key_load(path, false, key, &made, err), -EINVAL);
	remove_tmpdir();
}

static struct store *store;
static struct grey *grey;

static struct grey_decision
rcpt(int64_t now, const char *client, const char *from, const char *to,
     enum grey_path path)
{
	struct grey_decision d;
	struct grey_attempt a = {.kind = GREY_ATTEMPT_RCPT, .now = now,
	                         .helo = "", .sender = from, .rcpt = to,
	                         .path = path,
	                         .reply = path == GREY_PATH_POLICY ? 0 : 451};

	CHECK_INT(inet_pton(AF_INET, client, a.client.bytes), 1);
	a.client.family = AF_INET;
	CHECK_INT(store_decide(store, grey, &a, &d), 0);
	return d;
}

/* What the store holds, each triplet's sender and recipient, one a line. */
static int
gather(const struct grey_client *c, const char *sender, const char *rcpt_,
       const struct store_triplet *t, void *ctx)
{
	char *out = ctx;
	size_t n = strlen(out);

	snprintf(out + n, 4096 - n, "%s %s\n", sender, rcpt_);
	return 0;
}

static void
test_greylist_under_privacy(void)
{
	struct grey_config cfg;
	struct grey_decision d;
	char held[4096] = "", hash[PRIVACY_HASH_SIZE], line[128];

	make_tmpdir();
	CHECK_INT(store_open(tmpdir, false, &store), 0);
	grey_config_defaults(&cfg);
	cfg.privacy = true;
	key_0_to_31(cfg.privacy_key);
	grey = grey_new(&cfg);
	CHECK(grey);
	CHECK_INT(grey_exempt_add(grey, "postmaster@"), 0);
	CHECK_INT(grey_trap_add(grey, "trap@b.test"), 0);

	d = rcpt(T0, "198.51.100.7", "Alice@Example.ORG", "bob@b.test",
	         GREY_PATH_TARPIT);
	CHECK_INT(d.reason, GREY_REASON_NEW);
	d = rcpt(T0, "198.51.100.9", "", "bob@b.test", GREY_PATH_TARPIT);
	CHECK_INT(d.reason, GREY_REASON_NEW);
	/* the retry finds its triplet by the same hashes (normalized
	 * first: the case folded) */
	d = rcpt(T0 + 300, "198.51.100.7", "alice@example.org", "BOB@b.test",
	         GREY_PATH_TARPIT);
	CHECK_INT(d.reason, GREY_REASON_RETRY_PASSED);
	/* the lists are the admin's addresses: they still match */
	d = rcpt(T0, "203.0.113.7", "x@c.test", "postmaster@b.test",
	         GREY_PATH_POLICY);
	CHECK_INT(d.action, GREY_ALLOWED);
	CHECK_INT(d.reason, GREY_REASON_RECIPIENT_EXEMPT);
	d = rcpt(T0, "192.0.2.7", "x@c.test", "trap@b.test", GREY_PATH_TARPIT);
	CHECK_INT(d.action, GREY_TRAP);

	CHECK_INT(store_flush(store), 0);
	CHECK_INT(store_each_triplet(store, gather, held), 0);
	CHECK(!strchr(held, '@'));
	privacy_hash(cfg.privacy_key, "alice@example.org", hash);
	CHECK(strstr(held, hash));
	/* the null sender stays empty: no one's address */
	privacy_hash(cfg.privacy_key, "bob@b.test", hash);
	snprintf(line, sizeof(line), "\n %s\n", hash);
	CHECK(strstr(held, line) || !strncmp(held, line + 1, strlen(line + 1)));
	grey_free(grey);
	store_close(store);
	remove_tmpdir();
}

int
main(void)
{
	RUN(test_hash_known_answers);
	RUN(test_key_file);
	RUN(test_greylist_under_privacy);
	return 0;
}
