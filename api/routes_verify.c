/* SPDX-License-Identifier: Apache-2.0 */
/* GET /v1/verify?window_ms=N: the delivery check (host/delivery.h), of
 * the IRQs and of the NAPI threads the agent placed. The
 * first sample is taken at once, the request is then suspended for the
 * window without holding a worker thread (as GET /v1/irqs/rates is), and
 * the second sample, the host read again and the verdicts answer it.
 *
 *   200 the check's document
 *   422 problem "invalid-request" with "errors": [{"path": "$.window_ms", ...}]
 *   503 problem "no-irq-information" when /proc/interrupts cannot be read */
#include "agent/agent.h"
#include "api/http.h"
#include "api/server.h"
#include "host/delivery.h"
#include "host/napi.h"
#include "host/topology.h"
#include "store/store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct verify_wait {
	nt_topology *t0;
	nt_delivery_sample a;
	nt_delivery_placed *placed;
	int nplaced;
	nt_delivery_rxq *rxq;
	int nrxq;
	nt_host_napi napi; /* t0's NAPIs: the family's queue->IRQ map */
	nt_delivery_thread *threads; /* NAPI threads placed, sampled at the start */
	int nthreads;
};

static void verify_wait_free(void *p)
{
	struct verify_wait *w = p;
	nt_delivery_sample_free(&w->a);
	nt_topology_free(w->t0);
	free(w->placed);
	free(w->rxq);
	free(w->threads);
	nt_host_napi_free(&w->napi);
	free(w);
}

static int verify_finish(const nt_request *req, nt_response *resp)
{
	const nt_ctx *ctx = nt_server_ctx(req->server);
	struct verify_wait *w = req->defer_state;
	nt_delivery_sample b;
	nt_topology *t1 = NULL;

	int r = nt_delivery_sample_read(ctx, &b);
	/* The same NICs' queues as at the window's start. */
	if (r == 0 && nt_delivery_sample_qstats(w->t0, &b) < 0) {
		nt_delivery_sample_free(&b);
		return -ENOMEM;
	}
	if (r < 0) {
		nt_delivery_sample_free(&b);
		return nt_problem(resp, 503, "no-irq-information", "No interrupt information",
				  "/proc/interrupts could not be read: %s", nt_strerror(r));
	}
	nt_delivery_threads_sample(ctx, w->threads, w->nthreads, true);
	/* The affinities at the window's end: a move in between allows both.
	 * A failed read leaves only the start's. */
	if (nt_topology_read(ctx, &t1) < 0)
		t1 = NULL;
	nt_delivery_in in = { .t0 = w->t0, .t1 = t1, .a = &w->a, .b = &b, .placed = w->placed,
			      .nplaced = w->nplaced, .rxq = w->rxq, .nrxq = w->nrxq, .napi = &w->napi,
			      .threads = w->threads, .nthreads = w->nthreads };
	resp->json = nt_delivery_compute(&in);
	if (resp->json)
		nt_agent_note_delivery(nt_server_agent(req->server), resp->json, nt_store_now_ms());
	nt_topology_free(t1);
	nt_delivery_sample_free(&b);
	return resp->json ? 0 : -ENOMEM;
}

static int get_verify(const nt_request *req, nt_response *resp)
{
	const nt_ctx *ctx = nt_server_ctx(req->server);
	int window = NT_DELIVERY_WINDOW_DEFAULT_MS;
	struct verify_wait *w;

	if (nt_query_int(req, "window_ms", NT_DELIVERY_WINDOW_MIN_MS, NT_DELIVERY_WINDOW_MAX_MS, NT_DELIVERY_WINDOW_DEFAULT_MS, &window) < 0) {
		nt_problem(resp, 422, "invalid-request", "Invalid request", "window_ms must be an integer from %d to %d",
			   NT_DELIVERY_WINDOW_MIN_MS, NT_DELIVERY_WINDOW_MAX_MS);
		if (resp->json)
			json_object_set_new(resp->json, "errors",
					    json_pack("[{s:s, s:s}]", "path", "$.window_ms", "message",
						      "an integer from 100 to 60000"));
		return resp->json ? 0 : -ENOMEM;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	int r = nt_route_read_host(req, resp, &w->t0);
	if (r < 0 || !w->t0) {
		free(w);
		return r;
	}
	if (nt_agent_placed_irqs(nt_server_agent(req->server), w->t0, &w->placed, &w->nplaced) < 0 ||
	    nt_delivery_rps_queues(w->t0, &w->rxq, &w->nrxq) < 0 ||
	    nt_host_napi_read(w->t0, NULL, 0, &w->napi) < 0 ||
	    nt_agent_placed_threads(nt_server_agent(req->server), w->t0, &w->napi, &w->threads, &w->nthreads) < 0) {
		verify_wait_free(w);
		return -ENOMEM;
	}
	nt_delivery_threads_sample(ctx, w->threads, w->nthreads, false);
	r = nt_delivery_sample_read(ctx, &w->a);
	if (r < 0) {
		verify_wait_free(w);
		return nt_problem(resp, 503, "no-irq-information", "No interrupt information",
				  "/proc/interrupts could not be read: %s", nt_strerror(r));
	}
	/* Each queue's packets (qstats-get), which tell a silent IRQ's no
	 * traffic from traffic taken without it. */
	if (nt_delivery_sample_qstats(w->t0, &w->a) < 0) {
		verify_wait_free(w);
		return -ENOMEM;
	}
	resp->defer_ms = (unsigned)window;
	resp->then = verify_finish;
	resp->defer_state = w;
	resp->defer_free = verify_wait_free;
	return 0;
}

static const char *const verify_query[] = { "window_ms", NULL };

static const nt_route verify_routes[] = {
	{ "GET", "/v1/verify", get_verify, verify_query, 0 },
	{ NULL, NULL, NULL, NULL, 0 },
};

const nt_area nt_area_verify = {
	.name = "verify",
	.routes = verify_routes,
};
