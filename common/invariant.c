// SPDX-License-Identifier: GPL-2.0-or-later
/* Where an invariant broke, said before the process ends (invariant.h). */
#include <stdlib.h>

#include "invariant.h"
#include "log.h"

void
invariant_broken(const char *file, int line, const char *func,
                 const char *what)
{
	log_warnx("invariant broken at %s:%d in %s(): %s", file, line, func,
	          what);
	abort();
}
