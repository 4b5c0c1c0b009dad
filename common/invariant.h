/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An invariant of the program (not of its input: input is checked and
 * refused with an error): when one does not hold, the process says
 * where and what in its log and aborts (issue 58: state machines fell
 * into a quiet default:). Going on in a state that cannot be is worse
 * than a restart: the parent starts a new child, systemd a new parent.
 *
 *	INVARIANT(t->count == 0);
 *	default: UNREACHABLE("a verdict out of enum policy_verdict");
 */
#ifndef GREYGATE_INVARIANT_H
#define GREYGATE_INVARIANT_H

#define INVARIANT(cond)                                                    \
	((cond) ? (void)0                                                  \
	        : invariant_broken(__FILE__, __LINE__, __func__, #cond))
#define UNREACHABLE(what) invariant_broken(__FILE__, __LINE__, __func__, what)

/* invariant_broken - log "invariant broken at FILE:LINE in FUNC(): WHAT"
 * (a warning, to syslog or stderr as the process logs) and abort. */
_Noreturn void invariant_broken(const char *file, int line, const char *func,
                                const char *what);

#endif
