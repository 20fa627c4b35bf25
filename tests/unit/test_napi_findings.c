/* SPDX-License-Identifier: Apache-2.0 */
/* The NAPI findings (diagnose/napi.c) on host models built by hand, with
 * the host NAPI read (host/napi.h) built by hand beside them: threads
 * pinned with their IRQ (none), allowed beyond it (napi-thread-unpinned,
 * fixed with thread_cpus "irq", the effective CPU, or a CPU dealt from the
 * NIC's node when there is no IRQ), pinned apart from it or off the node
 * (napi-thread-apart), defer-hard-irqs without gro-flush-timeout per NAPI
 * and per device, irq-suspend-timeout without the pair; nothing for a NIC
 * the family did not answer for, nothing without the NAPI read at all; and
 * the fix profile pinning exactly the threads the findings name. */
#include "diagnose/diagnose.h"
#include "host/napi.h"
#include "harness.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the host model ---- */

static char empty_root[] = "/tmp/nt-diagnapi-XXXXXX";

/* CPUs 0-3 on node 0, 4-7 on node 1. */
static nt_topology *topo_new(void)
{
	static const char *const nodes[] = { "0-3", "4-7" };
	nt_topology *t = calloc(1, sizeof(*t));
	t->ncpus_possible = 8;
	t->cpu_node = malloc(sizeof(int) * 8);
	t->nodes = calloc(2, sizeof(*t->nodes));
	t->nnodes = 2;
	for (int n = 0; n < 2; n++) {
		t->nodes[n].id = n;
		if (nt_cpulist_parse(nodes[n], &t->nodes[n].cpus) != 0)
			abort();
		nt_cpuset_or(&t->cpus_online, &t->cpus_online, &t->nodes[n].cpus);
	}
	for (int c = 0; c < 8; c++)
		t->cpu_node[c] = c / 4;
	t->have_irq_info = true;
	/* An empty root: the steering checks find no queue files there, and
	 * the NAPI checks read only the models. */
	CHECK_INT(nt_ctx_init(&t->ctx, empty_root), 0);
	return t;
}

static int add_nic(nt_topology *t, const char *name, int node, bool virt)
{
	t->nics = realloc(t->nics, sizeof(*t->nics) * (size_t)(t->nnics + 1));
	nt_nic *n = &t->nics[t->nnics];
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->ifindex = 10 + t->nnics;
	n->numa_node = node;
	n->numa_node_source = node >= 0 ? NT_SRC_SYSFS : NT_SRC_UNKNOWN;
	n->is_virtual = virt;
	snprintf(n->operstate, sizeof(n->operstate), "up");
	return t->nnics++;
}

/* IRQ IRQNUM of NIC, queue QUEUE, affinity AFF, effective EFF (NULL:
 * none). Added in ascending IRQ order, as the lookup wants. */
static void add_irq(nt_topology *t, int nic, int irqnum, int queue, const char *aff, const char *eff)
{
	t->irqs = realloc(t->irqs, sizeof(*t->irqs) * (size_t)(t->nirqs + 1));
	nt_irq *q = &t->irqs[t->nirqs];
	memset(q, 0, sizeof(*q));
	q->irq = irqnum;
	q->nic = nic;
	q->node = -1;
	q->queue = queue;
	snprintf(q->name, sizeof(q->name), "%s-TxRx-%d", t->nics[nic].name, queue);
	if (nt_cpulist_parse(aff, &q->affinity) != 0)
		abort();
	q->has_affinity = true;
	if (eff) {
		if (nt_cpulist_parse(eff, &q->effective) != 0)
			abort();
		q->has_effective = true;
	}
	nt_nic *n = &t->nics[nic];
	n->irqs = realloc(n->irqs, sizeof(int) * (size_t)(n->nirqs + 1));
	n->irqs[n->nirqs++] = t->nirqs++;
}

static void topo_free(nt_topology *t)
{
	for (int i = 0; i < t->nnics; i++)
		free(t->nics[i].irqs);
	free(t->nics);
	free(t->irqs);
	free(t->nodes);
	free(t->cpu_node);
	free(t);
}

