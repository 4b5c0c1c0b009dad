// SPDX-License-Identifier: GPL-2.0-or-later
/* libFuzzer target for greygate.conf: any bytes as the file greygated
 * reads (through inih, the keys' parsers and the checks of settings
 * together), from a memory file. */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"

static void
ignore(const char *text, void *ctx)
{
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static struct config cfg;
	char path[64], err[512];

	if (fd < 0 && (fd = memfd_create("greygate.conf", MFD_CLOEXEC)) < 0)
		return 0;
	if (ftruncate(fd, 0) < 0 ||
	    pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	config_defaults(&cfg);
	config_load(&cfg, path, false, ignore, NULL, err);
	return 0;
}
