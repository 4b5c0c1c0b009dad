// SPDX-License-Identifier: GPL-2.0-or-later
/* libpcap as the captures hold it (sensor/pcap_lib.c): in this process
 * only while a capture is open (every failure to open gives it back),
 * loaded again for the next; a missing library is said, by name. A
 * static build has it linked: only the table is checked there. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "pcap_lib.h"
#include "sensor.h"

static char dir[] = "/tmp/greygate-pcap-lib.XXXXXX";
static char lib_path[512]; /* the library's file, seen while loaded */

/* Whether a file whose name has NAME is mapped into this process. */
static bool
mapped(const char *name)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	bool found = false;

	CHECK(f);
	while (fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');

		if (!path || !strstr(path, name))
			continue;
		found = true;
		if (strstr(path, "libpcap") && !lib_path[0]) {
			path[strcspn(path, "\n")] = 0;
			snprintf(lib_path, sizeof(lib_path), "%s", path);
		}
	}
	fclose(f);
	return found;
}

#define PCAP_LIB_SET(name) CHECK(pc->name);
static void
check_table(const struct pcap_lib *pc)
{
	CHECK(pc);
	PCAP_LIB_CALLS(PCAP_LIB_SET)
}
#undef PCAP_LIB_SET

static void
test_held_while_used(void)
{
	const struct pcap_lib *pc, *again;
	char err[256] = "";

	CHECK(!pcap_lib_loaded());
	CHECK(!mapped("libpcap"));
	pc = pcap_lib_hold(err);
	check_table(pc);
	CHECK(mapped("libpcap"));
	again = pcap_lib_hold(err);
	CHECK(again == pc);
	pcap_lib_release();
	CHECK(mapped("libpcap"));
	pcap_lib_release();
	CHECK(!pcap_lib_loaded());
	/* with what it brought (Debian's: D-Bus) */
	CHECK(!mapped("libpcap"));
	CHECK(!mapped("libdbus"));
	pc = pcap_lib_hold(err);
	check_table(pc);
	pcap_lib_release();
	CHECK(!mapped("libpcap"));
}

/* A pcap file with no packets: the global header alone. */
static void
write_empty_capture(const char *path)
{
	const uint32_t header[6] = {0xa1b2c3d4, 2 | 4u << 16, 0, 0, 65535, 1};
	FILE *f = fopen(path, "wb");

	CHECK(f);
	CHECK(fwrite(header, sizeof(header), 1, f) == 1);
	CHECK(fclose(f) == 0);
}

static void
test_captures_hold_it(void)
{
	struct sensor_config cfg = {0};
	struct sensor_capture *cap, *cap2;
	char path[128], junk[128], err[256] = "";

	snprintf(path, sizeof(path), "%s/empty.pcap", dir);
	snprintf(junk, sizeof(junk), "%s/junk.pcap", dir);
	write_empty_capture(path);
	FILE *f = fopen(junk, "w");
	CHECK(f && fputs("not a capture\n", f) >= 0 && fclose(f) == 0);

	CHECK_INT(sensor_capture_open_file(path, &cfg, &cap, err), 0);
	CHECK(mapped("libpcap"));
	CHECK_INT(sensor_capture_open_file(path, &cfg, &cap2, err), 0);
	sensor_capture_close(cap);
	CHECK(mapped("libpcap"));
	sensor_capture_close(cap2);
	CHECK(!mapped("libpcap"));

	/* refused: given back each time */
	CHECK(sensor_capture_open_file(junk, &cfg, &cap, err) < 0);
	CHECK(!mapped("libpcap"));
	CHECK(sensor_capture_open_file("/nonexistent/x.pcap", &cfg, &cap, err) <
	      0);
	CHECK(!mapped("libpcap"));
	CHECK(sensor_capture_open_live("nosuch0", 1 << 20, &cfg, &cap, err) < 0);
	CHECK(strstr(err, "nosuch0"));
	CHECK(!mapped("libpcap"));
}

/* In a child with a mount namespace of its own, the library's file is
 * covered with an empty one: the capture's error names it. */
static void
test_missing_library(void)
{
	char empty[128], err[256] = "";
	int status, fd;
	pid_t pid;

	if (!lib_path[0]) {
		printf("skip test_missing_library: libpcap's file not seen\n");
		return;
	}
	snprintf(empty, sizeof(empty), "%s/empty.so", dir);
	fd = open(empty, O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0 && close(fd) == 0);
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct sensor_config cfg = {0};
		struct sensor_capture *cap;

		if (unshare(CLONE_NEWNS) < 0) /* not root: nothing to try */
			_exit(77);
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount(empty, lib_path, NULL, MS_BIND, NULL) < 0)
			_exit(2);
		if (sensor_capture_open_live("lo", 1 << 20, &cfg, &cap, err) !=
		    -ELIBACC)
			_exit(3);
		fprintf(stderr, "refused: %s\n", err);
		_exit(strstr(err, "libpcap: ") == err && strstr(err, "too short") ? 0 : 4);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
	if (WEXITSTATUS(status) == 77) {
		printf("skip test_missing_library: no mount namespace (not root)\n");
		return;
	}
	CHECK_INT(WEXITSTATUS(status), 0);
}

int
main(void)
{
	CHECK(mkdtemp(dir));
	if (pcap_lib_loaded()) {
		char err[256];

		check_table(pcap_lib_hold(err));
		printf("libpcap linked in (a static build)\n");
	} else {
		RUN(test_held_while_used);
		RUN(test_captures_hold_it);
		RUN(test_missing_library);
	}
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	return 0;
}
