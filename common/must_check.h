/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The tree's rule for errors (README, "Hacking"): a function that can
 * fail returns -errno; every caller checks; the log line a failure makes
 * says what the client will see. MUST_CHECK has the compiler hold every
 * caller of a function whose failure matters to the rule. */
#ifndef GREYGATE_MUST_CHECK_H
#define GREYGATE_MUST_CHECK_H

#define MUST_CHECK __attribute__((warn_unused_result))

#endif
