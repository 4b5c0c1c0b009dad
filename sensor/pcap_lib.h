// SPDX-License-Identifier: GPL-2.0-or-later
/* libpcap as the captures reach it: loaded when the first capture opens
 * and unloaded when the last one closes, so that a process that does not
 * capture (greygated's own: its child captures) does not map it. Debian's
 * libpcap brings D-Bus, libsystemd, libgcrypt and three compressors with
 * it, a quarter of an idle greygated's memory. A static build (musl) has
 * it linked in, and the same table points at it. */
#ifndef GREYGATE_PCAP_LIB_H
#define GREYGATE_PCAP_LIB_H

#include <pcap/pcap.h>
#include <stdbool.h>

/* The calls the sensor makes, each pcap_NAME; the table's members have
 * the types pcap.h declares. */
#define PCAP_LIB_CALLS(X)                                                      \
	X(activate)                                                            \
	X(close)                                                               \
	X(compile)                                                             \
	X(create)                                                              \
	X(datalink)                                                            \
	X(dispatch)                                                            \
	X(fopen_offline)                                                       \
	X(freecode)                                                            \
	X(get_selectable_fd)                                                   \
	X(geterr)                                                              \
	X(set_buffer_size)                                                     \
	X(set_immediate_mode)                                                  \
	X(set_promisc)                                                         \
	X(set_snaplen)                                                         \
	X(setfilter)                                                           \
	X(setnonblock)                                                         \
	X(stats)

#define PCAP_LIB_MEMBER(name) __typeof__(pcap_##name) *name;
struct pcap_lib {
	PCAP_LIB_CALLS(PCAP_LIB_MEMBER)
};
#undef PCAP_LIB_MEMBER

/* pcap_lib_hold - the table, libpcap loaded if no one holds it yet; NULL
 * with what failed in err (256 bytes): the library's name and the
 * loader's words. Each hold is given back with pcap_lib_release. */
const struct pcap_lib *pcap_lib_hold(char *err);
void pcap_lib_release(void);
/* pcap_lib_loaded - whether libpcap is in this process now (tests). */
bool pcap_lib_loaded(void);

#endif
