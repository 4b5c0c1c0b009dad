/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What this greygated was built with (meson features redis, metrics_http,
 * pcre2, policy_door: README "A small build"). A config that asks for a
 * part the build left out is refused by name, with BUILD_LACKS's words;
 * daemon/left_out.c holds the left-out parts' entry points. */
#ifndef GREYGATE_BUILD_FEATURES_H
#define GREYGATE_BUILD_FEATURES_H

/* "+redis +metrics_http +pcre2 +policy_door", a '-' for each left out
 * (greygated --version). */
extern const char build_features[];

/* The refusal's words for a left-out feature (its meson option's name). */
#define BUILD_LACKS(feature)                                             \
	"this greygated was built without " feature " (meson -D" feature \
	"=disabled)"

#endif
