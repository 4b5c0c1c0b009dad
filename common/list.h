/* SPDX-License-Identifier: GPL-2.0-or-later */
/* greygate's one list (issue 58): intrusive (a node in each entry),
 * doubly linked around a head, so that an entry leaves in constant time
 * from wherever it is. The hash table's companion: the caches' use
 * orders (least recently used at the front) are these.
 *
 *	struct list lru;
 *	list_init(&lru);
 *	list_push_back(&lru, &e->use);
 *	for (struct list_node *n = list_front(&lru); n;
 *	     n = list_next(&lru, n)) ...
 */
#ifndef GREYGATE_LIST_H
#define GREYGATE_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct list_node {
	struct list_node *prev, *next;
};

struct list {
	struct list_node head; /* (its own prev and next when empty) */
};

/* The entry of type holding node at member. */
#define LIST_ENTRY(node, type, member)                                     \
	((type *)((char *)(node) - offsetof(type, member)))

static inline void
list_init(struct list *l)
{
	l->head.prev = l->head.next = &l->head;
}

static inline bool
list_empty(const struct list *l)
{
	return l->head.next == &l->head;
}

/* list_push_back - n last (n in no list). */
static inline void
list_push_back(struct list *l, struct list_node *n)
{
	n->prev = l->head.prev;
	n->next = &l->head;
	l->head.prev->next = n;
	l->head.prev = n;
}

/* list_remove - n out of the list it is in. */
static inline void
list_remove(struct list_node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = NULL;
}

/* list_front - the first node, NULL if none. */
static inline struct list_node *
list_front(const struct list *l)
{
	return list_empty(l) ? NULL : l->head.next;
}

/* list_next - the node after n, NULL after the last. */
static inline struct list_node *
list_next(const struct list *l, const struct list_node *n)
{
	return n->next == &l->head ? NULL : n->next;
}

#endif