/* ---- the NAPI read, by hand ---- */

static nt_host_napi *hn_new(const nt_topology *t)
{
	nt_host_napi *h = calloc(1, sizeof(*h));
	h->nics = calloc((size_t)t->nnics, sizeof(*h->nics));
	h->nnics = t->nnics;
	return h;
}

/* NIC read: FAMILY (0 answered), the device's threaded, defer, gro. */
static void hn_nic(nt_host_napi *h, int nic, int family, int threaded, int64_t defer, int64_t gro)
{
	nt_napi_nic *c = &h->nics[nic];
	c->read = true;
	c->family = family;
	c->netlink_map = family == 0;
	c->dev.threaded = threaded;
	c->dev.defer_hard_irqs = defer;
	c->dev.gro_flush_timeout = gro;
}

/* A NAPI of NIC serving RX queue RXQ (-1 none), IRQ number IRQ (-1 none),
 * its thread on CPUS (NULL: not threaded), its three values (-1: the
 * kernel does not say). */
static nt_napi *hn_napi(nt_host_napi *h, const nt_topology *t, int nic, uint32_t id, int rxq, int irq,
			const char *cpus, int64_t defer, int64_t gro, int64_t suspend)
{
	size_t n = h->nd.nnapis;
	h->nd.napis = realloc(h->nd.napis, sizeof(*h->nd.napis) * (n + 1));
	h->napis = realloc(h->napis, sizeof(*h->napis) * (n + 1));
	nt_nd_napi a = { .ifindex = (uint32_t)t->nics[nic].ifindex, .id = id, .irq = irq, .pid = cpus ? (int64_t)1000 + id : -1,
			 .defer_hard_irqs = defer, .gro_flush_timeout = gro, .irq_suspend_timeout = suspend,
			 .threaded = cpus ? 1 : 0 };
	h->nd.napis[n] = a;
	h->nd.nnapis = h->nd.ncap = n + 1;
	nt_napi *x = &h->napis[n];
	memset(x, 0, sizeof(*x));
	x->nic = nic;
	x->nd = a;
	x->rx_queue = rxq;
	x->threaded = a.threaded;
	x->pid = a.pid;
	x->last_cpu = -1;
	if (cpus) {
		if (nt_cpulist_parse(cpus, &x->thread_cpus) != 0)
			abort();
		x->has_cpus = true;
	}
	if (rxq >= 0) {
		size_t k = h->nd.nqueues;
		h->nd.queues = realloc(h->nd.queues, sizeof(*h->nd.queues) * (k + 1));
		h->nd.queues[k] = (nt_nd_queue){ .ifindex = a.ifindex, .id = (uint32_t)rxq, .type = NT_NETDEV_QUEUE_RX,
						 .napi_id = id };
		h->nd.nqueues = h->nd.qcap = k + 1;
	}
	return x;
}

static void hn_free(nt_host_napi *h)
{
	nt_host_napi_free(h);
	free(h);
}

/* ---- reading the result ---- */

static json_t *diagnose(const nt_topology *t, const nt_host_napi *h)
{
	nt_diag_options o = { .rtt_ms = 10, .napi = h };
	json_t *r = nt_diagnose(t, &o);
	CHECK(r != NULL);
	return r;
}

static const json_t *find(const json_t *r, const char *id, const char *subject)
{
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(r, "findings"), i, f)
		if (!strcmp(json_string_value(json_object_get(f, "id")), id) &&
		    !strcmp(json_string_value(json_object_get(f, "subject")), subject))
			return f;
	return NULL;
}

static int count_prefix(const json_t *r, const char *const *ids)
{
	size_t i;
	json_t *f;
	int n = 0;
	json_array_foreach(json_object_get(r, "findings"), i, f)
		for (int k = 0; ids[k]; k++)
			n += !strcmp(json_string_value(json_object_get(f, "id")), ids[k]);
	return n;
}

static const char *const napi_ids[] = { "napi-thread-unpinned", "napi-thread-apart", "napi-defer-without-timeout",
					"irq-suspend-without-defer", NULL };

