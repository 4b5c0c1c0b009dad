/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The shape of a client's PTR name, a signal of issue 31: large
 * providers greylist (or refuse) clients whose name looks like an
 * access line's rather than a mail server's: it embeds the client's
 * address ("198-51-100-7.example.net", "c6336407.example.net") or has
 * the words providers give their dynamic pools ("dsl", "dyn", "pool",
 * "cable", ...). The words are patterns in a file the admin may change
 * (PCRE2, any case, one a line; etc/dynamic-rdns shipped); the address
 * is recognised here, in the forms providers use. */
#ifndef GREYGATE_RDNS_SHAPE_H
#define GREYGATE_RDNS_SHAPE_H

#include <stddef.h>
#include <stdint.h>

struct rdns_shape;

/*
 * rdns_shape_load - the patterns of the file at path (NULL: none, only
 * the address is looked for).
 * @err: why not: the file and line of a pattern that does not compile
 * Return: the patterns, or NULL.
 */
struct rdns_shape *rdns_shape_load(const char *path, char *err, size_t len);

/* rdns_shape_free - NULL is fine. */
void rdns_shape_free(struct rdns_shape *s);

/*
 * rdns_shape_dynamic - whether name looks like an access line's for the
 * client at addr (family AF_INET or AF_INET6).
 * @why: when it does, what: "embeds the address" or "pattern N: TEXT"
 * Return: 1 (dynamic-looking), 0 (not), -ENOMEM.
 */
int rdns_shape_dynamic(const struct rdns_shape *s, int family,
                       const uint8_t *addr, const char *name, char *why,
                       size_t len);

/* rdns_shape_count - patterns loaded. */
size_t rdns_shape_count(const struct rdns_shape *s);

#endif
