/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A key's value written into the settings, checked (config_load.c reads
 * the file; this writes one value where its key says). */
#ifndef GREYGATE_CONFIG_SET_H
#define GREYGATE_CONFIG_SET_H

#include "config_keys.h"

/* config_set_text - v into dst (k a text kind: K_TEXT, K_PATH, K_NAME,
 * K_IFACE, K_HOST); *why says what is wanted when refused.
 * Return: 0, -EINVAL or -ENAMETOOLONG. */
int config_set_text(const struct key *k, char *dst, const char *v,
                    const char **why);

/* config_set_number - v into dst (a number, a duration, a size) within
 * k's range; *why says what is wanted, or the range, when refused.
 * Return: 0, -EINVAL or -ERANGE. */
int config_set_number(const struct key *k, void *dst, const char *v,
                      const char **why);

#endif
