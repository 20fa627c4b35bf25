/* SPDX-License-Identifier: Apache-2.0 */
/* The read-only area: health, the host model, NICs, IRQs, findings.
 *
 * Each route reads the host (one nt_topology_read per request, shared with
 * the requests that arrive while it waits to start: api/read_share.h) and
 * lets go of it before returning. What changes under the agent (irqbalance rewrites
 * affinity, links go up and down, counters) is read fresh every time; only
 * the static part of the host (CPUs, nodes, NICs' devices and locality)
 * comes from the agent's host model cache, checked at every read
 * (host/hostcache.h). The big documents (topology, NICs, IRQs) are written
 * straight into text (host/topology_json.c), in the bytes jansson would
 * print for them. */
#include "agent/agent.h"
#include "store/store.h"
#include "api/http.h"
#include "host/dropwin.h"
#include "api/read_share.h"
#include "kernel/kernel.h"
#include "api/server.h"
#include "diagnose/diagnose.h"
#include "host/jsonw.h"
#include "host/napi.h"
#include "host/qstats.h"
#include "host/queues.h"
#include "host/topology.h"
#include "settings/setting.h"
#include "store/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Default RTT for diagnostics when neither the request nor the server
 * configuration gives one (the value nt_diagnose documents). */
#define NT_DEFAULT_RTT_MS 10

int nt_route_read_host(const nt_request *req, nt_response *resp, nt_topology **t)
{
	int r = nt_topology_read(nt_server_ctx(req->server), t);
	if (r < 0)
		return nt_problem(resp, 500, "topology-unreadable", "Host could not be read",
				  "reading the host failed: %s", nt_strerror(r));
	return 0;
}

/* Targets named in health's "rollback_failed" at most. */
#define NT_HEALTH_UNMENDED_MAX 32

/* Health answers without reading the whole host: it says the agent is up
 * and which host it looks at, and must stay cheap when /sys is slow. An
 * agent whose database could not be opened is not healthy, whatever else
 * works: it cannot record or undo a change, and crash recovery did not run,
 * so a transaction cut short before this start may still be half-applied on
 * the host. Health then answers 503 with status "degraded" and says so. */
