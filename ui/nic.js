// SPDX-License-Identifier: Apache-2.0
// nettune's web view: the NIC panel beside the map (a NIC selected: its queues,
// IRQs, NAPI threads, RSS contexts, flow rules and link). Loaded after app.js
// (index.html), whose helpers (h, $, api, state) it uses; its functions are
// called from there once the page has loaded.

function selectNic(name, root, placement) {
  root = root || $("#map .nodes");
  // A new selection replaces what a finding marked.
  for (const el of $$(".finding-target", root)) el.classList.remove("finding-target");
  const nic = state.nicByName.get(name);
  const same = root === $("#map .nodes") && state.selected === name;
  for (const b of $$(".nic", root)) b.setAttribute("aria-pressed", String(!same && b.dataset.nic === name));
  if (root === $("#map .nodes")) {
    state.selected = same ? null : name;
    if (same) {
      markIrqs(root, [], null);
      showDetailPanel(false);
      return;
    }
    showNicDetail(nic);
  }
  markIrqs(root, nic.irqs.map((q) => String(q.irq)), placement);
}

function rateOf(irq) {
  if (!state.rates) return null;
  const r = state.rates.irqs.find((x) => x.irq === irq);
  return r ? r.per_second : null;
}

function fmtRate(v) {
  if (v === null || v === undefined) return "–";
  return v >= 10000 ? `${(v / 1000).toFixed(0)}k` : v >= 1000 ? `${(v / 1000).toFixed(1)}k` : v.toFixed(0);
}

// The NIC panel beside the map, only while a NIC is selected: without one
// the map takes the whole width rather than sit beside an empty panel.
function showDetailPanel(on) {
  const aside = $("#nic-detail");
  aside.hidden = !on;
  if (!on) aside.replaceChildren();
  $(".map-layout").classList.toggle("no-detail", !on);
}

function showNicDetail(nic) {
  showDetailPanel(true);
  const rows = nic.irqs.map((q) => {
    const cpus = irqCpus(q, null);
    const off = nic.numa_node >= 0 && cpus.some((c) => state.cpuNode.get(c) !== nic.numa_node);
    const nodes = [...new Set(cpus.map((c) => state.cpuNode.get(c)))].join(",");
    return h("tr" + (off ? ".off-node" : ""), { dataset: { irq: q.irq } },
      h("td", {}, String(q.irq)),
      h("td", { title: q.name }, q.name.replace(/@.*$/, "")),
      h("td", {}, q.queue === null ? "–" : String(q.queue)),
      h("td", {}, q.effective_affinity || q.affinity || "?"),
      h("td", {}, nodes + (off ? " ✕ off-node" : "")),
      h("td.num", { dataset: { rate: q.irq } }, fmtRate(rateOf(q.irq))));
  });
  const src = nic.numa_node >= 0 ? `node ${nic.numa_node} (${nic.numa_node_source}), local CPUs ${nic.local_cpus || "?"}` : "node unknown";
  // Through h(), which leaves out absent parts (replaceChildren would print "null").
  $("#nic-detail").replaceChildren(h("div", {},
    h("h3", {}, nic.name),
    h("p", {}, [nic.driver, nic.pci_address, src, nic.master ? `port of ${nic.master}` : null].filter(Boolean).join(" · ")),
    nic.rings ? h("p", {}, `rings rx ${nic.rings.rx}/${nic.rings.rx_max}, tx ${nic.rings.tx}/${nic.rings.tx_max}`) : null,
    nic.irqs.length ?
      h("table.grid.irqs", {}, h("thead", {}, h("tr", {}, ["IRQ", "name", "queue", "CPU", "node", "per s"].map((t) => h("th", {}, t)))),
        h("tbody", {}, rows)) :
      h("p.hint", {}, "No IRQs of its own."),
    h("div.packets", {}, h("p.hint", {}, "Reading its queues…"))));
  loadNicPackets(nic.name);
}

