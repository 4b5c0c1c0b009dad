// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the triplets a gateway on a shared store keeps to write back
 * into an emptied store (issue 29 D2): listed oldest first with their
 * addresses and records, only those first seen after the cut-off, at
 * most the ring's size (the oldest go first), and what one costs in
 * memory (at most 128 bytes with typical addresses). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "check_grey.h"
#include "policy.h"
#include "shared_waiting.h"

#define T0 1800000000LL

static void
free_list(struct shared_waiting_triplet **list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

/* What a gateway decides from while the store is away or it yields: the
 * latest record of the triplet asked, no other's (issue 57). */
static void
test_found_latest_of_its_own(void)
{
	struct shared_waiting *w = shared_waiting_new(4);
	struct grey_client a = net("198.51.100.0/24"), b = net("203.0.113.0/24");
	struct store_triplet t;

	CHECK(w);
	CHECK(!shared_waiting_find(w, &a, "s@x.test", "r@y.test", &t));
	CHECK_INT(shared_waiting_put(w, &a, "s@x.test", "r@y.test",
	                             &(struct store_triplet){T0, T0, 1, 0}), 0);
	CHECK_INT(shared_waiting_put(w, &b, "s@x.test", "r@y.test",
	                             &(struct store_triplet){T0 + 1, T0 + 1, 1, 0}),
	          0);
	/* its early retry: the latest record is the one found */
	CHECK_INT(shared_waiting_put(w, &a, "s@x.test", "r@y.test",
	                             &(struct store_triplet){T0, T0 + 2, 2, 0}), 0);
	CHECK(shared_waiting_find(w, &a, "s@x.test", "r@y.test", &t));
	CHECK_INT(t.first_seen, T0);
	CHECK_INT(t.last_seen, T0 + 2);
	CHECK_INT(t.attempts, 2);
	CHECK(shared_waiting_find(w, &b, "s@x.test", "r@y.test", &t));
	CHECK_INT(t.first_seen, T0 + 1);
	/* another sender, another recipient, a prefix of one: not it */
	CHECK(!shared_waiting_find(w, &a, "s@x.tes", "r@y.test", &t));
	CHECK(!shared_waiting_find(w, &a, "s@x.test", "q@y.test", &t));
	CHECK(!shared_waiting_find(w, &a, "", "r@y.test", &t));
	/* pushed out of the ring: gone */
	for (int i = 0; i < 4; i++)
		CHECK_INT(shared_waiting_put(w, &b, "o@x.test", "r@y.test",
		                             &(struct store_triplet){T0, T0, 1, 0}),
		          0);
	CHECK(!shared_waiting_find(w, &a, "s@x.test", "r@y.test", &t));
	shared_waiting_free(w);
}

static void
test_listed_oldest_first_after_the_cut(void)
{
	struct shared_waiting *w = shared_waiting_new(0);
	struct grey_client a = net("198.51.100.0/24");
	struct shared_waiting_triplet **list;
	size_t n;

	CHECK(w);
	CHECK_INT(shared_waiting_list(w, 0, &list, &n), 0);
	CHECK_INT(n, 0);
	free_list(list, n);
	for (int i = 0; i < 3; i++) {
		struct store_triplet t = {.first_seen = T0 + i,
		                          .last_seen = T0 + i + 5,
		                          .attempts = (uint32_t)i + 1};
		char sender[64];

		snprintf(sender, sizeof(sender), "s%d@example.com", i);
		CHECK_INT(shared_waiting_put(w, &a, sender, "r@example.org", &t), 0);
	}
	CHECK_INT(shared_waiting_count(w), 3);
	/* (first seen after T0: the second and the third) */
	CHECK_INT(shared_waiting_list(w, T0, &list, &n), 0);
	CHECK_INT(n, 2);
	CHECK_STR(list[0]->sender, "s1@example.com");
	CHECK_STR(list[0]->rcpt, "r@example.org");
	CHECK_INT(list[0]->t.first_seen, T0 + 1);
	CHECK_INT(list[0]->t.last_seen, T0 + 6);
	CHECK_INT(list[0]->t.attempts, 2);
	CHECK_INT(list[0]->key.prefix, 24);
	CHECK_STR(list[1]->sender, "s2@example.com");
	free_list(list, n);
	shared_waiting_free(w);
}

/* Full: each put pushes the oldest out; what is listed is the latest. */
static void
test_the_oldest_go_first(void)
{
	struct shared_waiting *w = shared_waiting_new(4);
	struct grey_client a = net("2001:db8:1::/64");
	struct shared_waiting_triplet **list;
	size_t n;

	CHECK(w);
	for (int i = 0; i < 10; i++) {
		struct store_triplet t = {.first_seen = T0 + i,
		                          .last_seen = T0 + i};
		char sender[64];

		snprintf(sender, sizeof(sender), "s%d@example.com", i);
		CHECK_INT(shared_waiting_put(w, &a, sender, "r@example.org", &t), 0);
	}
	CHECK_INT(shared_waiting_count(w), 4);
	CHECK_INT(shared_waiting_list(w, 0, &list, &n), 0);
	CHECK_INT(n, 4);
	for (size_t i = 0; i < n; i++) {
		char want[64];

		snprintf(want, sizeof(want), "s%zu@example.com", i + 6);
		CHECK_STR(list[i]->sender, want);
	}
	free_list(list, n);
	shared_waiting_free(w);
}

static void
test_memory(void)
{
	struct shared_waiting *w;
	struct grey_client a = net("203.0.113.0/24");
	size_t before = mallinfo2().uordblks, each;

	w = shared_waiting_new(0);
	CHECK(w);
	for (unsigned i = 0; i < SHARED_WAITING_MAX; i++) {
		struct store_triplet t = {.first_seen = T0, .last_seen = T0};
		char sender[64];

		snprintf(sender, sizeof(sender), "newsletter-%u@mail.example.com", i);
		CHECK_INT(shared_waiting_put(w, &a, sender, "postmaster@example.org",
		                             &t),
		          0);
	}
	if (mallinfo2().uordblks > before) {
		each = (mallinfo2().uordblks - before) / SHARED_WAITING_MAX;
		printf("memory: %zu bytes a triplet kept (%u at most: %zu KiB)\n",
		       each, SHARED_WAITING_MAX,
		       each * SHARED_WAITING_MAX / 1024);
		CHECK(each <= 128);
	} else {
		printf("memory: not measured (a sanitizer's allocator)\n");
	}
	shared_waiting_free(w);
}

int
main(void)
{
	RUN(test_found_latest_of_its_own);
	RUN(test_listed_oldest_first_after_the_cut);
	RUN(test_the_oldest_go_first);
	RUN(test_memory);
	return 0;
}
