// SPDX-License-Identifier: GPL-2.0-or-later
/* The child's sandbox (see sandbox.h). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "sandbox.h"

int
sandbox_drop_to_user(const char *user, char *err)
{
	struct passwd *pw = getpwnam(user);
	cap_t none;

	if (!pw) {
		snprintf(err, 256, "user %s does not exist", user);
		return -ENOENT;
	}
	if (pw->pw_uid == 0) {
		snprintf(err, 256, "user %s is root", user);
		return -EPERM;
	}
	if (setgroups(0, NULL) < 0 ||
	    setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) < 0 ||
	    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) < 0) {
		snprintf(err, 256, "cannot become %s: %s", user,
		         strerror(errno));
		return -errno;
	}
	/* setresuid cleared the effective and permitted sets; clear the
	 * rest too, so nothing can be regained. */
	none = cap_init();
	if (!none || cap_set_proc(none) < 0) {
		snprintf(err, 256, "cannot drop capabilities: %s",
		         strerror(errno));
		cap_free(none);
		return -EPERM;
	}
	cap_free(none);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		snprintf(err, 256, "no_new_privs: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/* System calls allowed whatever their arguments. */
static const int allowed[] = {
	SCMP_SYS(read),		 SCMP_SYS(readv),
	SCMP_SYS(write),	 SCMP_SYS(writev),
	SCMP_SYS(sendto),	 SCMP_SYS(sendmsg),
	SCMP_SYS(sendmmsg),	 SCMP_SYS(close),
	SCMP_SYS(fstat),
	SCMP_SYS(newfstatat),	 SCMP_SYS(lseek),
	SCMP_SYS(mmap),		 SCMP_SYS(munmap),
	SCMP_SYS(mremap),	 SCMP_SYS(brk),
	SCMP_SYS(madvise),	 SCMP_SYS(futex),
	SCMP_SYS(epoll_wait),	 SCMP_SYS(epoll_pwait),
	SCMP_SYS(epoll_ctl),	 SCMP_SYS(accept),
	SCMP_SYS(accept4),	 SCMP_SYS(recvfrom),
	SCMP_SYS(recvmsg),	 SCMP_SYS(recvmmsg),
	SCMP_SYS(shutdown),	 SCMP_SYS(getsockopt),
	SCMP_SYS(getsockname),	 SCMP_SYS(getpeername),
	SCMP_SYS(poll),		 SCMP_SYS(ppoll),
	SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday),
	SCMP_SYS(time),		 SCMP_SYS(nanosleep),
	SCMP_SYS(clock_nanosleep), SCMP_SYS(exit),
	SCMP_SYS(exit_group),	 SCMP_SYS(rt_sigreturn),
	SCMP_SYS(rt_sigprocmask), SCMP_SYS(getpid),
	SCMP_SYS(getppid),	 SCMP_SYS(restart_syscall),
	SCMP_SYS(getrandom),
};

/* Of those, the ones that would send on the capture socket (or change
 * it: a TX ring is set with setsockopt). */
static const int sends[] = {
	SCMP_SYS(write),   SCMP_SYS(writev),   SCMP_SYS(sendto),
	SCMP_SYS(sendmsg), SCMP_SYS(sendmmsg), SCMP_SYS(setsockopt),
};

/* fcntl commands allowed: flags, and F_DUPFD_CLOEXEC (a tarpit session's
 * socket is duplicated to go up to greygated once: ipc.h), which the
 * guard forbids on the capture socket: under another number it would
 * escape the guard. F_DUPFD and dup* stay forbidden. */
static const unsigned long fcntl_cmds[] = {F_GETFL, F_SETFL, F_GETFD,
					   F_SETFD, F_DUPFD_CLOEXEC};

/* ioctls libpcap and the tarpit ask: is the interface up, bytes waiting */
static const unsigned long ioctl_reqs[] = {SIOCGIFFLAGS, FIONREAD};

/* Argument arg equals value (all 64 bits: anything else is refused). */
static struct scmp_arg_cmp
arg_eq(unsigned arg, uint64_t value)
{
	return (struct scmp_arg_cmp){.arg = arg, .op = SCMP_CMP_EQ,
				     .datum_a = value, .datum_b = 0};
}

/* The guard: any of sends on the capture socket kills, and so does
 * duplicating it. A descriptor is an
 * unsigned int to the kernel, which drops an argument's high 32 bits: the
 * low 32 are compared. libseccomp cannot say "allowed but on this one" in
 * one filter (an unconditional rule wins, and one argument is compared
 * once a rule), so this is a filter of its own, stacked: the kernel takes
 * the strictest answer of all the filters. */
static int
load_guard(int capture_fd)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	struct scmp_arg_cmp is_capture = {.arg = 0,
					  .op = SCMP_CMP_MASKED_EQ,
					  .datum_a = 0xffffffffull,
					  .datum_b = (uint32_t)capture_fd};
	int r = ctx ? 0 : -ENOMEM;

	for (size_t i = 0; r == 0 && i < sizeof(sends) / sizeof(*sends); i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, sends[i], 1,
				     is_capture);
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(fcntl),
				     2, is_capture,
				     arg_eq(1, F_DUPFD_CLOEXEC));
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r;
}