static int get_health(const nt_request *req, nt_response *resp)
{
	const nt_ctx *ctx = nt_server_ctx(req->server);
	const char *store_err = nt_agent_store_error(nt_server_agent(req->server));
	char netns[64] = "";

	/* As in the host model: only the live host has a network namespace
	 * of its own (kernel/kernel.h). */
	if (nt_kernel_netns(ctx, netns, sizeof(netns)) < 0)
		netns[0] = '\0';
	resp->json = json_pack("{s:s, s:s, s:s, s:b, s:o, s:s}", "status",
			       store_err ? "degraded" : "ok", "version", NETTUNE_VERSION, "root",
			       ctx->root[0] ? ctx->root : "/", "live", ctx->live, "netns",
			       netns[0] ? json_string(netns) : json_null(), "store",
			       store_err ? "unavailable" : "ok");
	/* Where the agent runs among network namespaces, learnt at its start:
	 * outside the initial one the machine-wide kinds are refused unless
	 * the operator allowed them (settings/setting.h, nt_reach). */
	if (resp->json) {
		json_object_set_new(resp->json, "netns_initial", json_boolean(!ctx->netns_other));
		json_object_set_new(resp->json, "machine_wide",
				    json_string(!ctx->netns_other || ctx->machine_wide_allowed ? "allowed" : "refused"));
	}
	/* Transactions that ended but whose outcome the store refused (a full
	 * disk): their rows still say "applying" until the engine writes them
	 * (engine/txn.h, nt_txn_unsettled). Degraded, but answered 200: the
	 * agent works and settles them itself once the store takes writes,
	 * which a restart by the watchdog (it wants 200) would not hasten. */
	json_t *unsettled = NULL;
	if (resp->json && !store_err &&
	    nt_txn_unsettled(nt_agent_engine(nt_server_agent(req->server)), &unsettled) > 0) {
		char warn[256];
		const char *why = json_string_value(
			json_object_get(json_array_get(unsettled, 0), "store_error"));
		snprintf(warn, sizeof(warn),
			 "%zu finished transaction(s) not yet recorded as they ended (the store "
			 "refused the write: %s); written as soon as the store accepts writes",
			 json_array_size(unsettled), why ? why : "error");
		json_object_set_new(resp->json, "status", json_string("degraded"));
		json_object_set_new(resp->json, "warnings", json_pack("[s]", warn));
		json_object_set(resp->json, "unsettled", unsettled);
	}
	json_decref(unsettled);
	/* A transaction that ended rollback_failed left targets in neither
	 * their old state nor their new: degraded (200, the agent works) until
	 * a later transaction writes each of them, with the targets named. */
	json_t *unmended = NULL;
	int nun = resp->json && !store_err ?
			  nt_txn_unmended(nt_agent_engine(nt_server_agent(req->server)), NT_HEALTH_UNMENDED_MAX,
					  &unmended) : 0;
	if (nun > 0) {
		char warn[512];
		const json_t *u0 = json_array_get(unmended, 0);
		json_t *warnings = json_object_get(resp->json, "warnings");
		snprintf(warn, sizeof(warn),
			 "%d target(s) could not be put back by a rollback (%s %s of transaction %lld%s) "
			 "and are in neither their old state nor their new: see the transaction's steps; "
			 "healthy again once a later transaction writes them",
			 nun, json_string_value(json_object_get(u0, "kind")),
			 json_string_value(json_object_get(u0, "target")),
			 (long long)json_integer_value(json_object_get(u0, "transaction")),
			 nun > 1 ? ", and others" : "");
		json_object_set_new(resp->json, "status", json_string("degraded"));
		if (!warnings) {
			warnings = json_array();
			json_object_set_new(resp->json, "warnings", warnings);
		}
		json_array_append_new(warnings, json_string(warn));
		json_object_set(resp->json, "rollback_failed", unmended);
	}
	json_decref(unmended);
	if (resp->json && store_err) {
		resp->status = 503;
		json_object_set_new(resp->json, "store_error", nt_json_string_safe(store_err));
		json_object_set_new(resp->json, "warnings",
				    json_pack("[s, s]", NT_AGENT_NO_RECOVERY_WARNING,
					      "transactions are refused until the database can be opened"));
	}
	return resp->json ? 0 : -ENOMEM;
}

/* A snapshot of the host read for this request, shared with concurrent
 * ones. On failure RESP holds a 500 problem. */
static int read_shared(const nt_request *req, nt_response *resp, nt_snapshot **snap)
{
	nt_read_share *share = nt_area_state(req->server, &nt_area_read);
	int r = nt_read_share_get(share, snap);
	if (r < 0)
		return nt_problem(resp, 500, "topology-unreadable", "Host could not be read",
				  "reading the host failed: %s", nt_strerror(r));
	return 0;
}

static void release_snapshot(void *snap)
{
	nt_snapshot_put(snap);
}

/* Answer with document DOC of a fresh snapshot. */
static int doc_reply(const nt_request *req, nt_response *resp, nt_snapshot_doc doc)
{
	nt_snapshot *snap = NULL;
	int r = read_shared(req, resp, &snap);
	if (r < 0 || !snap)
		return r;
	/* The snapshot's own document is the body, not a copy of it: the
	 * snapshot is put once the server has sent it. */
	resp->shared = nt_snapshot_text(snap, doc, &resp->shared_len);
	if (!resp->shared) {
		nt_snapshot_put(snap);
		return -ENOMEM;
	}
	resp->release = release_snapshot;
	resp->release_cls = snap;
	resp->content_type = "application/json";
	return 0;
}

static int get_topology(const nt_request *req, nt_response *resp)
{
	return doc_reply(req, resp, NT_DOC_TOPOLOGY);
}

static int get_nics(const nt_request *req, nt_response *resp)
{
	return doc_reply(req, resp, NT_DOC_NICS);
}

/* Mark the rules of FLOWS (nt_nic_flows_json) that nettune put there:
 * the last transaction that changed their location set this very rule.
 * A rule put back or replaced by hand since is not marked. One store
 * read a rule, for the one NIC asked about. */
