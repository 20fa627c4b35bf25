/* SPDX-License-Identifier: Apache-2.0 */
/* `nettune nics IF` as text (cli/nic_view.c). */
#ifndef NT_CLI_NIC_VIEW_H
#define NT_CLI_NIC_VIEW_H

#include "host/topology.h"

#include <jansson.h>

/* N's document DOC (as GET /v1/nics/{name}) on stdout: QS its queues
 * (nt_nic_queues_json, NULL when R, the queue read's result, is below 0:
 * said as such). */
void nt_cli_nic_view(const nt_nic *n, const json_t *doc, const json_t *qs, int r);

#endif
