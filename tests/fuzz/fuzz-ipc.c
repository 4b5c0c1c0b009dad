// SPDX-License-Identifier: GPL-2.0-or-later
/* libFuzzer target for the privilege boundary: any bytes the child could
 * send as a record, through greygated's checks (ipc_check_up) and, when
 * they pass, on to the decision they would lead to, over a real store in
 * a temp folder. Nothing the child sends may crash greygated. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attempt.h"
#include "ipc.h"
#include "policy.h"

static struct store *store;
static struct grey *grey;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ipc_record rec;
	struct sensor_event ev;
	struct grey_attempt a;
	struct grey_decision d;
	size_t len = size;

	if (!store) {
		struct grey_config cfg;

		if (store_open_temp(&store) < 0)
			abort();
		grey_config_defaults(&cfg);
		grey = grey_new(&cfg, store);
	}
	/* The record as the socket would hand it: at most its size; a
	 * shorter one is what a short message gives. */
	memset(&rec, 0, sizeof(rec));
	if (len > sizeof(rec))
		len = sizeof(rec);
	memcpy(&rec, data, len);
	/* Most inputs would fail the size and version: let a byte say
	 * whether they come right, so the checks behind them are reached. */
	if (size && data[0] & 1) {
		len = sizeof(rec);
		rec.version = IPC_VERSION;
	}
	if (ipc_check_up(&rec, len) < 0)
		return 0;
	if (rec.type != IPC_EVENT && rec.type != IPC_ATTEMPT)
		return 0;
	ipc_event_view(&rec.u.ev, &ev);
	if (!attempt_of_event(&ev, 1700000000, &a))
		return 0;
	grey_decide(grey, &a, &d);
	if (store_pending(store) > 1000)
		store_flush(store);
	return 0;
}
