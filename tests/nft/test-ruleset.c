// SPDX-License-Identifier: GPL-2.0-or-later
/* Tests of the ruleset builder when memory runs out: libnftnl's
 * nftnl_expr_alloc is wrapped (-Wl,--wrap) to fail at its k-th call, for
 * every k; building must then fail, never send a rule with an expression
 * missing (the exempt-mark rule without its comparison accepts every
 * packet). No kernel is needed: the batch is only built. */
#include <errno.h>
#include <stdio.h>
#include <libnftnl/expr.h>

#include "check.h"
#include "internal.h"

struct nftnl_expr *__real_nftnl_expr_alloc(const char *name);
struct nftnl_expr *__wrap_nftnl_expr_alloc(const char *name);

static int calls, fail_at;

struct nftnl_expr *
__wrap_nftnl_expr_alloc(const char *name)
{
	if (++calls == fail_at)
		return NULL;
	return __real_nftnl_expr_alloc(name);
}

static int
build(int fail)
{
	struct nftset_config cfg = {.table = "greygate",
	                            .smtp_port = 25,
	                            .tarpit_port = 2525,
	                            .trap_port = 2526,
	                            .exempt_mark = 0x10,
	                            .iifname = "eth0",
	                            .pass_prefix4 = 24,
	                            .pass_prefix6 = 64};
	struct nft_batch *b = nft_batch_new();
	int r;

	CHECK(b);
	calls = 0;
	fail_at = fail;
	r = nft_ruleset_build(b, &cfg, false);
	nft_batch_free(b);
	return r;
}

static void
test_every_failed_expression_fails_the_build(void)
{
	int total;

	CHECK_INT(build(0), 0);
	total = calls;
	CHECK(total > 50);
	for (int k = 1; k <= total; k++)
		if (build(k) != -ENOMEM) {
			fprintf(stderr,
			        "expression %d of %d failed, the build "
			        "did not\n",
			        k, total);
			exit(1);
		}
	/* And after a failure, the next build is whole again. */
	CHECK_INT(build(0), 0);
}

int
main(void)
{
	RUN(test_every_failed_expression_fails_the_build);
	return 0;
}
