/* SPDX-License-Identifier: Apache-2.0 */
/* RX drops over a recent window, per NIC, for ring-below-max: counters
 * since boot never fall, so once a NIC had dropped a burst the finding
 * could never clear, even after its ring was raised. A window keeps, for
 * each NIC, the drop counter where it was at the window's start (or when
 * its RX ring last changed) and says how many drops came since.
 *
 * The agent keeps one for its lifetime; every GET /v1/diagnostics updates
 * it. Thread-safe (one mutex). */
#ifndef NT_HOST_DROPWIN_H
#define NT_HOST_DROPWIN_H

#include "host/topology.h"

#include <jansson.h>
#include <stdint.h>

typedef struct nt_dropwin nt_dropwin;

/* The default window: drops of the last 5 to 10 minutes are judged. */
#define NT_DROPWIN_DEFAULT_MS (5 * 60 * 1000)

/* A window of WINDOW_MS (> 0). NULL when out of memory. */
nt_dropwin *nt_dropwin_new(int64_t window_ms);
void nt_dropwin_free(nt_dropwin *w);

/* Take T's counters at NOW_MS and return what diagnose's recent_drops
 * wants (diagnose/diagnose.h): NIC -> {"drops", "over_ms", "since":
 * "window"|"ring-change"} for every NIC with rings seen before, judged over
 * the current window and the one before it (so never over less than one
 * window once one has passed), or since its RX ring last changed when
 * that is sooner. A NIC seen the first time, or for less than one window
 * with no ring change, is not in it (its counters since boot judge it). A counter that went backwards (driver reload)
 * starts afresh. Returns a new object, NULL when out of memory. */
json_t *nt_dropwin_update(nt_dropwin *w, const nt_topology *t, int64_t now_ms);

#endif
