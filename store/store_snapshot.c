// SPDX-License-Identifier: GPL-2.0-or-later
/* The store's folders: store_dir's check, and its snapshot on flash
 * (store_snapshot.h). A snapshot is the store compacted by LMDB (free
 * pages left out) written to .data.mdb.new in store_snapshot_dir by the
 * store's thread, put on disk, then renamed over data.mdb: the one before
 * stays whole until the new one is. store_dir's other files (the
 * run-time allow list, the privacy key, a shared store's instance id)
 * are copied beside it when they changed, so that a restore gives back
 * everything a reboot took. Nothing is written when nothing changed:
 * the point is to spare the flash. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "fmt.h"
#include "log.h"
#include "store_snapshot.h"

#define STORE_FILE "data.mdb"
#define STORE_COPY_TEMP ".data.mdb.new"
/* While a copy is being written, whether it is over is asked this often
 * (it takes well under a second for a month's store). */
#define SNAPSHOT_POLL_MS 1000
/* (on the stack: a router's RSS is not spent on buffers used once an
 * hour) */
#define COPY_BUF 8192

struct store_snapshot {
	struct loop *loop;
	char store_dir[256];
	struct store_snapshot_config cfg; /* its own (a reload: reconfigure) */
	struct store *store;
	struct loop_timer timer;
	int fd;                  /* the copy underway, or -1 */
	uint64_t started_ms;     /* ... since */
	uint64_t generation;     /* the store's, at the last snapshot */
	uint64_t generation_now; /* ... at the one underway */
	bool taken_once;         /* generation means something */
	struct store_snapshot_counters counters;
};

/* The store's folders are greygated's alone: a folder another user owns,
 * or may write to, could be given links and files of theirs (as OpenSMTPD
 * refuses a spool that is not its own). */
int
store_folder_check(const char *dir, char *err)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		snprintf(err, 512, "store %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (lstat(dir, &st) < 0) {
		snprintf(err, 512, "store %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, 512, "store %s: not a folder (a link?): refused",
		         dir);
		return -ENOTDIR;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(err, 512,
		         "store %.200s: owned by uid %u, mode %03o: "
		         "refused (it must be greygated's own, uid "
		         "%u, and writable by nobody else: chmod 700)",
		         dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777),
		         (unsigned)geteuid());
		return -EPERM;
	}
	return 0;
}

/* The files a snapshot carries: store_dir's own, not LMDB's lock file,
 * not a store set aside (data.mdb.bad-TIME), not a file being written
 * (dot names, *.new). data.mdb itself goes through LMDB's copy. */
static bool
carried(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && strcmp(name, STORE_FILE) &&
	       strcmp(name, "lock.mdb") && strncmp(name, "data.mdb.", 9) &&
	       !(n > 4 && !strcmp(name + n - 4, ".new"));
}

/* Reads up to len bytes (fewer only at the end). Return: bytes, or
 * -errno. */
