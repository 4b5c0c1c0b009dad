// SPDX-License-Identifier: GPL-2.0-or-later
/* Each service's part of the settings (issue 58), made by the root from
 * struct config at start and at each reload: a service is given its part,
 * copied, never struct config itself, so that a reload reaches it only
 * through its reconfigure call. A part that needs a setting of another
 * section gets it here. */
#include <stdio.h>

#include "config_parts.h"
#include "allow_lists.h"
#include "commands.h"
#include "decide.h"
#include "housekeeping.h"
#include "metrics_http.h"
#include "shared.h"
#include "supervise.h"

void
config_door_part(const struct config *cfg, struct policy_door_settings *out)
{
	out->policy = cfg->policy;
	out->delay_sec = cfg->grey.delay_sec;
	snprintf(out->hostname, sizeof(out->hostname), "%s", cfg->hostname);
}

void
config_handoff_part(const struct config *cfg, struct handoff_settings *out)
{
	out->handoff = cfg->handoff;
	out->smtp_port = cfg->nft.smtp_port;
	out->tarpit_port = cfg->nft.tarpit_port;
	out->trap_port = cfg->nft.trap_port;
	out->offer_starttls = cfg->tarpit.offer_starttls;
	snprintf(out->hostname, sizeof(out->hostname), "%s", cfg->hostname);
	snprintf(out->capabilities, sizeof(out->capabilities), "%s",
	         cfg->capabilities);
}

void
config_decider_part(const struct config *cfg, struct decider_settings *out)
{
	out->grey = cfg->grey;
	out->mta_asks = cfg->policy.mta_asks;
	out->commit_ms = cfg->store_commit_ms;
}

void
config_allow_part(const struct config *cfg, struct allow_settings *out)
{
	snprintf(out->allow_dir, sizeof(out->allow_dir), "%s", cfg->allow_dir);
	snprintf(out->store_dir, sizeof(out->store_dir), "%s", cfg->store_dir);
}

void
config_housekeeping_part(const struct config *cfg,
                         struct housekeeping_settings *out)
{
	out->triplet_ttl_sec = cfg->grey.retry_window_sec;
	snprintf(out->store_dir, sizeof(out->store_dir), "%s", cfg->store_dir);
	out->snapshot = cfg->store_snapshot;
}

void
config_command_part(const struct config *cfg, struct command_settings *out)
{
	out->grey = cfg->grey;
	snprintf(out->hostname, sizeof(out->hostname), "%s", cfg->hostname);
	snprintf(out->store, sizeof(out->store), "%s", cfg->store);
	snprintf(out->config_path, sizeof(out->config_path), "%s",
	         cfg->source.path ? cfg->source.path : "");
	snprintf(out->control_socket, sizeof(out->control_socket), "%s",
	         cfg->control_socket);
}

void
config_shared_part(const struct config *cfg, struct shared_settings *out)
{
	snprintf(out->store, sizeof(out->store), "%s", cfg->store);
	out->store_url = cfg->store_url;
	snprintf(out->password_file, sizeof(out->password_file), "%s",
	         cfg->store_password_file);
	snprintf(out->store_dir, sizeof(out->store_dir), "%s", cfg->store_dir);
	snprintf(out->hostname, sizeof(out->hostname), "%s", cfg->hostname);
	out->grey = cfg->grey;
}

void
config_supervisor_part(const struct config *cfg,
                       struct supervisor_settings *out)
{
	snprintf(out->capture_device, sizeof(out->capture_device), "%s",
	         cfg->capture_device);
	out->capture_buffer = cfg->capture_buffer;
	out->nflog_group = cfg->nflog_group;
	out->sensor = cfg->sensor;
	out->tarpit = cfg->tarpit;
	out->tarpit.hostname = NULL; /* (the child's own copies) */
	out->tarpit.capabilities = NULL;
	out->tarpit_port = cfg->nft.tarpit_port;
	out->trap_port = cfg->nft.trap_port;
	out->handoff_mode = cfg->handoff.mode;
	out->handoff_timeout_ms = cfg->handoff.timeout_ms;
	out->seccomp = cfg->seccomp;
	out->log_level = cfg->log_level;
	snprintf(out->user, sizeof(out->user), "%s", cfg->user);
	snprintf(out->hostname, sizeof(out->hostname), "%s", cfg->hostname);
	snprintf(out->capabilities, sizeof(out->capabilities), "%s",
	         cfg->capabilities);
}

void
config_metrics_listen_part(const struct config *cfg,
                           struct metrics_listen_settings *out)
{
	snprintf(out->listen, sizeof(out->listen), "%s", cfg->metrics_listen);
	out->addr = cfg->metrics_addr;
	out->addr_len = cfg->metrics_addr_len;
	snprintf(out->user, sizeof(out->user), "%s", cfg->user);
}