static void mark_own_rules(nt_store *store, const char *ifname, json_t *flows)
{
	size_t i, k;
	json_t *rule, *step;
	char target[NT_TARGET_MAX];
	json_array_foreach(json_object_get(flows, "rules"), i, rule) {
		json_t *lc = NULL, *txn = NULL;
		int64_t id = 0;
		snprintf(target, sizeof(target), "%s/loc-%lld", ifname,
			 (long long)json_integer_value(json_object_get(rule, "location")));
		if (store && nt_store_last_change(store, "flow", target, &lc) == 0 &&
		    nt_store_txn_get(store, id = json_integer_value(json_object_get(lc, "txn")), &txn) == 0) {
			json_array_foreach(json_object_get(txn, "steps"), k, step) {
				const char *after = json_string_value(json_object_get(step, "after"));
				const char *now = json_string_value(json_object_get(rule, "rule")) ?: "";
				size_t len = strlen(now);
				/* A step that replaced a rule says so after the rule. */
				if (!strcmp(json_string_value(json_object_get(step, "kind")) ?: "", "flow") &&
				    !strcmp(json_string_value(json_object_get(step, "target")) ?: "", target) && after &&
				    !strncmp(after, now, len) && (!after[len] || !strcmp(after + len, " replace")))
					json_object_set_new(rule, "by_nettune", json_integer(id));
			}
		}
		if (!json_object_get(rule, "by_nettune"))
			json_object_set_new(rule, "by_nettune", json_null());
		json_decref(lc);
		json_decref(txn);
	}
}

static int get_nic(const nt_request *req, nt_response *resp)
{
	const char *name = req->nparams > 0 ? req->params[0] : "";
	nt_snapshot *snap = NULL;

	/* Checked before the name can reach a sysfs path or a lookup. */
	/* Not UTF-8: never one of the NICs reported (the host's problems
	 * list such a name). */
	if (!nt_ifname_valid(name) || !nt_jw_utf8(name))
		return nt_problem(resp, 400, "bad-request", "Invalid interface name",
				  "'%.64s' is not a valid interface name", name);
	int r = read_shared(req, resp, &snap);
	if (r < 0 || !snap)
		return r;
	const nt_topology *t = nt_snapshot_topology(snap);
	const nt_nic *n = nt_topology_nic(t, name);
	if (n)
		resp->json = nt_nic_to_json(t, n);
	/* The NIC's queues are read here, for this one NIC, and not in the
	 * shared host read that /v1/topology serves (host/queues.h says why). */
	if (resp->json) {
		nt_nic_queues q;
		bool have_q = nt_nic_queues_read(t, n, &q) == 0;
		/* NAPI before the queues' JSON: where the netdev family answers,
		 * it names each queue's NAPI and IRQ (host/napi.h). */
		if (nt_nic_napi_report(t, n, have_q ? &q : NULL, resp->json) == -ENOMEM ||
		    nt_nic_qstats_report(t, n, have_q ? &q : NULL, resp->json) == -ENOMEM) {
			nt_nic_queues_free(&q);
			json_decref(resp->json);
			resp->json = NULL;
			nt_snapshot_put(snap);
			return -ENOMEM;
		}
		json_t *qs = have_q ? nt_nic_queues_json(t, &q) : NULL;
		nt_nic_queues_free(&q);
		json_object_set_new(resp->json, "queues", qs ? qs : json_null());
		json_t *rss = nt_nic_rss_json(t, n);
		json_object_set_new(resp->json, "rss", rss ? rss : json_null());
		/* What the kinds show of this NIC alone (its offload features,
		 * its flow control): kernel requests the host read leaves out. */
		if (nt_setting_report_detail(nt_server_ctx(req->server), NULL, n, resp->json) == -ENOMEM) {
			json_decref(resp->json);
			resp->json = NULL;
		}
		json_t *flows = nt_nic_flows_json(t, n);
		mark_own_rules(nt_agent_store(nt_server_agent(req->server)), n->name, flows);
		json_object_set_new(resp->json, "flows", flows ? flows : json_null());
	}
	nt_snapshot_put(snap);
	if (!n)
		return nt_problem(resp, 404, "not-found", "Not found", "no NIC named '%s'", name);
	return resp->json ? 0 : -ENOMEM;
}

static int get_irqs(const nt_request *req, nt_response *resp)
{
	return doc_reply(req, resp, NT_DOC_IRQS);
}

