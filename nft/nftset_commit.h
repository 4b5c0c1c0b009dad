/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The kernel's sets own their commit (issue 58: the decider held the nft
 * handle only to send the batch its listener filled): whoever changes a
 * set queues the change, and the sets send what a turn queued before the
 * loop waits (loop_before_wait), or at once when a caller must know it
 * is there (a forget answered, the allow lists at start). A change that
 * does not reach the kernel is counted (nftset_note_failed) and said,
 * the first and every hundredth, with what the client sees. */
#ifndef GREYGATE_NFTSET_COMMIT_H
#define GREYGATE_NFTSET_COMMIT_H

#include <stdint.h>

#include "loop.h"
#include "nftset.h"

/* nftset_failed - a change that will not reach nft's sets: counted, and
 * said: what ("pass", "trap", "forget", "allow"), key (the client's key
 * or network), err (-errno). */
void nftset_failed(struct nftset *nft, const char *what, const char *key,
                 int err);

/* nftset_say_failed - the line of a failed change, the so_far-th (said
 * for the first and every hundredth). */
void nftset_say_failed(uint64_t so_far, const char *what, const char *key,
                     int err);

/* nftset_commit_now - nft's queued changes sent now (NULL: no sets); the
 * refused ones said. */
void nftset_commit_now(struct nftset *nft);

/* nftset_commit_before_wait - nft's commit before each wait of loop;
 * _stop: no more (before nft is closed). Return: 0 or -ENOSPC. */
int nftset_commit_before_wait(struct loop *loop, struct nftset *nft);
void nftset_commit_before_wait_stop(struct loop *loop, struct nftset *nft);

#endif