/* calls allowed whatever their arguments, and fcntl's flag commands.
 * Return: 0 or -errno. */
static int
allow_calls(scmp_filter_ctx ctx, const int *calls, size_t n)
{
	int r = 0;

	for (size_t i = 0; r == 0 && i < n; i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, calls[i], 0);
	for (size_t i = 0;
	     r == 0 && i < sizeof(fcntl_cmds) / sizeof(*fcntl_cmds); i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fcntl), 1,
				     arg_eq(1, fcntl_cmds[i]));
	return r;
}

int
sandbox_seccomp(int capture_fd)
{
	scmp_filter_ctx ctx;
	int r = 0;

	/* First: once the main filter is in, no filter may be loaded. */
	if (capture_fd >= 0)
		r = load_guard(capture_fd);
	if (r < 0)
		return r;
	ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	r = ctx ? allow_calls(ctx, allowed, sizeof(allowed) / sizeof(*allowed))
		: -ENOMEM;
	for (size_t i = 0;
	     r == 0 && i < sizeof(ioctl_reqs) / sizeof(*ioctl_reqs); i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				     arg_eq(1, ioctl_reqs[i]));
	/* No socket option: every one the child needs (the capture's
	 * filter, the listeners' SO_REUSEADDR) is set before the filter.
	 * A session's socket is shared with greygated, so an option set on
	 * it is set under greygated too (issue 55: SO_LINGER made
	 * greygated's close of it wait 40 s). Refused, not killed: a
	 * library that tries one goes on without it. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM),
				     SCMP_SYS(setsockopt), 0);
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r;
}

/* What the metrics listener's threads use once libmicrohttpd runs: its
 * polling thread accepts, reads and answers connections and asks
 * greygated on the socket pair; the main thread waits for a signal and
 * stops it. No open, connect, socket, exec, fork or clone. */
static const int metrics_allowed[] = {
	SCMP_SYS(read),		  SCMP_SYS(write),
	SCMP_SYS(writev),	  SCMP_SYS(sendto),
	SCMP_SYS(sendmsg),	  SCMP_SYS(recvfrom),
	SCMP_SYS(recvmsg),	  SCMP_SYS(accept),
	SCMP_SYS(accept4),	  SCMP_SYS(shutdown),
	SCMP_SYS(close),	  SCMP_SYS(setsockopt),
	SCMP_SYS(getsockopt),	  SCMP_SYS(getsockname),
	SCMP_SYS(getpeername),	  SCMP_SYS(epoll_wait),
	SCMP_SYS(epoll_pwait),	  SCMP_SYS(epoll_ctl),
	SCMP_SYS(poll),		  SCMP_SYS(ppoll),
	SCMP_SYS(mmap),		  SCMP_SYS(munmap),
	SCMP_SYS(mremap),	  SCMP_SYS(mprotect),
	SCMP_SYS(brk),		  SCMP_SYS(madvise),
	SCMP_SYS(futex),	  SCMP_SYS(clock_gettime),
	SCMP_SYS(gettimeofday),	  SCMP_SYS(time),
	SCMP_SYS(nanosleep),	  SCMP_SYS(clock_nanosleep),
	SCMP_SYS(rt_sigtimedwait), SCMP_SYS(rt_sigprocmask),
	SCMP_SYS(rt_sigreturn),	  SCMP_SYS(getpid),
	SCMP_SYS(gettid),	  SCMP_SYS(exit),
	SCMP_SYS(exit_group),	  SCMP_SYS(restart_syscall),
	SCMP_SYS(getrandom),	  SCMP_SYS(fstat),
	SCMP_SYS(newfstatat),	  SCMP_SYS(sched_yield),
	SCMP_SYS(lseek),	  SCMP_SYS(sched_getaffinity),
	/* a thread's own start (glibc), in case the polling thread starts
	 * after the filter is in */
	SCMP_SYS(rseq),		  SCMP_SYS(set_robust_list),
	SCMP_SYS(sigaltstack),
};

int
sandbox_seccomp_metrics(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int r = ctx ? 0 : -ENOMEM;

	/* (every thread: the polling thread runs already) */
	if (r == 0)
		r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	if (r == 0)
		r = allow_calls(ctx, metrics_allowed,
				sizeof(metrics_allowed) /
					sizeof(*metrics_allowed));
	/* the thread naming itself ("MHD-single") */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
				     arg_eq(0, PR_SET_NAME));
	/* glibc's malloc reads the number of CPUs from /sys for a thread's
	 * arena: told it may not open, it counts otherwise */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES),
				     SCMP_SYS(openat), 0);
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES),
				     SCMP_SYS(open), 0);
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r;
}
