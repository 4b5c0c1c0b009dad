// SPDX-License-Identifier: GPL-2.0-or-later
/* What this build has (see build_features.h). */
#include "build_features.h"

#if GG_WITH_REDIS
#define HAS_REDIS "+redis"
#else
#define HAS_REDIS "-redis"
#endif
#if GG_WITH_METRICS_HTTP
#define HAS_METRICS_HTTP "+metrics_http"
#else
#define HAS_METRICS_HTTP "-metrics_http"
#endif
#if GG_WITH_PCRE2
#define HAS_PCRE2 "+pcre2"
#else
#define HAS_PCRE2 "-pcre2"
#endif
#if GG_WITH_POLICY_DOOR
#define HAS_POLICY_DOOR "+policy_door"
#else
#define HAS_POLICY_DOOR "-policy_door"
#endif

const char build_features[] =
        HAS_REDIS " " HAS_METRICS_HTTP " " HAS_PCRE2 " " HAS_POLICY_DOOR;
