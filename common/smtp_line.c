// SPDX-License-Identifier: GPL-2.0-or-later
/* Where an SMTP line ends (see smtp_line.h). */
#include <string.h>

#include "smtp_line.h"

size_t
smtp_line_next(const char *buf, size_t len, size_t *line_len)
{
	const char *lf = len ? memchr(buf, '\n', len) : NULL;

	if (!lf)
		return 0;
	*line_len = smtp_line_trim(buf, (size_t)(lf - buf));
	return (size_t)(lf - buf) + 1;
}
