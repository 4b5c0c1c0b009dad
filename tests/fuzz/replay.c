// SPDX-License-Identifier: GPL-2.0-or-later
/* The fuzz targets' inputs replayed without libFuzzer: each file named,
 * or each file in each folder named, given once to the target's
 * LLVMFuzzerTestOneInput. What the fuzzers found and kept (the seeds and
 * tests/fuzz/corpus) then runs in every build: with gcc, under musl, on
 * arm64 under qemu-user, where libFuzzer is not. A crash fails the test
 * as any crash does; the input being replayed is said first on stderr
 * only when REPLAY_VERBOSE is set (quiet: the corpora hold thousands).
 *   replay-TARGET PATH...   (exit 0: every input replayed) */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* libFuzzer's -max_len in run-fuzz.sh: the fuzzers never made longer. */
#define REPLAY_MAX 4096

static unsigned long replayed;
static int verbose;

static int
replay_file(const char *path)
{
	static uint8_t buf[REPLAY_MAX];
	FILE *f = fopen(path, "rb");
	size_t n;
	uint8_t *copy;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (verbose)
		fprintf(stderr, "replay: %s (%zu bytes)\n", path, n);
	/* A copy of its own length: reading past the input shows under
	 * ASan as it does under libFuzzer. */
	copy = malloc(n ? n : 1);
	if (!copy)
		return -1;
	memcpy(copy, buf, n);
	LLVMFuzzerTestOneInput(copy, n);
	free(copy);
	replayed++;
	return 0;
}

static int
replay_path(const char *path)
{
	struct dirent **names;
	struct stat st;
	char file[4096];
	int n, r = 0;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path);
	/* (sorted: a run replays in the same order every time) */
	n = scandir(path, &names, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.' && !r) {
			snprintf(file, sizeof(file), "%s/%s", path,
			         names[i]->d_name);
			r = replay_file(file);
		}
		free(names[i]);
	}
	free(names);
	return r;
}

int
main(int argc, char **argv)
{
	verbose = getenv("REPLAY_VERBOSE") != NULL;
	if (argc < 2) {
		fprintf(stderr, "usage: %s PATH...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++)
		if (replay_path(argv[i]) < 0)
			return 1;
	printf("replayed %lu inputs\n", replayed);
	/* none at all: a path that named nothing, not a pass */
	return replayed ? 0 : 1;
}
