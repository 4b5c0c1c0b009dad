/* SPDX-License-Identifier: GPL-2.0-or-later */
/* postgrey's whitelist files, read as they are, for the policy door:
 * postgrey_whitelist_clients (host names and domain suffixes, matched on
 * Postfix's client_name; /regex/; addresses, partial IPv4 addresses and
 * CIDRs, matched on client_address) and postgrey_whitelist_recipients
 * (domain, name@, name@domain with +extensions, /regex/). Each file's
 * ".local" twin is read too when it exists, as postgrey does. Regexes are
 * Perl's (PCRE2), case-insensitive, as postgrey's are. */
#ifndef GREYGATE_POLICY_LISTS_H
#define GREYGATE_POLICY_LISTS_H

#include <stdbool.h>

#include "policy.h"

struct policy_lists;

/* Told of each line that is skipped (postgrey warns and goes on). */
typedef void policy_lists_warn_fn(const char *path, int line, const char *why,
                                  void *ctx);

/*
 * policy_lists_load - read the two files (either may be "": none).
 * @out: the lists (policy_lists_free)
 * @err: why a file could not be read (512 bytes)
 * Return: 0, -errno (a named file that cannot be read: a missing ".local"
 * is no error) or -ENOMEM.
 */
int policy_lists_load(const char *clients_path, const char *recipients_path,
                      policy_lists_warn_fn *warn, void *ctx,
                      struct policy_lists **out, char *err);

void policy_lists_free(struct policy_lists *lists);

/* policy_lists_client - is the client whitelisted: by name (client_name,
 * "unknown" or NULL when Postfix has none) or by address? */
bool policy_lists_client(const struct policy_lists *lists,
                         const char *client_name, const struct grey_addr *addr);

/* policy_lists_recipient - is the recipient whitelisted? */
bool policy_lists_recipient(const struct policy_lists *lists,
                            const char *recipient);

/* policy_lists_count - entries read from the client and recipient files. */
void policy_lists_count(const struct policy_lists *lists, int *clients,
                        int *recipients);

#endif