/* The NAPI ids listed in F's evidence, "8193,8195". */
static void ids_of(const json_t *f, char *buf, size_t size)
{
	size_t i, len = 0;
	json_t *e;
	buf[0] = 0;
	json_array_foreach(json_object_get(json_object_get(f, "evidence"), "napis"), i, e)
		len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? "," : "",
					(long long)json_integer_value(json_object_get(e, "napi_id")));
}

static const char *msg(const json_t *f)
{
	return f ? json_string_value(json_object_get(f, "message")) : "";
}

/* The fix of F as compact JSON (malloc'd), "null" without. */
static char *fix_text(const json_t *f)
{
	return json_dumps(f ? json_object_get(f, "fix") : json_null(), JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
}

static void check_fix(const json_t *f, const char *want)
{
	char *got = fix_text(f);
	CHECK_MSG(got && !strcmp(got, want), "fix %s, wanted %s", got ? got : "?", want);
	free(got);
}

/* ---- the cases ---- */

static void threads(void)
{
	nt_topology *t = topo_new();
	int eth1 = add_nic(t, "eth1", 0, false), eth2 = add_nic(t, "eth2", 0, false);
	int veth = add_nic(t, "veth0", -1, true), eth6 = add_nic(t, "eth6", 1, false);
	int eth7 = add_nic(t, "eth7", 0, false);
	/* eth1: a queue an IRQ, each on one CPU of node 0. */
	add_irq(t, eth1, 100, 0, "0", "0");
	add_irq(t, eth1, 101, 1, "1", "1");
	add_irq(t, eth1, 102, 2, "2", "2");
	add_irq(t, eth1, 103, 3, "3", "3");
	/* eth2: an IRQ allowed on the whole node, served by CPU 2. */
	add_irq(t, eth2, 110, 0, "0-3", "2");
	/* eth6: on node 1, its IRQ there. */
	add_irq(t, eth6, 120, 0, "4", "4");
	/* eth7: the family names no IRQ (virtio_net on 7.3): the IRQ by name. */
	add_irq(t, eth7, 130, 0, "1", "1");

	nt_host_napi *h = hn_new(t);
	hn_nic(h, eth1, 0, 1, 0, 0);
	hn_napi(h, t, eth1, 8193, 0, 100, "0-7", 0, 0, 0); /* unpinned */
	hn_napi(h, t, eth1, 8194, 1, 101, "1", 0, 0, 0); /* with its IRQ */
	hn_napi(h, t, eth1, 8195, 2, 102, "5", 0, 0, 0); /* apart, and off the node */
	hn_napi(h, t, eth1, 8196, 3, 103, "3-4", 0, 0, 0); /* beyond its IRQ's CPU */
	hn_nic(h, eth2, 0, 1, 0, 0);
	hn_napi(h, t, eth2, 8200, 0, 110, "0-3", 0, 0, 0); /* its IRQ's affinity, not the CPU serving it */
	hn_nic(h, veth, 0, 1, 0, 0);
	hn_napi(h, t, veth, 9001, 0, -1, "0-7", 0, 0, 0); /* no IRQ, no node, every CPU */
	hn_napi(h, t, veth, 9002, 1, -1, "0-7", 0, 0, 0);
	hn_napi(h, t, veth, 9003, 2, -1, "6", 0, 0, 0); /* pinned: fine */
	/* eth6: threaded per NAPI (napi-set, 6.17) while the device is not:
	 * no fix, as thread_cpus needs the device's threaded. */
	hn_nic(h, eth6, 0, 0, 0, 0);
	hn_napi(h, t, eth6, 8300, 0, 120, "0-7", 0, 0, 0);
	hn_nic(h, eth7, 0, 1, 0, 0);
	h->nics[eth7].netlink_map = false;
	hn_napi(h, t, eth7, 8400, 0, -1, "0-3", 0, 0, 0);

	json_t *r = diagnose(t, h);
	const json_t *f = find(r, "napi-thread-unpinned", "eth1");
	char ids[256];
	ids_of(f, ids, sizeof(ids));
	CHECK_MSG(f && !strcmp(ids, "8193,8196"), "eth1 unpinned: %s", f ? ids : "no finding");
	CHECK_STR(json_string_value(json_object_get(f, "severity")), "warning");
	/* The message names the NIC, NAPI, queue, pid and CPUs, and quotes
	 * napi.rst. */
	CHECK_MSG(strstr(msg(f), "eth1:") && strstr(msg(f), "NAPI 8193 (rx-0, thread pid 9193) on CPUs 0-7, its IRQ 100 on 0 (effective)") &&
			  strstr(msg(f), "the same CPU as the CPU which services the interrupt") &&
			  strstr(msg(f), "thread_cpus \"irq\""),
		  "%s", msg(f));
	check_fix(f, "{\"napi\":[{\"interface\":\"eth1\",\"queues\":\"0,3\",\"thread_cpus\":\"irq\"}]}");
	const json_t *e0 = json_array_get(json_object_get(json_object_get(f, "evidence"), "napis"), 0);
	CHECK_STR(json_string_value(json_object_get(e0, "irq_source")), "netlink");
	CHECK_STR(json_string_value(json_object_get(e0, "irq_cpus")), "0");
	CHECK_STR(json_string_value(json_object_get(e0, "fix_from")), "irq-affinity");
	CHECK_INT(json_integer_value(json_object_get(e0, "pid")), 9193);

	f = find(r, "napi-thread-apart", "eth1");
	ids_of(f, ids, sizeof(ids));
	CHECK_MSG(f && !strcmp(ids, "8195"), "eth1 apart: %s", f ? ids : "no finding");
	check_fix(f, "{\"napi\":[{\"interface\":\"eth1\",\"queues\":\"2\",\"thread_cpus\":\"irq\"}]}");
	CHECK_MSG(strstr(msg(f), "NAPI 8195 (rx-2, thread pid 9195) on CPUs 5, its IRQ 102 on 2"), "%s", msg(f));

	/* An affinity wider than the CPU serving the IRQ: pinned to that CPU,
	 * as "irq" would leave the thread on the whole node. */
	f = find(r, "napi-thread-unpinned", "eth2");
	check_fix(f, "{\"napi\":[{\"interface\":\"eth2\",\"queues\":\"0\",\"thread_cpus\":\"2\"}]}");
	CHECK_MSG(strstr(msg(f), "effective affinity"), "%s", msg(f));
	CHECK_STR(json_string_value(json_object_get(
			  json_array_get(json_object_get(json_object_get(f, "evidence"), "napis"), 0), "fix_from")),
		  "irq-effective");

	/* No IRQ and no node: every online CPU is "all CPUs"; one CPU a
	 * queue, dealt in queue order. The pinned third thread is fine. */
	f = find(r, "napi-thread-unpinned", "veth0");
	ids_of(f, ids, sizeof(ids));
	CHECK_MSG(f && !strcmp(ids, "9001,9002"), "veth0 unpinned: %s", f ? ids : "no finding");
	check_fix(f, "{\"napi\":[{\"interface\":\"veth0\",\"queues\":\"0\",\"thread_cpus\":\"0\"},"
		     "{\"interface\":\"veth0\",\"queues\":\"1\",\"thread_cpus\":\"1\"}]}");
	CHECK(!find(r, "napi-thread-apart", "veth0"));

	/* Thread on node 0's CPUs and beyond, IRQ and NIC on node 1: it
	 * shares CPU 4 with the IRQ: unpinned, not apart; no fix. */
	f = find(r, "napi-thread-unpinned", "eth6");
	CHECK(f != NULL);
	check_fix(f, "null");
	CHECK_MSG(strstr(msg(f), "No fix") && strstr(msg(f), "threaded"), "%s", msg(f));

	/* The family names no IRQ: the IRQ named for the queue, and the
	 * evidence says so. */
	f = find(r, "napi-thread-unpinned", "eth7");
	CHECK_STR(json_string_value(json_object_get(
			  json_array_get(json_object_get(json_object_get(f, "evidence"), "napis"), 0), "irq_source")),
		  "irq-names");
	CHECK_INT(json_integer_value(json_object_get(
			  json_array_get(json_object_get(json_object_get(f, "evidence"), "napis"), 0), "irq")),
		  130);

	/* The fix profile: each finding's entries, none dropped for sharing
	 * an interface. */
	json_t *p = nt_diagnose_fix_profile(r, "fixes");
	json_t *napi = json_object_get(p, "napi");
	CHECK_INT((int)json_array_size(napi), 6);
	json_decref(p);
	json_decref(r);

	/* Without the family for eth1 (the threads found by name): nothing
	 * said of it; without the NAPI read at all: no NAPI finding. */
	h->nics[eth1].family = -ENOENT;
	h->nics[eth1].netlink_map = false;
	r = diagnose(t, h);
	CHECK(!find(r, "napi-thread-unpinned", "eth1") && !find(r, "napi-thread-apart", "eth1"));
	CHECK(find(r, "napi-thread-unpinned", "veth0") != NULL);
	json_decref(r);
	r = diagnose(t, NULL);
	CHECK_INT(count_prefix(r, napi_ids), 0);
	json_decref(r);

	/* Pinned as the fixes say: no finding left. */
	h->nics[eth1].family = 0;
	h->nics[eth1].netlink_map = true;
	for (size_t i = 0; i < h->nd.nnapis; i++) {
		nt_napi *x = &h->napis[i];
		if (x->nic == eth1 || x->nic == eth6 || x->nic == eth7) {
			int idx = x->nd.irq >= 0 ? (int)(nt_topology_irq(t, (int)x->nd.irq) - t->irqs) : t->nics[x->nic].irqs[0];
			x->thread_cpus = t->irqs[idx].effective;
		} else if (x->nic == eth2) {
			nt_cpulist_parse("2", &x->thread_cpus);
		} else if (x->rx_queue < 2) {
			nt_cpuset_zero(&x->thread_cpus);
			nt_cpuset_set(&x->thread_cpus, x->rx_queue);
		}
	}
	r = diagnose(t, h);
	CHECK_INT(count_prefix(r, napi_ids), 0);
	json_decref(r);
	hn_free(h);
	topo_free(t);
}

static void values(void)
{
	nt_topology *t = topo_new();
	int eth3 = add_nic(t, "eth3", 0, false), eth4 = add_nic(t, "eth4", 0, false);
	int eth5 = add_nic(t, "eth5", 0, false), eth8 = add_nic(t, "eth8", 0, false);
	nt_host_napi *h = hn_new(t);
	/* eth3 (6.13+): per-NAPI values. */
	hn_nic(h, eth3, 0, 0, 0, 0);
	hn_napi(h, t, eth3, 8500, 0, -1, NULL, 10, 0, 0); /* defer, no timer */
	hn_napi(h, t, eth3, 8501, 1, -1, NULL, 10, 20000, 0); /* Eric Dumazet's pair: fine */
	hn_napi(h, t, eth3, 8502, 2, -1, NULL, 0, 0, 5000000); /* suspend alone */
	hn_napi(h, t, eth3, 8503, 3, -1, NULL, 2, 1000, 20000000); /* suspend with the pair: fine */
	hn_napi(h, t, eth3, 8504, 4, -1, NULL, 0, 0, 0); /* nothing set */
	/* eth4: no family; its sysfs pair is not judged. */
	hn_nic(h, eth4, -EOPNOTSUPP, 0, 10, 0);
	/* eth5 (6.8 to 6.12): the family without per-NAPI values; the
	 * device-wide pair is what every NAPI uses. */
	hn_nic(h, eth5, 0, 0, 5, 0);
	hn_napi(h, t, eth5, 8600, 0, -1, NULL, -1, -1, -1);
	hn_napi(h, t, eth5, 8601, 1, -1, NULL, -1, -1, -1);
	/* eth8: the device reads defer 5 without a timeout, yet its NAPIs
	 * (set one by one since) have timers: the NAPIs are the truth. */
	hn_nic(h, eth8, 0, 0, 5, 0);
	hn_napi(h, t, eth8, 8700, 0, -1, NULL, 5, 50000, 0);

	json_t *r = diagnose(t, h);
	const json_t *f = find(r, "napi-defer-without-timeout", "eth3");
	char ids[256];
	ids_of(f, ids, sizeof(ids));
	CHECK_MSG(f && !strcmp(ids, "8500"), "eth3 defer: %s", f ? ids : "no finding");
	CHECK_STR(json_string_value(json_object_get(json_object_get(f, "evidence"), "scope")), "napi");
	/* The rule as napi.rst and napi_complete_done have it. */
	CHECK_MSG(strstr(msg(f), "8500 (rx-0)") && strstr(msg(f), "defer-hard-irqs 10 with gro-flush-timeout 0") &&
			  strstr(msg(f), "is reused to control the delay of the timer") &&
			  strstr(msg(f), "nothing is deferred"),
		  "%s", msg(f));
	check_fix(f, "null");
	f = find(r, "irq-suspend-without-defer", "eth3");
	ids_of(f, ids, sizeof(ids));
	CHECK_MSG(f && !strcmp(ids, "8502"), "eth3 suspend: %s", f ? ids : "no finding");
	CHECK_STR(json_string_value(json_object_get(f, "severity")), "info");
	CHECK_MSG(strstr(msg(f), "might not have any discernible effect") && strstr(msg(f), "prefer_busy_poll"), "%s",
		  msg(f));
	CHECK(!find(r, "napi-defer-without-timeout", "eth4") && !find(r, "irq-suspend-without-defer", "eth4"));
	f = find(r, "napi-defer-without-timeout", "eth5");
	CHECK_STR(json_string_value(json_object_get(json_object_get(f, "evidence"), "scope")), "device");
	CHECK_MSG(strstr(msg(f), "/sys/class/net/eth5/napi_defer_hard_irqs is 5"), "%s", msg(f));
	CHECK(!find(r, "napi-defer-without-timeout", "eth8"));
	CHECK_INT(count_prefix(r, napi_ids), 3);
	json_decref(r);

	r = diagnose(t, NULL);
	CHECK_INT(count_prefix(r, napi_ids), 0);
	json_decref(r);
	hn_free(h);
	topo_free(t);
}

/* The queue->IRQ map the steering findings and the delivery check use:
 * the family's where it answers, the names otherwise. */
static void queue_map(void)
{
	nt_topology *t = topo_new();
	int eth1 = add_nic(t, "eth1", 0, false);
	add_irq(t, eth1, 100, 0, "0", "0");
	add_irq(t, eth1, 101, 1, "1", "1");
	nt_host_napi *h = hn_new(t);
	hn_nic(h, eth1, 0, 0, 0, 0);
	/* The kernel says RX queue 0 is served by the NAPI of IRQ 101, whatever
	 * the names say. */
	hn_napi(h, t, eth1, 8193, 0, 101, NULL, 0, 0, 0);
	hn_napi(h, t, eth1, 8194, 1, 100, NULL, 0, 0, 0);
	const char *src = NULL;
	CHECK_INT(nt_host_napi_queue_irq(h, t, &t->nics[eth1], 0, false, &src), 1);
	CHECK_STR(src, "netlink");
	CHECK_INT(nt_host_napi_irq_queue(h, t, &t->nics[eth1], 0), 1);
	/* No NAPI for TX queue 0 in the family's answer: no IRQ. */
	CHECK_INT(nt_host_napi_queue_irq(h, t, &t->nics[eth1], 0, true, &src), -1);
	CHECK_INT(nt_host_napi_queue_irq(NULL, t, &t->nics[eth1], 0, false, &src), 0);
	CHECK_STR(src, "irq-names");
	CHECK_INT(nt_host_napi_irq_queue(NULL, t, &t->nics[eth1], 0), -2);
	h->nics[eth1].netlink_map = false;
	CHECK_INT(nt_host_napi_queue_irq(h, t, &t->nics[eth1], 0, false, &src), 0);
	CHECK_STR(src, "irq-names");
	hn_free(h);
	topo_free(t);
}

int main(void)
{
	if (!mkdtemp(empty_root))
		return 1;
	threads();
	values();
	queue_map();
	rmdir(empty_root);
	TEST_MAIN_END();
}
