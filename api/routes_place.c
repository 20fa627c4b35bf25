/* SPDX-License-Identifier: Apache-2.0 */
/* Placement and live rates: where an application using a NIC
 * should run, and interrupts per second per CPU sampled over an interval. */
#include "agent/agent.h"
#include "api/http.h"
#include "api/server.h"
#include "placement/app.h"
#include "host/rates.h"
#include "host/jsonw.h"
#include "host/topology.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The longest measurement a request may ask for. Waiting costs no thread
 * (the request is suspended), but a client that wants a longer average can
 * take several samples; ten seconds also stays inside every client's
 * default timeout. */
#define NT_RATES_MAX_INTERVAL_MS 10000

static int get_placement(const nt_request *req, nt_response *resp)
{
	const char *name = req->nparams > 0 ? req->params[0] : "";
	int want = 0;
	nt_topology *t = NULL;
	nt_placement p;

	/* Not UTF-8: never one of the NICs reported (the host's problems
	 * list such a name). */
	if (!nt_ifname_valid(name) || !nt_jw_utf8(name))
		return nt_problem(resp, 400, "bad-request", "Invalid interface name",
				  "'%.64s' is not a valid interface name", name);
	if (nt_query_int(req, "cpus", 1, NT_MAX_CPUS, 0, &want) < 0)
		return nt_problem(resp, 400, "bad-request", "Invalid query parameter",
				  "cpus must be an integer from 1 to %d", NT_MAX_CPUS);
	int r = nt_route_read_host(req, resp, &t);
	if (r < 0 || !t)
		return r;
	const nt_nic *n = nt_topology_nic(t, name);
	if (n) {
		json_t *reserved = NULL;
		nt_cpuset exclude;
		char source[64];
		nt_placement_hint hint = { .exclude = &exclude, .source = source };
		if (nt_agent_placement_hint(nt_server_agent(req->server), t, n, &reserved, &exclude, source,
					    sizeof(source)) < 0) {
			nt_topology_free(t);
			return -ENOMEM;
		}
		hint.reserved = reserved;
		/* Pinned NAPI threads keep their CPUs as IRQs do (placement/app.h). */
		nt_host_napi napi;
		if (nt_host_napi_read(t, NULL, 0, &napi) == 0)
			hint.napi = &napi;
		nt_placement_for(t, n, want, &hint, &p);
		resp->json = nt_placement_to_json(t, n, &p, source[0] ? source : NULL);
		nt_host_napi_free(&napi);
		json_decref(reserved);
	}
	nt_topology_free(t);
	if (!n)
		return nt_problem(resp, 404, "not-found", "Not found", "no NIC named '%s'", name);
	return resp->json ? 0 : -ENOMEM;
}

/* What a rate measurement keeps between its two samples. */
struct rates_wait {
	nt_topology *t;
	nt_irq_sample a;
};

static void rates_wait_free(void *p)
{
	struct rates_wait *w = p;
	nt_rates_sample_free(&w->a);
	nt_topology_free(w->t);
	free(w);
}

/* The second half, after the interval (the server held no thread for it). */
static int rates_finish(const nt_request *req, nt_response *resp)
{
	const nt_ctx *ctx = nt_server_ctx(req->server);
	struct rates_wait *w = req->defer_state;
	nt_irq_sample b;

	int r = nt_rates_sample(ctx, &b);
	if (r < 0)
		return nt_problem(resp, 503, "no-irq-information", "No interrupt information",
				  "/proc/interrupts could not be read: %s", nt_strerror(r));
	resp->json = nt_rates_compute(w->t, &w->a, &b);
	nt_rates_sample_free(&b);
	return resp->json ? 0 : -ENOMEM;
}

static int get_rates(const nt_request *req, nt_response *resp)
{
	const nt_ctx *ctx = nt_server_ctx(req->server);
	int interval = 1000;
	struct rates_wait *w;

	if (nt_query_int(req, "interval_ms", 10, NT_RATES_MAX_INTERVAL_MS, 1000, &interval) < 0)
		return nt_problem(resp, 400, "bad-request", "Invalid query parameter",
				  "interval_ms must be an integer from 10 to %d",
				  NT_RATES_MAX_INTERVAL_MS);
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	int r = nt_route_read_host(req, resp, &w->t);
	if (r < 0 || !w->t) {
		free(w);
		return r;
	}
	r = nt_rates_sample(ctx, &w->a);
	if (r < 0) {
		nt_topology_free(w->t);
		free(w);
		return nt_problem(resp, 503, "no-irq-information", "No interrupt information",
				  "/proc/interrupts could not be read: %s", nt_strerror(r));
	}
	resp->defer_ms = (unsigned)interval;
	resp->then = rates_finish;
	resp->defer_state = w;
	resp->defer_free = rates_wait_free;
	return 0;
}

static const char *const placement_query[] = { "cpus", NULL };
static const char *const rates_query[] = { "interval_ms", NULL };

static const nt_route place_routes[] = {
	{ "GET", "/v1/nics/{name}/placement", get_placement, placement_query, 0 },
	{ "GET", "/v1/irqs/rates", get_rates, rates_query, 0 },
	{ NULL, NULL, NULL, NULL, 0 },
};

const nt_area nt_area_place = {
	.name = "place",
	.routes = place_routes,
};