/* A clock that never jumps, for the drop window's spans. */
static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int get_diagnostics(const nt_request *req, nt_response *resp)
{
	const nt_server_config *cfg = nt_server_cfg(req->server);
	nt_diag_options opt = { .rtt_ms = cfg->rtt_ms > 0 ? cfg->rtt_ms : NT_DEFAULT_RTT_MS };
	const char *rtt = nt_query(req, "rtt_ms");
	nt_snapshot *snap = NULL;

	if (nt_query_int(req, "rtt_ms", 1, 10000, opt.rtt_ms, &opt.rtt_ms) < 0)
		return nt_problem(resp, 400, "bad-request", "Invalid query parameter",
				  "rtt_ms must be an integer from 1 to 10000, not '%.32s'", rtt);
	int r = read_shared(req, resp, &snap);
	if (r < 0 || !snap)
		return r;
	/* Drops are judged over the agent's recent window, not since boot. */
	json_t *recent = nt_dropwin_update(nt_agent_drops(nt_server_agent(req->server)), nt_snapshot_topology(snap),
					   mono_ms());
	opt.recent_drops = recent;
	/* The CPUs the profile in effect keeps for applications, which
	 * rps-reserved-cpus and rss-queues-misplaced judge steering by. */
	json_t *reserved = NULL;
	nt_cpuset exclude;
	char source[64];
	if (nt_agent_placement_hint(nt_server_agent(req->server), nt_snapshot_topology(snap), NULL, &reserved,
				    &exclude, source, sizeof(source)) == 0)
		opt.reserved = reserved;
	/* The NAPIs of every NIC: one read of the netdev family for the host
	 * (never part of the shared host read that /v1/topology serves). */
	nt_host_napi napi;
	if (nt_host_napi_read(nt_snapshot_topology(snap), NULL, 0, &napi) == 0)
		opt.napi = &napi;
	/* The profile in effect, which says whether the host asked for
	 * latency (dim-profile-default). */
	json_t *in_effect = NULL;
	char psource[64];
	nt_agent_profile_in_effect(nt_server_agent(req->server), &in_effect, psource, sizeof(psource));
	opt.profile = in_effect;
	opt.profile_source = psource;
	resp->json = nt_diagnose(nt_snapshot_topology(snap), &opt);
	json_decref(in_effect);
	nt_host_napi_free(&napi);
	json_decref(reserved);
	json_decref(recent);
	nt_snapshot_put(snap);
	if (!resp->json)
		return -ENOMEM;
	/* What the drift watcher found is a finding too (contested targets,
	 * a desired state that no longer validates). */
	nt_drift *d = nt_agent_drift(nt_server_agent(req->server));
	if (d) {
		json_t *rep = nt_drift_report(d);
		int r2 = rep ? nt_diagnose_add_drift(resp->json, rep) : -ENOMEM;
		json_decref(rep);
		if (r2 < 0)
			return r2;
	}
	/* And what the last delivery check saw land elsewhere. */
	json_t *last = nt_agent_last_delivery(nt_server_agent(req->server));
	if (last) {
		int r3 = nt_diagnose_add_delivery(resp->json, last, nt_store_now_ms());
		json_decref(last);
		if (r3 < 0)
			return r3;
	}
	return 0;
}

static const char *const diag_query[] = { "rtt_ms", NULL };

static const nt_route read_routes[] = {
	{ "GET", "/v1/health", get_health, NULL, 0 },
	{ "GET", "/v1/topology", get_topology, NULL, 0 },
	{ "GET", "/v1/nics", get_nics, NULL, 0 },
	{ "GET", "/v1/nics/{name}", get_nic, NULL, 0 },
	{ "GET", "/v1/irqs", get_irqs, NULL, 0 },
	{ "GET", "/v1/diagnostics", get_diagnostics, diag_query, 0 },
	{ NULL, NULL, NULL, NULL, 0 },
};

static int read_init(struct nt_server *s, void **state, char *err, size_t errsize)
{
	int r = nt_read_share_new(nt_server_ctx(s), (nt_read_share **)state);
	if (r < 0)
		snprintf(err, errsize, "cannot set up shared host reads: %s", nt_strerror(r));
	return r;
}

static void read_fini(void *state)
{
	nt_read_share_free(state);
}

const nt_area nt_area_read = {
	.name = "read",
	.init = read_init,
	.fini = read_fini,
	.routes = read_routes,
};