static ssize_t
read_full(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = read(fd, buf + got, len - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

static int
write_full(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* name holds the same bytes in both folders (false if either cannot be
 * read: it is copied then). */
static bool
same_file(int from_dir, int to_dir, const char *name)
{
	char a[COPY_BUF], b[COPY_BUF];
	int fa = openat(from_dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int fb = openat(to_dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	bool same = fa >= 0 && fb >= 0;

	while (same) {
		ssize_t ra = read_full(fa, a, sizeof(a));
		ssize_t rb = read_full(fb, b, sizeof(b));

		same = ra >= 0 && ra == rb && !memcmp(a, b, (size_t)ra);
		if (ra <= 0)
			break;
	}
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return same;
}

/* name copied from one folder to the other: written to .NAME.new, put
 * on disk, renamed over NAME (a file of our own: a stale .new or a
 * planted link is removed, never followed). Return: 0 or -errno. */
static int
copy_file(int from_dir, int to_dir, const char *name)
{
	char buf[COPY_BUF];
	char temp[300];
	int in, out, r = 0;
	ssize_t got;

	if (snprintf(temp, sizeof(temp), ".%s.new", name) >= (int)sizeof(temp))
		return -ENAMETOOLONG;
	in = openat(from_dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return -errno;
	if (unlinkat(to_dir, temp, 0) < 0 && errno != ENOENT) {
		r = -errno;
		close(in);
		return r;
	}
	out = openat(to_dir, temp,
	             O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0) {
		r = -errno;
		close(in);
		return r;
	}
	while (!r && (got = read_full(in, buf, sizeof(buf))) != 0)
		r = got < 0 ? (int)got : write_full(out, buf, (size_t)got);
	if (!r && fsync(out) < 0)
		r = -errno;
	if (close(out) < 0 && !r)
		r = -errno;
	close(in);
	if (!r && renameat(to_dir, temp, to_dir, name) < 0)
		r = -errno;
	if (r)
		unlinkat(to_dir, temp, 0);
	return r;
}

/* A regular file (asked of the folder when readdir cannot say). */
static bool
is_file(int dir, const struct dirent *e)
{
	struct stat st;

	if (e->d_type != DT_UNKNOWN)
		return e->d_type == DT_REG;
	return fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISREG(st.st_mode);
}

/* Every carried file of from_dir that to_dir lacks or holds otherwise
 * is copied; with prune, carried files to_dir has and from_dir no longer
 * has go (a run-time allow list emptied and removed). Return: files
 * written, or -errno (what failed named in err, 512 bytes). */
static int
copy_files(int from_dir, int to_dir, bool prune, const char *to, char *err)
{
	DIR *d = fdopendir(dup(from_dir));
	struct dirent *e;
	int n = 0, r = 0;

	if (!d) {
		snprintf(err, 512, "%s", strerror(errno));
		return -errno;
	}
	while (!r && (e = readdir(d))) {
		if (!is_file(from_dir, e) || !carried(e->d_name) ||
		    same_file(from_dir, to_dir, e->d_name))
			continue;
		r = copy_file(from_dir, to_dir, e->d_name);
		if (r)
			snprintf(err, 512, "%s/%s: %s", to, e->d_name,
			         strerror(-r));
		else
			n++;
	}
	closedir(d);
	if (r || !prune)
		return r ? r : n;
	d = fdopendir(dup(to_dir));
	if (!d)
		return n;
	while ((e = readdir(d))) {
		if (is_file(to_dir, e) && carried(e->d_name) &&
		    faccessat(from_dir, e->d_name, F_OK, AT_SYMLINK_NOFOLLOW) &&
		    errno == ENOENT && unlinkat(to_dir, e->d_name, 0) == 0)
			n++;
	}
	closedir(d);
	return n;
}

static bool
on_tmpfs(const char *dir)
{
	struct statfs fs;

	return statfs(dir, &fs) == 0 &&
	       (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC);
}

static int
open_folder(const char *dir, char *err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		snprintf(err, 512, "store %s: %s", dir, strerror(errno));
	return fd < 0 ? -errno : fd;
}

int
store_snapshot_restore(const char *store_dir,
                       const struct store_snapshot_config *cfg, char *err)
{
	const char *snap = cfg->dir;
	struct stat st;
	char when[32];
	int from, to, r;

	if (!snap[0]) {
		if (on_tmpfs(store_dir))
			log_warnx("store_dir %s is on tmpfs and no "
			          "store_snapshot_dir is set: the greylist and "
			          "its passes are lost at every reboot",
			          store_dir);
		return 0;
	}
	if (!on_tmpfs(store_dir))
		log_info("store_dir %s is not on tmpfs: its snapshots in %s "
		         "add writes rather than spare them",
		         store_dir, snap);
	r = store_folder_check(snap, err);
	if (r < 0)
		return r;
	if (on_tmpfs(snap))
		log_warnx("store_snapshot_dir %s is on tmpfs too: the snapshot "
		          "is lost with the store at every reboot (it belongs "
		          "on flash or disk)",
		          snap);
	if ((to = open_folder(store_dir, err)) < 0)
		return to;
	if (fstatat(to, STORE_FILE, &st, AT_SYMLINK_NOFOLLOW) == 0 ||
	    errno != ENOENT) {
		close(to);
		return 0; /* its own (newer), or for the store to judge */
	}
	if ((from = open_folder(snap, err)) < 0) {
		close(to);
		return from;
	}
	if (fstatat(from, STORE_FILE, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		log_info("store: %s holds no snapshot yet: the greylist starts "
		         "empty, its first snapshot in %" PRIu32 " s",
		         snap, cfg->interval_ms / 1000);
		r = 0;
		goto out;
	}
	r = copy_file(from, to, STORE_FILE);
	if (r < 0) {
		snprintf(err, 512, "store %.200s: restoring the snapshot "
		         "%.200s/" STORE_FILE ": %s",
		         store_dir, snap, strerror(-r));
		goto out;
	}
	r = copy_files(from, to, false, store_dir, err);
	if (r < 0)
		goto out;
	log_info("store: restored from the snapshot in %s, taken %s (%lld "
	         "KiB, and %d other file(s)): %s held no store (emptied by "
	         "a reboot?)",
	         snap, fmt_utc((int64_t)st.st_mtime, when),
	         (long long)st.st_size / 1024, r, store_dir);
	r = 1;
out:
	close(from);
	close(to);
	return r;
}

static void
arm(struct store_snapshot *s, uint64_t in_ms)
{
	loop_timer_arm(s->loop, &s->timer, loop_now_ms(s->loop) + in_ms);
}

/* The copy is over (result r): renamed into place with the other files,
 * or thrown away, said either way. Return: 0 or -errno. */
static int
finish(struct store_snapshot *s, int r)
{
	const char *dir = s->cfg.dir;
	char err[512] = "", when[32];
	struct stat st;
	int snap_fd, own_fd = -1;

	if (close(s->fd) < 0 && !r)
		r = -errno;
	s->fd = -1;
	snap_fd = open_folder(dir, err);
	if (snap_fd < 0)
		r = r ? r : snap_fd;
	if (!r && renameat(snap_fd, STORE_COPY_TEMP, snap_fd, STORE_FILE) < 0)
		r = -errno;
	if (r && !err[0])
		snprintf(err, 512, "%s/%s: %s", dir, STORE_FILE, strerror(-r));
	if (!r && (own_fd = open_folder(s->store_dir, err)) < 0)
		r = own_fd;
	if (!r) {
		int n = copy_files(own_fd, snap_fd, true, dir, err);

		r = n < 0 ? n : 0;
	}
	/* The renames themselves are on disk once the folder is. */
	if (!r && fsync(snap_fd) < 0) {
		r = -errno;
		snprintf(err, 512, "%s: %s", dir, strerror(-r));
	}
	if (r) {
		if (snap_fd >= 0)
			unlinkat(snap_fd, STORE_COPY_TEMP, 0);
		s->counters.failed++;
		log_warnx("store: the snapshot to %s failed (%s): %s", dir, err,
		          s->counters.last_taken
		                  ? "the one taken before stays"
		                  : "there is none yet: a reboot now loses the "
		                    "greylist");
	} else {
		s->generation = s->generation_now;
		s->taken_once = true;
		s->counters.taken++;
		s->counters.last_taken = loop_wall_sec(s->loop);
		if (fstatat(snap_fd, STORE_FILE, &st, 0) == 0)
			s->counters.bytes = (uint64_t)st.st_size;
		log_info("store: snapshot written to %s at %s (%" PRIu64
		         " KiB, in %" PRIu64 " ms)",
		         dir, fmt_utc(s->counters.last_taken, when),
		         s->counters.bytes / 1024,
		         loop_now_ms(s->loop) - s->started_ms);
	}
	if (snap_fd >= 0)
		close(snap_fd);
	if (own_fd >= 0)
		close(own_fd);
	return r;
}

/* A snapshot begun: the store's copy started in its thread (or, when
 * nothing was written since the last one, only the other files looked
 * at). Return: 1 (a copy is underway), 0 (nothing to copy), or -errno
 * (said). */
static int
begin(struct store_snapshot *s)
{
	const char *dir = s->cfg.dir;
	char path[300];
	int r;

	s->generation_now = store_generation(s->store);
	if (s->taken_once && s->generation_now == s->generation) {
		char err[512];
		int own = open_folder(s->store_dir, err);
		int snap = own < 0 ? own : open_folder(dir, err);

		r = snap < 0 ? snap : copy_files(own, snap, true, dir, err);
		if (r > 0 && fsync(snap) < 0)
			r = -errno;
		if (r < 0)
			log_warnx("store: the snapshot's files to %s: %s", dir,
			          err);
		if (own >= 0)
			close(own);
		if (snap >= 0)
			close(snap);
		s->counters.skipped++;
		return r < 0 ? r : 0;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, STORE_COPY_TEMP);
	s->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	             0600);
	s->started_ms = loop_now_ms(s->loop);
	if (s->fd < 0) {
		r = -errno;
		s->counters.failed++;
		log_warnx("store: the snapshot to %s failed (%s: %s): %s", dir,
		          path, strerror(-r),
		          s->counters.last_taken ? "the one taken before stays"
		                                 : "there is none yet");
		return r;
	}
	r = store_copy_start(s->store, s->fd);
	if (r < 0)
		return finish(s, r);
	return 1;
}

static void
on_timer(struct loop *loop, struct loop_timer *timer, void *ctx)
{
	struct store_snapshot *s = ctx;

	(void)loop;
	(void)timer;
	if (s->fd >= 0 && !store_copy_over(s->store)) {
		arm(s, SNAPSHOT_POLL_MS);
		return;
	}
	if (s->fd >= 0)
		finish(s, store_copy_wait(s->store));
	else if (begin(s) == 1) {
		arm(s, SNAPSHOT_POLL_MS);
		return;
	}
	arm(s, s->cfg.interval_ms);
}

struct store_snapshot *
store_snapshot_start(struct loop *loop, const char *store_dir,
                     const struct store_snapshot_config *cfg,
                     struct store *store, bool restored)
{
	struct store_snapshot *s;

	errno = 0;
	if (!cfg->dir[0])
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->loop = loop;
	snprintf(s->store_dir, sizeof(s->store_dir), "%s", store_dir);
	s->cfg = *cfg;
	s->store = store;
	s->fd = -1;
	s->taken_once = restored;
	s->generation = store_generation(store);
	loop_timer_init(&s->timer, on_timer, s);
	arm(s, cfg->interval_ms);
	return s;
}

void
store_snapshot_reconfigure(struct store_snapshot *snap,
                           const struct store_snapshot_config *cfg)
{
	/* (the folder needs a restart: only the interval changes) */
	if (!snap || snap->cfg.interval_ms == cfg->interval_ms)
		return;
	snap->cfg.interval_ms = cfg->interval_ms;
	if (snap->fd < 0) /* (else the copy underway re-arms it) */
		arm(snap, cfg->interval_ms);
}

int
store_snapshot_close(struct store_snapshot *s)
{
	int r = 0;

	if (!s)
		return 0;
	loop_timer_cancel(s->loop, &s->timer);
	if (s->fd >= 0)
		finish(s, store_copy_wait(s->store));
	r = begin(s);
	if (r == 1)
		r = finish(s, store_copy_wait(s->store));
	free(s);
	return r;
}

const struct store_snapshot_counters *
store_snapshot_get_counters(const struct store_snapshot *s)
{
	return s ? &s->counters : NULL;
}
