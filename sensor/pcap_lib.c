// SPDX-License-Identifier: GPL-2.0-or-later
/* libpcap loaded by name (GREYGATE_PCAP_SONAME, read off the library the
 * build found) or, in a static build, linked. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "pcap_lib.h"

#ifdef GREYGATE_PCAP_SONAME
#include <dlfcn.h>

static void *handle;
static unsigned holders;
static struct pcap_lib lib;

static bool
find_calls(char *err)
{
	void *sym;

	/* (a data pointer becomes a function pointer by copy: ISO C has no
	 * cast between them, POSIX promises they are the same size) */
#define PCAP_LIB_FIND(name)                                                    \
	sym = dlsym(handle, "pcap_" #name);                                    \
	if (!sym) {                                                            \
		snprintf(err, 256, "%s: no pcap_" #name,                       \
			 GREYGATE_PCAP_SONAME);                                \
		return false;                                                  \
	}                                                                      \
	memcpy(&lib.name, &sym, sizeof(sym));
	PCAP_LIB_CALLS(PCAP_LIB_FIND)
#undef PCAP_LIB_FIND
	return true;
}

const struct pcap_lib *
pcap_lib_hold(char *err)
{
	if (holders) {
		holders++;
		return &lib;
	}
	handle = dlopen(GREYGATE_PCAP_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!handle) {
		/* dlerror names the library and says why */
		snprintf(err, 256, "%s", dlerror());
		return NULL;
	}
	if (!find_calls(err)) {
		dlclose(handle);
		handle = NULL;
		return NULL;
	}
	holders = 1;
	return &lib;
}

void
pcap_lib_release(void)
{
	if (!holders || --holders)
		return;
	dlclose(handle);
	handle = NULL;
	memset(&lib, 0, sizeof(lib));
}

bool
pcap_lib_loaded(void)
{
	return holders > 0;
}

#else

#define PCAP_LIB_LINKED(name) .name = pcap_##name,
static const struct pcap_lib lib = {PCAP_LIB_CALLS(PCAP_LIB_LINKED)};
#undef PCAP_LIB_LINKED

const struct pcap_lib *
pcap_lib_hold(char *err)
{
	(void)err;
	return &lib;
}

void
pcap_lib_release(void)
{
}

bool
pcap_lib_loaded(void)
{
	return true;
}

#endif
