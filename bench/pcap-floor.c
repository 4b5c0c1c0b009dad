// SPDX-License-Identifier: GPL-2.0-or-later
/* The sensor benchmark's floor: a bare loop over pcap_next_ex on a file,
 * touching each packet's first byte and nothing more. */
#include <pcap/pcap.h>
#include <stdio.h>

int
main(int argc, char **argv)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	unsigned long n = 0, sum = 0;
	pcap_t *p;

	if (argc != 2) {
		fprintf(stderr, "usage: pcap-floor FILE\n");
		return 2;
	}
	p = pcap_open_offline(argv[1], err);
	if (!p) {
		fprintf(stderr, "pcap-floor: %s\n", err);
		return 2;
	}
	while (pcap_next_ex(p, &h, &data) == 1) {
		sum += data[0];
		n++;
	}
	pcap_close(p);
	printf("%lu packets (%lu)\n", n, sum & 1);
	return 0;
}
