/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Each service's part of the settings, made from struct config (the
 * root's: config_parts.c). */
#ifndef GREYGATE_CONFIG_PARTS_H
#define GREYGATE_CONFIG_PARTS_H

#include "config.h"

/* config_door_part, config_handoff_part - the policy door's part, the
 * hand-off's (config_parts.c). */
void config_door_part(const struct config *cfg,
                      struct policy_door_settings *out);
void config_handoff_part(const struct config *cfg,
                         struct handoff_settings *out);
/* config_decider_part, config_allow_part, config_housekeeping_part -
 * the decider's (decide.h), the allow lists' (allow_lists.h), the
 * housekeeping's (housekeeping.h). */
struct decider_settings;
struct allow_settings;
struct housekeeping_settings;
void config_decider_part(const struct config *cfg,
                         struct decider_settings *out);
void config_allow_part(const struct config *cfg, struct allow_settings *out);
void config_housekeeping_part(const struct config *cfg,
                              struct housekeeping_settings *out);

/* config_command_part - greygatectl's commands' (commands.h). */
struct command_settings;
void config_command_part(const struct config *cfg,
                         struct command_settings *out);

/* config_shared_part - the shared store's (shared.h). */
struct shared_settings;
void config_shared_part(const struct config *cfg, struct shared_settings *out);

/* config_supervisor_part - the child's supervisor's (supervise.h). */
struct supervisor_settings;
void config_supervisor_part(const struct config *cfg,
                            struct supervisor_settings *out);

/* config_metrics_listen_part - the metrics listener's (metrics_http.h). */
struct metrics_listen_settings;
void config_metrics_listen_part(const struct config *cfg,
                                struct metrics_listen_settings *out);

#endif
