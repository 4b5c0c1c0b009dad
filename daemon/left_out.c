// SPDX-License-Identifier: GPL-2.0-or-later
/* The entry points of the services a build left out (build_features.h):
 * nothing reaches these but a caller that skipped the config's check,
 * and they answer with what the build lacks rather than fail to link. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "build_features.h"
#include "config.h"

#if !GG_WITH_REDIS
#include "copy_store.h"
#include "shared.h"

int
shared_open(struct loop *loop, const struct shared_settings *cfg,
            const struct shared_allow_source *allow, struct grey_store **out,
            char *err)
{
	*out = NULL;
	snprintf(err, 512, "store = %s: %s", cfg->store, BUILD_LACKS("redis"));
	return -ENOTSUP;
}

int
copy_store_main(const struct config *cfg, const char *direction)
{
	fprintf(stderr, "greygated: --store-copy: %s\n", BUILD_LACKS("redis"));
	return 1;
}
#endif

#if !GG_WITH_METRICS_HTTP
#include "metrics_http.h"

int
metrics_http_main(const char *user)
{
	fprintf(stderr, "greygated: --metrics-http: %s\n",
	        BUILD_LACKS("metrics_http"));
	return 1;
}

int
metrics_listen_open(struct loop *loop,
                    const struct metrics_listen_settings *cfg,
                    void (*figures)(void *root, struct metrics_snapshot *s),
                    void *root, struct metrics_listener **out, char *err)
{
	*out = NULL;
	if (!cfg->listen[0])
		return 0;
	snprintf(err, 512, "metrics_listen: %s", BUILD_LACKS("metrics_http"));
	return -ENOTSUP;
}

void
metrics_listen_close(struct metrics_listener *m)
{
}
#endif

#if !GG_WITH_POLICY_DOOR
#include "policy_door.h"
#include "policy_lists.h"

int
policy_door_open(struct loop *loop, const struct policy_door_settings *cfg,
                 const struct decision_port *decide, struct policy_door **out,
                 char *err)
{
	*out = NULL;
	if (!cfg->policy.listen[0])
		return 0;
	snprintf(err, 512, "[policy] listen: %s", BUILD_LACKS("policy_door"));
	return -ENOTSUP;
}

void
policy_door_use_signals(struct policy_door *door, struct signals *signals)
{
}

int
policy_door_reload(struct policy_door *door,
                   const struct policy_door_settings *s)
{
	return 0;
}

void
policy_door_close(struct policy_door *door)
{
}

void
policy_door_get_stats(const struct policy_door *door,
                      struct policy_door_stats *out)
{
	memset(out, 0, sizeof(*out));
}

int
policy_lists_load(const char *clients_path, const char *recipients_path,
                  policy_lists_warn_fn *warn, void *ctx,
                  struct policy_lists **out, char *err)
{
	*out = NULL;
	snprintf(err, 512, "[policy] whitelist files: %s",
	         BUILD_LACKS("policy_door"));
	return -ENOTSUP;
}

void
policy_lists_free(struct policy_lists *lists)
{
}
#endif
