// SPDX-License-Identifier: GPL-2.0-or-later
/* The sensor benchmark's floor: a bare loop over pcap_next_ex on a file,
 * touching each packet's first byte and nothing more. With -b BYTES the
 * file is opened with a stdio buffer of that size, as greygate-sniff does
 * (1 MiB), so that the floor reads the file the same way. */
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main(int argc, char **argv)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	unsigned long n = 0, sum = 0;
	size_t buffer = 0;
	char *buf = NULL;
	pcap_t *p;

	if (argc == 4 && strcmp(argv[1], "-b") == 0) {
		buffer = strtoul(argv[2], NULL, 10);
		argv += 2;
		argc -= 2;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: pcap-floor [-b BYTES] FILE\n");
		return 2;
	}
	if (buffer) {
		FILE *fp = fopen(argv[1], "rb");

		buf = malloc(buffer);
		if (!fp || !buf) {
			perror(argv[1]);
			return 2;
		}
		setvbuf(fp, buf, _IOFBF, buffer);
		p = pcap_fopen_offline(fp, err);
	} else {
		p = pcap_open_offline(argv[1], err);
	}
	if (!p) {
		fprintf(stderr, "pcap-floor: %s\n", err);
		return 2;
	}
	while (pcap_next_ex(p, &h, &data) == 1) {
		sum += data[0];
		n++;
	}
	pcap_close(p);
	free(buf);
	printf("%lu packets (%lu)\n", n, sum & 1);
	return 0;
}
