// SPDX-License-Identifier: GPL-2.0-or-later
/* Netlink batches: a growable buffer of nf_tables messages between a batch
 * begin and end, every message with NLM_F_ACK, sent at once; then exactly
 * one answer per message is collected and refusals are mapped back to the
 * message that caused them. */
#include <errno.h>
#include <libnftnl/common.h>
#include <linux/netfilter/nfnetlink.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <string.h>
#include <time.h>

#include "internal.h"

#define MSG_ROOM 32768       /* free space kept for the next message */
#define ANSWER_WAIT_MS 5000  /* the kernel answers in microseconds */

struct nft_batch {
	char *buf;
	size_t len, cap;
	size_t cur;     /* offset of the message being built */
	uint32_t seq0;  /* the batch begin's seq; message i has seq0+1+i */
	size_t count;
};

static int
reserve(struct nft_batch *b, size_t room)
{
	size_t cap = b->cap ? b->cap : 65536;
	char *grown;

	if (b->cap - b->len >= room)
		return 0;
	while (cap - b->len < room)
		cap *= 2;
	grown = realloc(b->buf, cap);
	if (!grown)
		return -ENOMEM;
	b->buf = grown;
	b->cap = cap;
	return 0;
}

struct nft_batch *
nft_batch_new(void)
{
	static uint32_t next_seq;
	struct nft_batch *b = calloc(1, sizeof(*b));

	if (!b || reserve(b, MSG_ROOM) < 0) {
		free(b);
		return NULL;
	}
	if (!next_seq)
		next_seq = (uint32_t)time(NULL) << 8;
	b->seq0 = next_seq;
	next_seq += 1u << 20; /* room for a million messages per batch */
	nftnl_batch_begin(b->buf, b->seq0);
	b->len = NLMSG_ALIGN(((struct nlmsghdr *)b->buf)->nlmsg_len);
	return b;
}

void
nft_batch_free(struct nft_batch *b)
{
	if (!b)
		return;
	free(b->buf);
	free(b);
}

char *
nft_batch_msg(struct nft_batch *b, uint32_t *seq, size_t *index)
{
	if (reserve(b, MSG_ROOM) < 0)
		return NULL;
	memset(b->buf + b->len, 0, MSG_ROOM);
	b->cur = b->len;
	*seq = b->seq0 + 1 + (uint32_t)b->count;
	if (index)
		*index = b->count;
	return b->buf + b->len;
}

int
nft_batch_done(struct nft_batch *b)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)(b->buf + b->cur);

	if (nlh->nlmsg_len > MSG_ROOM)
		return -EMSGSIZE;
	b->len += NLMSG_ALIGN(nlh->nlmsg_len);
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

int
nft_batch_send(struct mnl_socket *nl, struct nft_batch *b,
	       nft_batch_err_fn *on_err, void *ctx)
{
	uint32_t end_seq = b->seq0 + 1 + (uint32_t)b->count;
	size_t len;

	if (b->count == 0)
		return 0;
	if (reserve(b, MSG_ROOM) < 0)
		return -ENOMEM;
	nftnl_batch_end(b->buf + b->len, end_seq);
	len = b->len + NLMSG_ALIGN(((struct nlmsghdr *)(b->buf + b->len))->nlmsg_len);
	/* The kernel takes a batch in one message no longer than the
	 * socket's send buffer: make room for this one (CAP_NET_ADMIN may
	 * go past the system's limit). */
	if (len > sndbuf_room(nl) &&
	    setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_SNDBUFFORCE,
		       &(int){(int)len + MSG_ROOM}, sizeof(int)) < 0)
		return -errno;
	if (mnl_socket_sendto(nl, b->buf, len) < 0)
		return -errno;
	return collect_answers(nl, b, on_err, ctx);
}