// The per-queue part (GET /v1/nics/{name}: read for one NIC only, never in
// the topology): for each RX queue the CPU its interrupt lands on beside
// the CPUs that process its packets (RPS, or the interrupt's CPU without
// it) and its share of the RSS table; the flow rules with the CPU behind
// their queue; the link's MTU, queue length, root qdisc and offloads.
async function loadNicPackets(name) {
  let d;
  try {
    d = await api(`/v1/nics/${encodeURIComponent(name)}`);
  } catch (e) {
    d = { error: explain(e) };
  }
  const box = $("#nic-detail .packets");
  // Another NIC was selected meanwhile: its own request fills the panel.
  if (!box || state.selected !== name) return;
  if (d.error) {
    box.replaceChildren(h("p.hint", {}, `Queues not read: ${d.error}`));
    return;
  }
  const link = [
    d.mtu !== undefined && d.mtu !== null ? `MTU ${d.mtu}` + (d.mtu_max ? ` (${d.mtu_min}..${d.mtu_max})` : "") : null,
    d.txqueuelen !== undefined && d.txqueuelen !== null ? `txqueuelen ${d.txqueuelen}` : null,
    d.qdisc ? `qdisc ${d.qdisc}` + (d.qdisc_kinds && d.qdisc_kinds !== d.qdisc ? ` (${d.qdisc_kinds})` : "") : null,
    d.pause ? `pause rx ${d.pause.rx ? "on" : "off"}, tx ${d.pause.tx ? "on" : "off"}` : null,
  ].filter(Boolean).join(" · ");
  const feats = d.features ? Object.entries(d.features).filter(([, f]) => !f.fixed)
    .map(([k, f]) => `${k} ${f.on ? "on" : "off"}`).join(", ") : "";
  const rss = d.rss && d.rss.indir_size ? d.rss : null;
  const rx = (d.queues && d.queues.rx) || [];
  const napis = new Map((d.napi || []).map((n) => [n.id, n]));
  const rows = rx.map((q) => {
    const irqOn = q.effective_cpus || q.irq_cpus || "–";
    const packetsOn = q.rps_cpus ? `${q.rps_cpus} (RPS)` : irqOn;
    const w = rss && rss.weights ? rss.weights[q.queue] || 0 : null;
    return h("tr", { dataset: { queue: q.queue } },
      h("td", {}, `rx-${q.queue}`),
      h("td", {}, q.irq === null || q.irq === undefined ? "–" : String(q.irq)),
      h("td", {}, irqOn),
      napiCell(napis.get(q.napi_id), d.name),
      h("td", {}, packetsOn),
      h("td.num", {}, w === null ? "–" : `${Math.round((100 * w) / rss.indir_size)}%`));
  });
  const rules = d.flows && d.flows.rules ? d.flows.rules : [];
  // replaceChildren would print an absent part as "null": leave those out.
  box.replaceChildren(...[
    link ? h("p", {}, link) : null,
    feats ? h("p", { title: "offload features the driver can change" }, `offloads: ${feats}`) : null,
    netlinkParams("ring parameters", d.ring_params),
    netlinkParams("coalescing", d.coalesce_params),
    napiLine(d),
    rows.length ?
      h("table.grid.queues", {},
        h("thead", {}, h("tr", {}, ["RX queue", "IRQ", "interrupt on", "NAPI thread may run on", "packets on", "RSS share"].map((t) => h("th", {}, t)))),
        h("tbody", {}, rows)) :
      h("p.hint", {}, "No per-queue files."),
    rssXfrm(rss),
    rssContexts(d.rss),
    rules.length ?
      h("ul.rules", {}, rules.map((r) => h("li", {},
        `loc ${r.location}: ${r.rule}` + (r.irq_cpus ? ` → CPU ${r.irq_cpus}` : "") + (r.by_nettune ? ` (nettune, transaction ${r.by_nettune})` : "")))) :
      null,
  ].filter(Boolean));
}

