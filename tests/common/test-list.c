// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the one list (common/list.h): in order, an entry out from the
 * front, the middle and the back, moved to the back (a use), empty
 * again. */
#include "check.h"
#include "list.h"

struct entry {
	int value;
	struct list_node node;
};

static void
expect(const struct list *l, const int *want, int n)
{
	int i = 0;

	for (struct list_node *p = list_front(l); p; p = list_next(l, p), i++) {
		CHECK(i < n);
		CHECK_INT(LIST_ENTRY(p, struct entry, node)->value, want[i]);
	}
	CHECK_INT(i, n);
}

static void
test_order_remove_move(void)
{
	struct list l;
	struct entry e[4] = {{1, {0}}, {2, {0}}, {3, {0}}, {4, {0}}};

	list_init(&l);
	CHECK(list_empty(&l));
	CHECK(!list_front(&l));
	for (int i = 0; i < 4; i++)
		list_push_back(&l, &e[i].node);
	expect(&l, (int[]){1, 2, 3, 4}, 4);
	list_remove(&e[0].node); /* the front */
	list_remove(&e[2].node); /* the middle */
	expect(&l, (int[]){2, 4}, 2);
	list_remove(&e[1].node); /* a use: to the back */
	list_push_back(&l, &e[1].node);
	expect(&l, (int[]){4, 2}, 2);
	list_remove(&e[3].node);
	list_remove(&e[1].node);
	CHECK(list_empty(&l));
}

int
main(void)
{
	RUN(test_order_remove_move);
	return 0;
}
