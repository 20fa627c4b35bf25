/* SPDX-License-Identifier: Apache-2.0 */
/* Where the agent placed each NIC IRQ, for the delivery check: the journal
 * knows, per IRQ, the newest transaction whose step changed its affinity
 * (nt_store_last_change); that step's after-value is the placement, as
 * long as the transaction's changes stand. A drift repair is such a
 * transaction too, so a host held to a desired state is covered. */
#include "agent/agent.h"
#include "host/delivery.h"
#include "store/status.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The after-value of TXN's applied irq_affinity step for TARGET, or NULL. */
static const char *step_after(const json_t *txn, const char *target)
{
	size_t i;
	json_t *s;
	json_array_foreach(json_object_get(txn, "steps"), i, s) {
		const char *kind = json_string_value(json_object_get(s, "kind"));
		const char *tg = json_string_value(json_object_get(s, "target"));
		const char *res = json_string_value(json_object_get(s, "result"));
		if (kind && tg && res && !strcmp(kind, "irq_affinity") && !strcmp(tg, target) &&
		    !strcmp(res, "applied"))
			return json_string_value(json_object_get(s, "after"));
	}
	return NULL;
}

int nt_agent_placed_irqs(nt_agent *a, const nt_topology *t, nt_delivery_placed **out, int *n)
{
	nt_store *st = nt_agent_store(a);
	nt_delivery_placed *p = NULL;
	json_t *txns = json_object(); /* id -> transaction document, or null */
	int np = 0, r = 0;

	*out = NULL;
	*n = 0;
	if (!txns)
		return -ENOMEM;
	if (!st)
		goto done;
	for (int i = 0; i < t->nirqs; i++) {
		const nt_irq *q = &t->irqs[i];
		char target[16], key[32];
		json_t *lc = NULL, *txn;
		if (q->nic < 0)
			continue;
		snprintf(target, sizeof(target), "%d", q->irq);
		if (nt_store_last_change(st, "irq_affinity", target, &lc) < 0)
			continue; /* never changed by the agent, or the store failed: not placed */
		json_int_t id = json_integer_value(json_object_get(lc, "txn"));
		json_decref(lc);
		snprintf(key, sizeof(key), "%lld", (long long)id);
		txn = json_object_get(txns, key);
		if (!txn) {
			json_t *doc = NULL;
			if (nt_store_txn_get(st, id, &doc) < 0)
				doc = json_null();
			if (json_object_set_new(txns, key, doc) < 0) {
				r = -ENOMEM;
				goto done;
			}
			txn = doc;
		}
		int status = nt_txn_status_parse(json_string_value(json_object_get(txn, "status")));
		if (status < 0 || !nt_txn_status_holds_changes((nt_txn_status)status))
			continue;
		const char *after = step_after(txn, target);
		nt_cpuset cpus;
		if (!after || nt_cpulist_parse(after, &cpus) < 0)
			continue;
		if (np % 64 == 0) {
			nt_delivery_placed *np2 = realloc(p, sizeof(*p) * (size_t)(np + 64));
			if (!np2) {
				r = -ENOMEM;
				goto done;
			}
			p = np2;
		}
		p[np].irq = q->irq;
		p[np].cpus = cpus;
		snprintf(p[np].by, sizeof(p[np].by), "transaction %lld", (long long)id);
		np++;
	}
done:
	json_decref(txns);
	if (r < 0) {
		free(p);
		return r;
	}
	*out = p;
	*n = np;
	return 0;
}