// The NIC's RSS contexts: each with the queues its table names, its input
// transformation when it has one, and the rule locations sending flows to
// it; "not supported" with the driver's reason. The tooltip says how the
// list was found (listed_from: the kernel's own list over ethtool netlink,
// or, through the ioctl, which cannot list them, the ids the rules name).
function rssContexts(rss) {
  const cx = rss && rss.contexts;
  if (!cx || cx.supported === null || cx.supported === undefined) return null;
  if (!cx.supported) return h("p.rss-contexts", { title: cx.reason || "" }, "RSS contexts: not supported");
  const list = cx.list || [];
  const text = list.length ? list.map((c) => `context ${c.id} → queues ${c.queues.join(",")}` +
    (c.input_xfrm && c.input_xfrm !== "none" ? ` (${c.input_xfrm})` : "") +
    (c.rules.length ? ` (rules at ${c.rules.join(", ")})` : "")).join("; ") : "none found";
  return h("p.rss-contexts", { title: cx.listed_from || "" }, `RSS contexts: ${text}`);
}

// The input transformation of the NIC's own RSS (symmetric hashing), or
// nothing on a kernel without one (null: before 6.8).
function rssXfrm(rss) {
  if (!rss || typeof rss.input_xfrm !== "string") return null;
  return h("p.rss-xfrm", { title: "ethtool -x: RSS input transformation" }, `RSS input transformation: ${rss.input_xfrm}`);
}

// The CPUs a queue's NAPI thread may run on (its Cpus_allowed_list), or
// "softirq" when its NAPI is not threaded (the work then runs where the
// interrupt fired), "–" when the kernel does not say.
function napiCell(n, ifname) {
  if (!n) return h("td", { title: "the kernel names no NAPI for this queue" }, "–");
  if (n.thread_cpus) {
    return h("td.napi-thread", { title: `thread napi/${ifname}-${n.id} (pid ${n.pid})` +
      (n.last_cpu !== null ? `, last ran on CPU ${n.last_cpu}` : "") }, n.thread_cpus);
  }
  if (n.threaded === false) return h("td", { title: `NAPI ${n.id} runs in softirq, where its interrupt fired` }, "softirq");
  return h("td", {}, "–");
}

// The ring or coalescing parameters only ethtool netlink reaches: each
// supported one with its value (and maximum), then those the NIC or kernel
// lacks, with the reasons in the tooltip.
function netlinkParams(title, params) {
  if (!params) return null;
  const entries = Object.entries(params);
  // A DIM profile's levels as "1/256 8/256 ..." (usec/pkts/comps the driver keeps).
  const levels = (v) => v.map((l) => ["usec", "pkts", "comps"].filter((k) => k in l).map((k) => l[k]).join("/")).join(" ");
  const shown = entries.filter(([, f]) => f.supported).map(([k, f]) =>
    `${k} ${f.value === true ? "on" : f.value === false ? "off" : Array.isArray(f.value) ? levels(f.value) : f.value}` +
    (f.max !== undefined ? ` (max ${f.max})` : ""));
  const missing = entries.filter(([, f]) => !f.supported);
  const text = `${title}: ${shown.length ? shown.join(", ") : "none supported"}` +
    (missing.length ? `; not supported: ${missing.map(([k]) => k).join(", ")}` : "");
  return h("p.netlink-params", { title: missing.map(([k, f]) => `${k}: ${f.reason}`).join("\n") }, text);
}

// The device's NAPI values and where the queues' IRQs came from.
function napiLine(d) {
  if (!d.irq_source) return null;
  const parts = [
    d.threaded === null || d.threaded === undefined ? null : `threaded NAPI ${d.threaded ? "on" : "off"}`,
    d.napi_defer_hard_irqs === null || d.napi_defer_hard_irqs === undefined ? null : `napi_defer_hard_irqs ${d.napi_defer_hard_irqs}`,
    d.gro_flush_timeout_ns === null || d.gro_flush_timeout_ns === undefined ? null : `gro_flush_timeout ${d.gro_flush_timeout_ns} ns`,
    `${(d.napi || []).length} NAPI`,
    d.irq_source === "netlink" ? "queue IRQs from the kernel (netdev netlink)" : "queue IRQs from IRQ names",
  ].filter(Boolean).join(" · ");
  return h("p.napi", {}, parts);
}
