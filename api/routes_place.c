/* Placement and live rates: where an application using a NIC
 * should run, and interrupts per second per CPU sampled over an interval. */
#include "api/http.h"
#include "api/server.h"
#include "placement/app.h"
#include "host/rates.h"
#include "host/topology.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int get_placement(const nt_request *req, nt_response *resp)
{
	const char *name = req->nparams > 0 ? req->params[0] : "";
	int want = 0;
	nt_topology *t = NULL;
	nt_placement p;

	if (!nt_ifname_valid(name))
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
		nt_placement_for(t, n, want, &p);
		resp->json = nt_placement_to_json(t, n, &p);
	}
	nt_topology_free(t);
	if (!n)
		return nt_problem(resp, 404, "not-found", "Not found", "no NIC named '%s'", name);
	return resp->json ? 0 : -ENOMEM;
}

static int get_rates(const nt_request *req, nt_response *resp)
{
	const nt_ctx *ctx = nt_server_ctx(req->server);
	int interval = 1000;
	nt_topology *t = NULL;
	nt_irq_sample a, b;

	if (nt_query_int(req, "interval_ms", 10, 10000, 1000, &interval) < 0)
		return nt_problem(resp, 400, "bad-request", "Invalid query parameter",
				  "interval_ms must be an integer from 10 to 10000");
	int r = nt_route_read_host(req, resp, &t);
	if (r < 0 || !t)
		return r;
	r = nt_rates_sample(ctx, &a);
	if (r < 0) {
		nt_topology_free(t);
		return nt_problem(resp, 503, "no-irq-information", "No interrupt information",
				  "/proc/interrupts could not be read: %s", nt_strerror(r));
	}
	struct timespec ts = { interval / 1000, (long)(interval % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	r = nt_rates_sample(ctx, &b);
	if (r == 0) {
		resp->json = nt_rates_compute(t, &a, &b);
		nt_rates_sample_free(&b);
	}
	nt_rates_sample_free(&a);
	nt_topology_free(t);
	if (r < 0)
		return nt_problem(resp, 503, "no-irq-information", "No interrupt information",
				  "/proc/interrupts could not be read: %s", nt_strerror(r));
	return resp->json ? 0 : -ENOMEM;
}

static const char *const placement_query[] = { "cpus", NULL };
static const char *const rates_query[] = { "interval_ms", NULL };

static const nt_route place_routes[] = {
	{ "GET", "/v1/nics/{name}/placement", get_placement, placement_query },
	{ "GET", "/v1/irqs/rates", get_rates, rates_query },
	{ NULL, NULL, NULL, NULL },
};

const nt_area nt_area_place = {
	.name = "place",
	.routes = place_routes,
};
