// SPDX-License-Identifier: GPL-2.0-or-later
/* Netlink batches: libnftnl's paged batch (nftnl_batch) of nf_tables
 * messages between a batch begin and end, every message with NLM_F_ACK,
 * sent at once in one sendmsg of its pages; then exactly one answer per
 * message is collected and refusals are mapped back, by their sequence
 * numbers, to the message that caused them (what libnftnl leaves to its
 * user). */
#include <sys/uio.h> /* (before libnftnl/batch.h: its struct iovec) */

#include <errno.h>
#include <libnftnl/batch.h>
#include <libnftnl/common.h>
#include <linux/netfilter/nfnetlink.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "internal.h"

/* A page of the batch (nft's own size: 32 pages of 4 KiB), and the room
 * past its end a message begun in it may take: the longest message
 * greygate builds, a set's elements, is cut well below it. */
#define BATCH_PAGE (32 * 4096)
#define MSG_ROOM 32768
#define ANSWER_WAIT_MS 5000 /* the kernel answers in microseconds */

struct nft_batch {
	struct nftnl_batch *pages;
	char *cur;      /* the message being built */
	uint32_t seq0;  /* the batch begin's seq; message i has seq0+1+i */
	size_t count;
	size_t bytes;   /* the messages' length so far, begin included */
};

/* The message just built in the current page becomes part of the batch
 * (libnftnl moves it to a new page if it ran past this one's end). */
static int
take(struct nft_batch *b)
{
	const struct nlmsghdr *nlh = nftnl_batch_buffer(b->pages);

	b->bytes += NLMSG_ALIGN(nlh->nlmsg_len);
	return nftnl_batch_update(b->pages) < 0 ? -ENOMEM : 0;
}

struct nft_batch *
nft_batch_new(void)
{
	static uint32_t next_seq;
	struct nft_batch *b = calloc(1, sizeof(*b));

	if (!b || !(b->pages = nftnl_batch_alloc(BATCH_PAGE, MSG_ROOM))) {
		free(b);
		return NULL;
	}
	if (!next_seq)
		next_seq = (uint32_t)time(NULL) << 8;
	b->seq0 = next_seq;
	next_seq += 1u << 20; /* room for a million messages per batch */
	nftnl_batch_begin(nftnl_batch_buffer(b->pages), b->seq0);
	if (take(b) < 0) {
		nft_batch_free(b);
		return NULL;
	}
	return b;
}

void
nft_batch_free(struct nft_batch *b)
{
	if (!b)
		return;
	nftnl_batch_free(b->pages);
	free(b);
}

char *
nft_batch_msg(struct nft_batch *b, uint32_t *seq, size_t *index)
{
	/* (a page always keeps MSG_ROOM past where the next one begins) */
	b->cur = nftnl_batch_buffer(b->pages);
	memset(b->cur, 0, MSG_ROOM);
	*seq = b->seq0 + 1 + (uint32_t)b->count;
	if (index)
		*index = b->count;
	return b->cur;
}

int
nft_batch_done(struct nft_batch *b)
{
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)b->cur;

	if (nlh->nlmsg_len > MSG_ROOM)
		return -EMSGSIZE;
	if (take(b) < 0)
		return -ENOMEM;
	b->count++;
	return 0;
}

size_t
nft_batch_count(const struct nft_batch *b)
{
	return b->count;
}

/* Reads answers until every message has one. */
static int
collect_answers(struct mnl_socket *nl, const struct nft_batch *b,
		nft_batch_err_fn *on_err, void *ctx)
{
	static char buf[1 << 16];
	struct pollfd pfd = {.fd = mnl_socket_get_fd(nl), .events = POLLIN};
	uint32_t portid = mnl_socket_get_portid(nl);
	size_t answered = 0;
	int refused = 0;

	while (answered < b->count) {
		ssize_t n;
		const struct nlmsghdr *nlh;
		int len;

		if (poll(&pfd, 1, ANSWER_WAIT_MS) <= 0)
			return -ETIMEDOUT;
		n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (n < 0)
			return errno == EINTR ? -EINTR : -errno;
		len = (int)n;
		for (nlh = (const struct nlmsghdr *)buf; mnl_nlmsg_ok(nlh, len);
		     nlh = mnl_nlmsg_next(nlh, &len)) {
			const struct nlmsgerr *e;
			uint32_t i = nlh->nlmsg_seq - b->seq0 - 1;

			if (nlh->nlmsg_type != NLMSG_ERROR ||
			    (nlh->nlmsg_pid && nlh->nlmsg_pid != portid) ||
			    i >= b->count)
				continue;
			e = mnl_nlmsg_get_payload(nlh);
			answered++;
			if (e->error) {
				refused++;
				if (on_err)
					on_err(i, e->error, ctx);
			}
		}
	}
	return refused;
}

/* Bytes one message may have on nl (the kernel keeps a margin). */
static size_t
sndbuf_room(struct mnl_socket *nl)
{
	int size = 0;
	socklen_t sl = sizeof(size);

	if (getsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_SNDBUF, &size,
		       &sl) < 0 || size < 64)
		return 0;
	return (size_t)size - 64;
}

/* The batch's pages in one sendmsg: the kernel reads it as one message
 * (nfnetlink's batch), whatever pages it came in. */
static int
send_pages(struct mnl_socket *nl, struct nft_batch *b)
{
	struct sockaddr_nl to = {.nl_family = AF_NETLINK};
	int n = nftnl_batch_iovec_len(b->pages);
	struct iovec *iov = calloc((size_t)n, sizeof(*iov));
	struct msghdr msg = {.msg_name = &to, .msg_namelen = sizeof(to),
	                     .msg_iov = iov, .msg_iovlen = (size_t)n};
	ssize_t sent;

	if (!iov)
		return -ENOMEM;
	nftnl_batch_iovec(b->pages, iov, (uint32_t)n);
	sent = sendmsg(mnl_socket_get_fd(nl), &msg, 0);
	free(iov);
	if (sent < 0)
		return -errno;
	return (size_t)sent == b->bytes ? 0 : -EMSGSIZE;
}

int
nft_batch_send(struct mnl_socket *nl, struct nft_batch *b,
	       nft_batch_err_fn *on_err, void *ctx)
{
	uint32_t end_seq = b->seq0 + 1 + (uint32_t)b->count;
	int r;

	if (b->count == 0)
		return 0;
	nftnl_batch_end(nftnl_batch_buffer(b->pages), end_seq);
	if (take(b) < 0)
		return -ENOMEM;
	/* The kernel takes a batch in one message no longer than the
	 * socket's send buffer: make room for this one (CAP_NET_ADMIN may
	 * go past the system's limit). */
	if (b->bytes > sndbuf_room(nl) &&
	    setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_SNDBUFFORCE,
		       &(int){(int)b->bytes + MSG_ROOM}, sizeof(int)) < 0)
		return -errno;
	r = send_pages(nl, b);
	return r < 0 ? r : collect_answers(nl, b, on_err, ctx);
}
