// SPDX-License-Identifier: Apache-2.0
// nettune's web view: the host map, findings, history and plan preview,
// drawn from the agent's read API. Hand-written, no framework and nothing
// loaded from elsewhere (the agent's Content-Security-Policy allows only its
// own files). The bearer token, when the agent wants one, is kept in
// sessionStorage: it lives as long as the tab and is sent only to this agent.
"use strict";

const TOKEN_KEY = "nettune.token";
// The sampling window of /v1/irqs/rates. Short, because the agent's route
// sleeps through it on one of its few server threads, and another request
// that lands on that thread waits for it.
const RATE_INTERVAL_MS = 500;
const RATE_PAUSE_MS = 2500; // between samples

const state = {
  topo: null, // /v1/topology
  cpuNode: new Map(), // cpu -> node id
  nicByName: new Map(),
  irqOwner: new Map(), // irq number (string) -> NIC name
  rates: null, // /v1/irqs/rates
  selected: null, // NIC name selected on the main map
  plan: null, // the last plan previewed: {body, result}
  pending: null, // what the confirm dialog asks about: {kind: "apply"} or {kind: "rollback", id, force}
  rateTimer: 0,
  countdownTimer: 0, // the open transaction's confirm countdown
};

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

// h("div.a.b", {attrs}, children...): one element; strings become text nodes
// (never HTML), so nothing from the host is ever parsed as markup.
function h(spec, attrs, ...kids) {
  const [tag, ...cls] = spec.split(".");
  const el = document.createElement(tag || "div");
  if (cls.length) el.className = cls.join(" ");
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const k of kids.flat()) {
    if (k === null || k === undefined || k === false) continue;
    el.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return el;
}

// ---- cpulists ("0-3,8,10-11") ----
function parseCpulist(s) {
  const out = [];
  if (!s) return out;
  for (const part of String(s).split(",")) {
    const m = part.trim().match(/^(\d+)(?:-(\d+))?$/);
    if (!m) continue;
    const a = Number(m[1]), b = m[2] === undefined ? a : Number(m[2]);
    for (let c = a; c <= b; c++) out.push(c);
  }
  return out;
}

// ---- the API ----
function token() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

class ApiError extends Error {
  constructor(status, problem) {
    super(problem && (problem.detail || problem.title) ? (problem.detail || problem.title) : `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

async function api(path, opts = {}) {
  const headers = { Accept: "application/json" };
  if (token()) headers.Authorization = `Bearer ${token()}`;
  if (opts.body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(path, {
    method: opts.method || "GET",
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    cache: "no-store",
  });
  const text = await r.text();
  let doc = null;
  try { doc = text ? JSON.parse(text) : null; } catch { doc = null; }
  if (!r.ok) throw new ApiError(r.status, doc);
  return doc;
}

function setStatus(msg, kind = "") {
  const s = $("#status");
  s.textContent = msg;
  s.className = kind;
}

function explain(e) {
  if (e instanceof ApiError) {
    if (e.status === 401) return `${e.message} — enter a token above`;
    if (e.status === 403) return `${e.message} — this needs a token with scope 'apply'`;
    const errs = e.problem && Array.isArray(e.problem.errors) ?
      e.problem.errors.map((x) => `${x.path}: ${x.message}`).join("; ") : "";
    // A previewed plan whose targets moved: which, and what they read now.
    const moved = e.problem && Array.isArray(e.problem.moved) ?
      e.problem.moved.map((x) => `${x.kind} ${x.target}: planned ${x.planned}, now ${x.now ?? "unreadable"}`).join("; ") : "";
    if (moved) return `${e.message}: ${moved} — preview the plan again`;
    return errs ? `${e.message}: ${errs}` : e.message;
  }
  return `cannot reach the agent (${e.message})`;
}

// ---- warnings: alike ones as one line ----
// The rule of cli/warn_group.h (the CLI's), written once more here: a
// warning's subject is what comes before its first ": " when that is one
// word (an interface) or an interface and a queue ("eth0 rx-3"); numbers in
// the rest (1, 1-17, 18-31,64-66, 101..116; not one inside a word such as
// bond0) are its values. Warnings with a subject whose texts are equal but
// for their values are one line: "eth0..eth7: TEXT", "every port of bond0
// (enos0..enos3): TEXT" when they are exactly a bond's ports, a value they
// share written once and one that differs as "[a | b | c]", one per line in
// the subjects' order (the first 4 and "… N in all" past 8). Identical
// warnings without a subject are one line, "(×N)". "Show all" lists each.
const WARN_SHOW_VALUES = 8;
const WARN_VALUE = /(?<![A-Za-z0-9_.])\d+(?:(?:-|\.\.)\d+)?(?:,\d+(?:(?:-|\.\.)\d+)?)*/g;

function warnParse(w) {
  const i = w.indexOf(": ");
  const head = i < 0 ? "" : w.slice(0, i);
  const subject = /^[A-Za-z0-9_.@-]+(?:[ /][rt]x-\d+)?$/.test(head) ? head : null;
  const text = subject === null ? w : w.slice(i + 2);
  const vals = [];
  const tmpl = text.replace(WARN_VALUE, (v) => { vals.push(v); return "\u0001"; });
  return { orig: w, subject, tmpl, vals };
}

// NAMES with runs of three or more consecutive numbers as "eth0..eth7"
// ("eth0 rx-0..rx-3": the last written from its queue).
function warnCompact(names) {
  const tail = (s) => { const m = s.match(/^(.*?)(\d+)$/); return m && m[2].length <= 9 ? [m[1], Number(m[2])] : [null, -1]; };
  const out = [];
  for (let i = 0; i < names.length;) {
    const [p, a] = tail(names[i]);
    let j = i + 1;
    while (p !== null && j < names.length) {
      const [q, b] = tail(names[j]);
      if (q !== p || b !== a + (j - i)) break;
      j++;
    }
    if (j - i >= 3) {
      const cut = Math.max(p.lastIndexOf(" "), p.lastIndexOf("/"));
      out.push(`${names[i]}..${names[j - 1].slice(cut + 1)}`);
      i = j;
    } else {
      out.push(names[i++]);
    }
  }
  return out.join(", ");
}

// WARNINGS (strings) grouped: [{text, lines: [the warnings it stands for]}].
// NICS (the topology's) name the bonds' ports.
function groupWarnings(warnings, nics) {
  const groups = [];
  for (const w of warnings.filter((x) => typeof x === "string")) {
    const it = warnParse(w);
    const g = groups.find((x) => (it.subject === null ?
      x.items[0].subject === null && x.items[0].orig === it.orig :
      x.items[0].subject !== null && x.items[0].tmpl === it.tmpl));
    if (g) g.items.push(it);
    else groups.push({ items: [it] });
  }
  const masterOf = new Map((nics || []).map((n) => [n.name, n.master || null]));
  return groups.map(({ items }) => {
    const lines = items.map((x) => x.orig);
    if (items.length === 1) return { text: items[0].orig, lines };
    if (items[0].subject === null) return { text: `${items[0].orig} (×${items.length})`, lines };
    const names = [...new Set(items.map((x) => x.subject))];
    const bond = names.length >= 2 ? masterOf.get(names[0]) : null;
    const ports = bond && names.every((n) => masterOf.get(n) === bond) ?
      [...masterOf.values()].filter((m) => m === bond).length : 0;
    let who = ports === names.length ? `every port of ${bond} (${warnCompact(names)})` : warnCompact(names);
    if (names.length < items.length) who += ` (${items.length} lines)`;
    let k = 0;
    const text = items[0].tmpl.replace(/\u0001/g, () => {
      const vs = items.map((x) => x.vals[k]);
      k++;
      if (vs.every((v) => v === vs[0])) return vs[0];
      const shown = vs.length <= WARN_SHOW_VALUES ? vs : vs.slice(0, WARN_SHOW_VALUES / 2);
      return `[${shown.join(" | ")}${shown.length < vs.length ? ` | … ${vs.length} in all` : ""}]`;
    });
    return { text: `${who}: ${text}`, lines };
  });
}

// A list of WARNINGS for people: one line per group, and when that is
// fewer lines than warnings, "Show all N warnings" with each as the agent
// sent it. Strings go in as text (h()), never as markup.
function warningsBlock(warnings, id) {
  const list = (warnings || []).filter((x) => typeof x === "string");
  const groups = groupWarnings(list, state.topo ? state.topo.nics : []);
  const ul = h("ul.warnings.grouped", { id, dataset: { count: list.length } },
    groups.map((g) => h("li", { dataset: { lines: g.lines.length } }, g.text)));
  if (groups.length === list.length) return [ul];
  return [ul, h("details.all-warnings", { id: id ? `${id}-all` : null },
    h("summary", {}, `Show all ${list.length} warnings (${groups.length} line${groups.length === 1 ? "" : "s"} above, alike ones together)`),
    h("ul.warnings", {}, list.map((w) => h("li", {}, w))))];
}

// ---- the host model ----
function indexTopology(topo) {
  state.topo = topo;
  state.cpuNode.clear();
  state.nicByName.clear();
  state.irqOwner.clear();
  for (const n of topo.numa_nodes)
    for (const c of parseCpulist(n.cpus)) state.cpuNode.set(c, n.id);
  for (const nic of topo.nics) {
    state.nicByName.set(nic.name, nic);
    for (const q of nic.irqs) state.irqOwner.set(String(q.irq), nic.name);
  }
}

// The CPUs an IRQ lands on: the effective affinity when the kernel reports
// one (where interrupts actually go), else the requested mask.
function irqCpus(q, placement) {
  if (placement && placement.has(String(q.irq))) return parseCpulist(placement.get(String(q.irq)));
  return parseCpulist(q.effective_affinity || q.affinity);
}

// Physical NICs drawn on the map: not loopback, not the bond device itself
// (its ports are drawn, framed by the bond).
function mapNics(topo) {
  return topo.nics.filter((n) => !(n.virtual && !n.bond) && !n.bond);
}

function nicOffNode(nic, placement) {
  if (nic.numa_node < 0) return 0;
  let off = 0;
  for (const q of nic.irqs)
    if (irqCpus(q, placement).some((c) => state.cpuNode.has(c) && state.cpuNode.get(c) !== nic.numa_node)) off++;
  return off;
}

// ---- drawing a map ----
// renderMap(container, {placement, highlight, selectable, id}): the nodes
// with their CPUs and NICs. PLACEMENT overrides IRQ affinity (irq -> cpulist),
// for a plan's after-state or a transaction's before/after. HIGHLIGHT is a
// set of IRQ numbers whose CPUs are marked. Returns the map's root.
function renderMap(container, opts = {}) {
  const topo = state.topo;
  const placement = opts.placement || null;
  const root = h("div.nodes", { role: "group", "aria-label": opts.label || "NUMA nodes" });
  const nics = mapNics(topo);
  const byNode = new Map();
  for (const nic of nics) {
    const k = nic.numa_node >= 0 && state.cpuNode.size ? nic.numa_node : -1;
    if (!byNode.has(k)) byNode.set(k, []);
    byNode.get(k).push(nic);
  }
  const nodeBox = (id, title, cores, nodeNics) => {
    const grid = h("div.cpus");
    for (const core of cores) {
      const threads = parseCpulist(core);
      const coreEl = h("div.core" + (threads.length > 1 ? ".smt" : ""), { title: threads.length > 1 ? `core: CPUs ${core}` : null });
      for (const c of threads)
        coreEl.append(h("div.cpu", { dataset: { cpu: c }, title: `CPU ${c}` }, String(c)));
      grid.append(coreEl);
    }
    const nicsEl = h("div.nics");
    const bondsSeen = new Map();
    for (const nic of nodeNics) {
      const btn = nicButton(nic, placement, opts);
      if (nic.master) {
        if (!bondsSeen.has(nic.master)) {
          const b = topo.bonds.find((x) => x.name === nic.master);
          const frame = h("div.bond", { dataset: { bond: nic.master } },
            h("div.bond-name", {}, `${nic.master}${b ? ` · ${b.mode} · ${b.xmit_hash_policy || ""}` : ""}`));
          bondsSeen.set(nic.master, frame);
          nicsEl.append(frame);
        }
        bondsSeen.get(nic.master).append(btn);
      } else {
        nicsEl.append(btn);
      }
    }
    return h("section.node", { dataset: { node: id }, "aria-label": title },
      h("h3", {}, title), grid, nicsEl);
  };
  for (const n of topo.numa_nodes) {
    const mem = n.has_memory ? `${(n.memory_total_kb / 1048576).toFixed(1)} GiB` : "no memory";
    const cores = Array.isArray(n.cores) && n.cores.length ? n.cores : parseCpulist(n.cpus).map(String);
    root.append(nodeBox(n.id, `Node ${n.id} · CPUs ${n.cpus || "?"} · ${mem}`, cores, byNode.get(n.id) || []));
  }
  if (!topo.numa_nodes.length) {
    // No NUMA information: one box with every online CPU.
    root.append(nodeBox(-1, `CPUs ${topo.cpus.online || "?"}`, parseCpulist(topo.cpus.online).map(String), byNode.get(-1) || []));
  } else if (byNode.has(-1)) {
    root.append(h("section.node.unknown", { dataset: { node: "unknown" }, "aria-label": "NICs of unknown node" },
      h("h3", {}, "NICs of unknown NUMA node"),
      h("div.nics", {}, byNode.get(-1).map((nic) => nicButton(nic, placement, opts)))));
  }
  container.replaceChildren(root);
  if (opts.highlight) markIrqs(root, opts.highlight, placement);
  // A before/after or planned map shows placement; live rates are the
  // present host's and belong on the main map only.
  if (!placement) applyRates(root);
  return root;
}

function nicButton(nic, placement, opts) {
  const off = nicOffNode(nic, placement);
  const speed = nic.speed_mbps > 0 ? (nic.speed_mbps >= 1000 ? `${nic.speed_mbps / 1000}G` : `${nic.speed_mbps}M`) : "";
  return h("button.nic" + (off ? ".has-off" : ""), {
    type: "button",
    dataset: { nic: nic.name },
    "aria-pressed": "false",
    title: `${nic.name}: ${nic.driver || "?"}, ${nic.irqs.length} IRQs, node ${nic.numa_node} (${nic.numa_node_source})`,
    onclick: () => selectNic(nic.name, opts.mapRoot ? opts.mapRoot() : null, placement),
  },
  h("span.nic-name", {}, nic.name),
  h("span.nic-meta", {}, [nic.driver, speed, `${nic.irqs.length} IRQ${nic.irqs.length === 1 ? "" : "s"}`].filter(Boolean).join(" · ")),
  off ? h("span.badge.off", { title: `${off} IRQs served off node ${nic.numa_node}` }, `✕ ${off} off-node`) : null);
}

// Mark the CPUs serving the IRQs in IRQS (numbers as strings) inside ROOT:
// .irq-cpu on the owner's node, .off-node elsewhere (with a visible ✕, not
// colour alone).
function markIrqs(root, irqs, placement) {
  for (const el of $$(".cpu.irq-cpu, .cpu.off-node", root)) {
    el.classList.remove("irq-cpu", "off-node");
    delete el.dataset.irqs;
  }
  const count = new Map();
  for (const irq of irqs) {
    const owner = state.nicByName.get(state.irqOwner.get(String(irq)));
    const q = owner && owner.irqs.find((x) => String(x.irq) === String(irq));
    if (!q) continue;
    for (const c of irqCpus(q, placement)) {
      const el = $(`.cpu[data-cpu="${c}"]`, root);
      if (!el) continue;
      const off = owner.numa_node >= 0 && state.cpuNode.get(c) !== owner.numa_node;
      el.classList.add(off ? "off-node" : "irq-cpu");
      count.set(c, (count.get(c) || 0) + 1);
      el.dataset.irqs = String(count.get(c));
    }
  }
}

// Mark the CPUs the agent's last delivery check saw serve interrupts of an
// IRQ placed (or allowed) elsewhere (the irq-delivered-elsewhere findings),
// and the CPU a NAPI thread it pinned last ran on outside its placement
// (napi-thread-elsewhere: that queue's packets were processed there).
// A "!" and the title say it, not colour alone.
function markDeliveredElsewhere(root, diag) {
  if (!root) return;
  for (const el of $$(".cpu.delivered-elsewhere", root)) {
    el.classList.remove("delivered-elsewhere");
    el.removeAttribute("data-elsewhere");
  }
  const notes = new Map();
  for (const f of (diag && diag.findings) || []) {
    if (f.id !== "irq-delivered-elsewhere" || !f.evidence) continue;
    for (const e of f.evidence.elsewhere || []) {
      const c = String(e.cpu);
      const text = `IRQ ${f.evidence.irq} (${f.subject}): ${e.count} interrupts here, outside its ${e.outside} ${f.evidence.placed || f.evidence.affinity || ""}`;
      notes.set(c, (notes.has(c) ? notes.get(c) + "\n" : "") + text);
    }
  }
  for (const f of (diag && diag.findings) || []) {
    const e = f.evidence;
    if (f.id !== "napi-thread-elsewhere" || !e || e.last_cpu === null || e.last_cpu === undefined) continue;
    // The kernel keeps a thread's last CPU only: one inside the placement
    // (its allowed CPUs changed) leaves nothing to mark; its finding says it.
    if (parseCpulist(e.placed).includes(e.last_cpu)) continue;
    const c = String(e.last_cpu);
    const text = `NAPI thread pid ${e.pid} (${e.target}): last ran here, outside its placement ${e.placed}` +
      (e.outside === "allowed" ? ` (allowed on ${e.allowed})` : "");
    notes.set(c, (notes.has(c) ? notes.get(c) + "\n" : "") + text);
  }
  for (const [c, text] of notes) {
    const el = $(`.cpu[data-cpu="${c}"]`, root);
    if (!el) continue;
    el.classList.add("delivered-elsewhere");
    el.dataset.elsewhere = "1";
    el.title = `CPU ${c}\n${text}`;
  }
}

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
    rssContexts(d.rss),
    rules.length ?
      h("ul.rules", {}, rules.map((r) => h("li", {},
        `loc ${r.location}: ${r.rule}` + (r.irq_cpus ? ` → CPU ${r.irq_cpus}` : "") + (r.by_nettune ? ` (nettune, transaction ${r.by_nettune})` : "")))) :
      null,
  ].filter(Boolean));
}

// The NIC's RSS contexts: each with the queues its table names and the
// rule locations sending flows to it; "not supported" with the driver's
// reason. The tooltip says how the list was found (the ioctl reads a
// context by id and cannot list them).
function rssContexts(rss) {
  const cx = rss && rss.contexts;
  if (!cx || cx.supported === null || cx.supported === undefined) return null;
  if (!cx.supported) return h("p.rss-contexts", { title: cx.reason || "" }, "RSS contexts: not supported");
  const list = cx.list || [];
  const text = list.length ? list.map((c) => `context ${c.id} → queues ${c.queues.join(",")}` +
    (c.rules.length ? ` (rules at ${c.rules.join(", ")})` : "")).join("; ") : "none found";
  return h("p.rss-contexts", { title: cx.listed_from || "" }, `RSS contexts: ${text}`);
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

// ---- live interrupt rates ----
function heat(v, max) {
  if (!v || !max) return "";
  // Log scale: a CPU taking 1% of the busiest one's interrupts still shows.
  const t = Math.min(1, Math.log10(1 + v) / Math.log10(1 + max));
  const l = 96 - Math.round(t * 46);
  return `hsl(28, 95%, ${l}%)`;
}

function applyRates(root) {
  const r = state.rates;
  if (!r) return;
  let max = 0, busiest = null;
  for (const c of r.cpus) if (c.irq_per_second > max) { max = c.irq_per_second; busiest = c.cpu; }
  const byCpu = new Map(r.cpus.map((c) => [c.cpu, c.irq_per_second]));
  for (const el of $$(".cpu", root)) {
    const v = byCpu.get(Number(el.dataset.cpu)) || 0;
    el.style.backgroundColor = heat(v, max);
    el.title = `CPU ${el.dataset.cpu}: ${fmtRate(v)} interrupts/s`;
    el.dataset.rate = String(v);
  }
  const legend = $("#legend");
  // Kept to one line (see app.css); the whole sentence is in the tooltip.
  const busy = busiest === null ? "no interrupts in the last sample" : `busiest: ${fmtRate(max)} interrupts/s on CPU ${busiest}`;
  legend.textContent = legend.title = `Interrupts/s per CPU; ${busy} (sampled over ${Math.round(r.interval_ms)} ms, refreshed every few seconds).`;
}

// One sampling loop at a time: a restart (a new token) ends the old one.
let pollGen = 0;
function startRates() {
  pollGen++;
  pollRates(pollGen);
}

async function pollRates(gen) {
  clearTimeout(state.rateTimer);
  if (gen !== pollGen) return;
  // A tab nobody looks at does not keep the agent sampling.
  if (document.hidden) {
    state.rateTimer = setTimeout(() => pollRates(gen), RATE_PAUSE_MS);
    return;
  }
  try {
    state.rates = await api(`/v1/irqs/rates?interval_ms=${RATE_INTERVAL_MS}`);
    applyRates($("#map"));
    for (const td of $$("#nic-detail td[data-rate]")) td.textContent = fmtRate(rateOf(Number(td.dataset.rate)));
  } catch (e) {
    setStatus(explain(e), "error");
  }
  if (gen === pollGen) state.rateTimer = setTimeout(() => pollRates(gen), RATE_PAUSE_MS);
}

// ---- findings ----
// Fix fragments merged as `nettune diagnose --fix-profile` merges them
// (diagnose/fix_profile.c): every section that is a list (irq_affinity,
// rings, bonds, rps, xps, ...) keeps one entry per interface, napi one per
// interface and queue list (each pins other queues' threads), sysctls first
// value wins, the first irqbalance mode.
function mergeFixes(findings, name) {
  const out = { name, description: "fixes for the findings of nettune diagnose" };
  const same = (key, d, e) => d.interface === e.interface && (key !== "napi" || d.queues === e.queues);
  for (const f of findings) {
    const fix = f.fix || {};
    for (const key of Object.keys(fix)) {
      if (!Array.isArray(fix[key])) continue;
      out[key] = out[key] || [];
      for (const e of fix[key])
        if (!e.interface || !out[key].some((d) => same(key, d, e))) out[key].push(e);
    }
    if (fix.sysctl) out.sysctl = { ...fix.sysctl, ...(out.sysctl || {}) };
    if (fix.irqbalance && !out.irqbalance) out.irqbalance = fix.irqbalance;
  }
  return out;
}

function renderFindings(doc) {
  const ul = $("#findings");
  const list = doc.findings || [];
  state.findings = list;
  $("#fix-all").hidden = !list.some((f) => f.fix);
  if (!list.length) {
    ul.replaceChildren(h("li.hint", {}, "No findings: nothing misplaced."));
    return;
  }
  // Findings of one kind are one card (eight ring-below-max on eight
  // ports say one thing eight times), in the order of their first one.
  const groups = new Map();
  for (const f of list) {
    if (!groups.has(f.id)) groups.set(f.id, []);
    groups.get(f.id).push(f);
  }
  ul.replaceChildren(...[...groups.values()].map((fs, i) => {
    const f = fs[0];
    const many = fs.length > 1;
    const fixDoc = many ? mergeFixes(fs, `fix-${f.id}`) : f.fix;
    const fix = fixDoc && f.fix ? JSON.stringify(many ? fixDoc : f.fix, null, 2) : null;
    // Folded: a host with many findings stays one screen of messages.
    const pre = fix ? h("details", {}, h("summary", {}, many ? "Fix of all of them (profile JSON)" : "Fix fragment (profile JSON)"),
      h("pre.fix", { tabindex: "0", "aria-label": "fix fragment" }, fix)) : null;
    const members = many ? h("details.members-box", {}, h("summary", {}, `each of the ${fs.length}`),
      h("ul.members", {}, fs.map((x) => h("li", { dataset: { subject: x.subject || "" } },
        h("button.link", { type: "button", onclick: () => showFinding(x) }, x.subject || "?"), ": ", x.message)))) : null;
    return h("li.finding.sev-" + (f.severity || "info"), { dataset: { finding: f.id, count: fs.length } },
      h("div.finding-head", {},
        h("span.sev", {}, f.severity || "info"), " ", h("code", {}, f.id), " ",
        h("b", {}, many ? fs.map((x) => x.subject).join(", ") : (f.subject || "")),
        many ? h("span.count", {}, `× ${fs.length}`) : null),
      h("p", {}, many ? `${fs.length} alike. The first: ${f.message}` : f.message),
      h("div.buttons", {},
        h("button", { type: "button", onclick: () => showFindings(fs) }, "Show on map"),
        fix ? h("button", { type: "button", onclick: (ev) => copy(fix, ev.currentTarget) }, "Copy fix") : null,
        fix ? h("button.preview-fix", { type: "button", onclick: () => previewProfile(many ? fixDoc : { name: `fix-${f.id}-${i}`, ...f.fix }) },
          many ? `Fix all ${fs.length}…` : "Preview fix") : null),
      members, pre);
  }));
}

// "Show on map" for a group: its NICs selected one after the other would
// keep only the last, so a group marks every NIC it names.
function showFindings(fs) {
  if (fs.length === 1) return showFinding(fs[0]);
  const root = $("#map .nodes");
  $("#map-section").scrollIntoView({ behavior: "instant", block: "start" });
  for (const el of $$(".finding-target", root)) el.classList.remove("finding-target");
  const irqs = [];
  for (const f of fs) {
    const nic = state.nicByName.get(f.subject);
    if (nic) {
      $(`.nic[data-nic="${CSS.escape(nic.name)}"]`, root)?.classList.add("finding-target");
      irqs.push(...nic.irqs.map((q) => String(q.irq)));
    }
  }
  markIrqs(root, irqs, null);
}

// The map elements a finding names: its NIC (subject or evidence), or its CPU.
function showFinding(f) {
  const root = $("#map .nodes");
  const ev = f.evidence || {};
  const nicName = state.nicByName.has(f.subject) ? f.subject : null;
  $("#map-section").scrollIntoView({ behavior: "instant", block: "start" });
  if (nicName) {
    if (state.selected === nicName) state.selected = null; // select, do not toggle off
    selectNic(nicName, root, null);
    $(`.nic[data-nic="${CSS.escape(nicName)}"]`, root)?.focus();
    return;
  }
  for (const el of $$(".finding-target", root)) el.classList.remove("finding-target");
  const cpus = ev.cpu !== undefined ? [ev.cpu] : parseCpulist(ev.cpus || ev.remote_cpus);
  for (const c of cpus) $(`.cpu[data-cpu="${c}"]`, root)?.classList.add("finding-target");
  for (const n of ev.nics || []) $(`.nic[data-nic="${CSS.escape(n)}"]`, root)?.classList.add("finding-target");
  if (Array.isArray(ev.irqs)) markIrqs(root, ev.irqs.map((q) => String(q.irq)), null);
}

async function copy(text, btn) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Plain http on a non-local address has no clipboard API: select the
    // text so Ctrl+C takes it.
    const pre = btn.closest("li").querySelector("pre");
    pre.closest("details").open = true;
    const range = document.createRange();
    range.selectNodeContents(pre);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
  }
  btn.textContent = "Copied";
  setTimeout(() => { btn.textContent = "Copy fix"; }, 1500);
}

function previewProfile(profile) {
  $("#plan-profile").value = "";
  $("#plan-text").value = JSON.stringify(profile, null, 2);
  $("#plan-section").scrollIntoView({ behavior: "instant", block: "start" });
  runPlan();
}

// ---- desired state and drift ----
async function loadDesired() {
  const box = $("#desired"), dbox = $("#drift");
  // The drift report says whether there is a desired state at all
  // (status "none"), so no 404 is asked for (a browser logs each one).
  const r = await api("/v1/drift");
  let d = null;
  if (r.status !== "none") {
    try {
      d = await api("/v1/desired");
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) throw e;
    }
  }
  const note = state.desiredNote;
  state.desiredNote = null;
  if (!d) {
    box.replaceChildren(h("p.hint", { id: "no-desired" }, "No desired state: the agent holds the host to nothing. " +
      "Apply a previewed plan with “Keep it as the desired state” (Plan preview, below), " +
      "nettune apply --persist or nettune desired set PROFILE.json sets one."), ...[note].filter(Boolean));
  } else {
    const name = d.profile_name || (d.profile && d.profile.name) || "(unnamed)";
    box.replaceChildren(h("p", { id: "desired-line" }, "Profile ", h("b", {}, name), ` set ${d.set}`,
      d.identity ? ` by ${d.identity}` : "", d.client ? ` (${d.client})` : "",
      d.source === "transaction" && d.txn_id ? ` from transaction #${d.txn_id}` : "",
      ` · policy ${d.policy === "repair" ? "repair drift as transactions" : "report drift only"}`),
    h("div.desired-actions", {},
      h("button", { type: "button", id: "desired-clear", onclick: () => askClearDesired(name) }, "Stop holding it…"),
      h("span.hint", {}, "changes nothing on the host; the agent stops reporting and repairing drift")), ...[note].filter(Boolean));
  }
  const targets = r.targets || [];
  const count = (st) => targets.filter((t) => t.state === st).length;
  const summary = h("p", { id: "drift-summary" }, "Drift: ", h("span.status." + r.status, {}, r.status),
    targets.length ? ` · ${targets.length} target${targets.length === 1 ? " differs" : "s differ"}: ` +
      ["drifted", "contested", "overridden"].map((st) => `${count(st)} ${st}`).join(", ") : "",
    r.last_check ? ` · checked ${r.last_check}` : "", r.message ? ` · ${r.message}` : "");
  if (!targets.length) {
    dbox.replaceChildren(summary);
    return;
  }
  dbox.replaceChildren(summary, h("table.grid.drift", {},
    h("thead", {}, h("tr", {}, ["kind", "target", "desired", "current", "state", "repairs", "why"].map((t) => h("th", {}, t)))),
    h("tbody", {}, targets.map((t) => {
      const c = t.culprit;
      const why = typeof c === "string" ? c : c && c.reason ? c.reason : changedBy(t.changed_by);
      return h("tr", { dataset: { state: t.state, target: t.target } },
        h("td", {}, t.kind), h("td", {}, t.target), h("td", {}, t.desired ?? "–"), h("td", {}, t.current ?? "–"),
        h("td", {}, h("span.status." + t.state, {}, t.state)), h("td.num", {}, String(t.repairs_in_window ?? 0)), h("td", {}, why));
    }))));
}

// The drift watcher's check count (-1 when it cannot be read), and a wait
// (at most 3 s) for the check the agent makes once the desired state was
// set (HELD) or cleared: the drift view then shows the new state, and
// GET /v1/desired is asked only when there is one.
async function driftChecks() {
  try { return (await api("/v1/drift")).checks; } catch { return -1; }
}

async function driftSettled(c0, held) {
  for (let i = 0; i < 15; i++) {
    let r = null;
    try { r = await api("/v1/drift"); } catch { return; }
    if (r.checks > c0 && (r.status !== "none") === held) return;
    await new Promise((res) => setTimeout(res, 200));
  }
}

// Clearing the desired state: asked first, as applying is.
function askClearDesired(name) {
  state.pending = { kind: "clear-desired" };
  $("#confirm-h").textContent = "Stop holding the desired state?";
  $("#confirm-text").textContent = `The agent stops holding the host to profile ${name}: drift is no longer ` +
    "reported or repaired. Nothing on the host changes; the change is recorded in the desired state's history.";
  $("#confirm-warnings").replaceChildren();
  $("#confirm-window-row").hidden = true;
  $("#confirm-persist-row").hidden = true;
  $("#confirm-apply").textContent = "Stop holding it";
  const d = $("#confirm-dialog");
  d.returnValue = "";
  d.showModal();
}

// DELETE /v1/desired, then the desired state and drift read again. A token
// without scope apply (403) or none (401) is said in the section itself.
async function doClearDesired() {
  try {
    const c0 = await driftChecks();
    await api("/v1/desired", { method: "DELETE" });
    await driftSettled(c0, false);
    state.desiredNote = h("p.ok", { id: "desired-msg" }, "The desired state is cleared: the agent holds the host to nothing.");
  } catch (e) {
    state.desiredNote = h("p.error", { id: "desired-msg" }, `Not cleared: ${explain(e)}`);
  }
  try {
    await loadDesired();
  } catch (e) {
    $("#desired").append(h("p.error", {}, explain(e)));
  }
}

// An overridden target's changed_by ({txn, client, identity}, or null) as
// words: "changed by transaction #7 (alice, 10.0.0.5)".
function changedBy(c) {
  if (!c || typeof c !== "object" || c.txn == null) return "";
  const who = [c.identity, c.client].filter((x) => x).join(", ");
  return `changed by transaction #${c.txn}${who ? ` (${who})` : ""}`;
}

// ---- history ----
async function loadHistory() {
  const doc = await api("/v1/transactions?limit=50");
  const list = [...doc.transactions].sort((a, b) => b.id - a.id);
  state.history = list;
  const tb = $("#history tbody");
  if (!list.length) {
    tb.replaceChildren(h("tr", {}, h("td.hint", { colspan: "7" }, "No transactions yet.")));
    return;
  }
  // A rollback applies no profile of its own: its row names what it rolled
  // back (that transaction's id and profile, and why that one was made or
  // failed, when it says). Those older than the list are asked for.
  const byId = new Map(list.map((t) => [t.id, t]));
  const missing = [...new Set(list.filter((t) => t.rollback_of && !byId.has(t.rollback_of)).map((t) => t.rollback_of))];
  await Promise.all(missing.map(async (id) => {
    try { byId.set(id, await api(`/v1/transactions/${id}`)); } catch { /* pruned: named by id alone */ }
  }));
  tb.replaceChildren(...list.map((t) => h("tr", { dataset: t.rollback_of ? { txn: t.id, rollbackOf: t.rollback_of } : { txn: t.id } },
    h("td", {}, h("button.link", { type: "button", onclick: () => openTxn(t.id), "aria-label": `open transaction ${t.id}` }, `#${t.id}`)),
    h("td", {}, h("span.status." + t.status, {}, t.status)),
    h("td.profile", {}, t.rollback_of ? rolledBackCell(t.rollback_of, byId.get(t.rollback_of)) : profileOf(t)),
    h("td.reason", {}, txnReason(t)),
    h("td", {}, t.created),
    h("td", {}, t.identity || t.client || ""),
    h("td.num", {}, String(t.nsteps)))));
}

function profileOf(t) {
  return t.profile_name || (t.profile && t.profile.name) || "";
}

// Why transaction T was made or how it ended, in words: the agent's own
// reason (boot, drift, link-up) and its error (a failure, or why it was
// reverted).
function txnReason(t) {
  const made = { boot: "holding the desired state at start", drift: "drift repair", "link-up": "repair after a link came up" };
  return [t.reason ? made[t.reason] || t.reason : null, t.error].filter(Boolean).join("; ");
}

// "rollback of #3 · local-irqs (its reason)", #3 opening that transaction.
function rolledBackCell(id, r) {
  const why = r ? txnReason(r) : "";
  return h("span.rollback-of", {}, "rollback of ",
    h("button.link", { type: "button", onclick: () => openTxn(id), "aria-label": `open rolled-back transaction ${id}` }, `#${id}`),
    r && profileOf(r) ? ` · ${profileOf(r)}` : "", why ? ` (${why})` : "");
}

function stepsTable(steps, withResult) {
  return h("table.grid.steps", {},
    h("thead", {}, h("tr", {}, ["kind", "target", "NIC", "before", "", "after", withResult ? "result" : null].filter((x) => x !== null).map((t) => h("th", {}, t)))),
    h("tbody", {}, steps.map((s) => h("tr", { dataset: { kind: s.kind, target: s.target } },
      h("td", {}, s.kind), h("td", {}, s.target), h("td", {}, s.interface || ""),
      h("td.before", {}, s.before ?? "–"), h("td", { "aria-hidden": "true" }, "→"), h("td.after", {}, s.after ?? "–"),
      withResult ? h("td", {}, h("span.status." + s.result, {}, s.result), s.error ? ` ${s.error}` : "") : null))));
}

// The delivery check the apply asked for (verify_window_ms): its verdict,
// and a row per NAPI thread the transaction pinned, where it ran in the
// window beside where it was placed (docs/api.md#the-delivery-check).
function deliveryBlock(d) {
  if (!d) return null;
  const threads = d.threads || [];
  const summary = `Delivery check over ${d.window_ms} ms` + (d.checks > 1 ? ` (${d.checks} windows)` : "") +
    `: ${d.verdict} · ${d.delivered} delivered, ${d.elsewhere} elsewhere, ${d.not_observed} not observed` +
    (d.confirmed ? " · confirmed on it" : "");
  return h("div.delivery", { id: "txn-delivery" }, h("h4", {}, "Where it was delivered"), h("p", {}, summary),
    threads.length ? threadsTable(threads) : null);
}

function threadsTable(threads) {
  const dash = (v) => (v === null || v === undefined ? "–" : String(v));
  return h("table.grid.threads", {},
    h("thead", {}, h("tr", {}, ["NAPI thread", "pid", "placed", "allowed", "ran ms", "last CPU", "verdict"].map((t) => h("th", {}, t)))),
    h("tbody", {}, threads.map((x) => h("tr", { dataset: { target: x.target } },
      h("td", { title: x.napi_id === null ? null : `NAPI ${x.napi_id}, ` + (x.irq === null ? "no IRQ" : `IRQ ${x.irq}: ${x.irq_verdict || "not in the check"}`) }, x.target),
      h("td", {}, dash(x.pid)), h("td", {}, x.placed), h("td", {}, dash(x.allowed)),
      h("td.num", {}, x.run_ns === null || x.run_ns === undefined ? "–" : (x.run_ns / 1e6).toFixed(1)),
      h("td", {}, dash(x.last_cpu)),
      h("td", { title: x.why || null },
        h("span.verdict." + x.verdict.replace(/ /g, "-"), {}, x.verdict + (x.outside ? ` (outside ${x.outside})` : "")))))));
}

// Placement of the IRQ steps' before- or after-values (irq -> cpulist).
function placementOf(steps, which) {
  const m = new Map();
  for (const s of steps) if (s.kind === "irq_affinity" && s[which]) m.set(String(s.target), s[which]);
  return m;
}

function beforeAfter(steps, prefix) {
  const irqSteps = steps.filter((s) => s.kind === "irq_affinity");
  if (!irqSteps.length) return null;
  const irqs = irqSteps.map((s) => String(s.target));
  const before = h("div.mini", { id: `${prefix}-before` });
  const after = h("div.mini", { id: `${prefix}-after` });
  const wrap = h("div.side-by-side", {},
    h("figure", {}, h("figcaption", {}, "Before"), before),
    h("figure", {}, h("figcaption", {}, "After"), after));
  const b = placementOf(steps, "before"), a = placementOf(steps, "after");
  let rb = null, ra = null;
  rb = renderMap(before, { placement: b, highlight: irqs, label: "before", mapRoot: () => rb });
  ra = renderMap(after, { placement: a, highlight: irqs, label: "after", mapRoot: () => ra });
  return wrap;
}

async function openTxn(id) {
  const box = $("#txn-detail");
  try {
    const t = await api(`/v1/transactions/${id}`);
    for (const tr of $$("#history tbody tr")) tr.classList.toggle("open", tr.dataset.txn === String(id));
    stopCountdown();
    const head = h("h3", { tabindex: "-1" }, `Transaction #${t.id} · `, h("span.status." + t.status, {}, t.status),
      ` · ${t.rollback_of ? `rollback of #${t.rollback_of}` : profileOf(t)}`);
    // A revert (not confirmed in time, or rolled back early on purpose) is
    // no failure: its error member says why, as a note.
    const reverted = t.status === "reverted";
    let rolled = null;
    if (t.rollback_of) {
      rolled = (state.history || []).find((x) => x.id === t.rollback_of) || null;
      if (!rolled) try { rolled = await api(`/v1/transactions/${t.rollback_of}`); } catch { rolled = null; }
    }
    const extra = [t.error ? h(reverted ? "p.hint" : "p.error", { id: "txn-reason" }, reverted ? `Reverted: ${t.error}` : t.error) : null,
      t.rollback_of ? h("p", { id: "txn-rollback-of" }, "This is a ", rolledBackCell(t.rollback_of, rolled), ".") : null];
    const ba = h("div");
    // What to do about it comes first (confirm before the deadline, roll
    // back), then what the agent warned of, then the steps.
    box.replaceChildren(head, txnActions(t), ...extra.filter(Boolean),
      ...((t.warnings || []).length ? warningsBlock(t.warnings, "txn-warnings") : []), stepsTable(t.steps, true),
      ...[deliveryBlock(t.delivery)].filter(Boolean), ba);
    if (t.status === "pending_confirm") startCountdown(t);
    const irqMoves = t.steps.some((s) => s.kind === "irq_affinity");
    if (irqMoves) {
      ba.append(h("button", {
        type: "button", id: "txn-maps",
        onclick: (ev) => { ev.currentTarget.replaceWith(h("h4", {}, "IRQ placement before and after") ); ba.append(beforeAfter(t.steps, "txn")); },
      }, "Show the map before and after"));
    }
    head.focus();
  } catch (e) {
    box.replaceChildren(h("p.error", {}, explain(e)));
  }
}

// What can be done with transaction T from here: confirm it while it
// waits, roll back an applied one (as a new transaction).
function txnActions(t) {
  const bar = h("div.txn-actions", { id: "txn-actions" });
  if (t.status === "pending_confirm") {
    bar.append(h("button", { type: "button", id: "txn-confirm", onclick: () => confirmTxn(t.id, t.persist) }, "Keep it (confirm)"),
      h("button", { type: "button", id: "txn-rollback", onclick: () => askRollback(t, false) }, "Roll back now…"),
      h("span.warning", { id: "txn-countdown", role: "timer" }, countdownText(t)));
    return bar;
  }
  // A rollback in the history already undid it: say by which, rather than
  // offer what the agent would refuse.
  const undone = (state.history || []).find((x) => x.rollback_of === t.id);
  if (undone)
    bar.append(h("span", { id: "txn-rolled-back" }, `Already rolled back, by `,
      h("button.link", { type: "button", onclick: () => openTxn(undone.id) }, `#${undone.id}`), "."));
  else if (t.status === "applied" && t.steps.length)
    bar.append(h("button", { type: "button", id: "txn-rollback", onclick: () => askRollback(t, false) }, "Roll back…"));
  return bar.childNodes.length ? bar : null;
}

// The confirm deadline in the viewer's own time zone, and the time left
// by this browser's clock (the agent's deadline is wall-clock time).
function countdownText(t) {
  const at = new Date(t.confirm_deadline_ms ?? Date.parse(t.confirm_deadline));
  if (Number.isNaN(at.getTime())) return `reverts at ${t.confirm_deadline} unless confirmed`;
  const when = at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" });
  const left = Math.ceil((at.getTime() - Date.now()) / 1000);
  if (left <= 0) return `the deadline (${when}) has passed: the agent reverts it unless it was confirmed`;
  const m = Math.floor(left / 60), sec = left % 60;
  return `reverts at ${when} unless confirmed: ${m ? `${m} min ` : ""}${sec} s left`;
}

function stopCountdown() {
  clearInterval(state.countdownTimer);
  state.countdownTimer = 0;
}

// Counts down each second while T's detail is shown; at the deadline, reads
// T again (the agent has reverted it, unless confirmed meanwhile).
function startCountdown(t) {
  stopCountdown();
  state.countdownTimer = setInterval(async () => {
    const el = $("#txn-countdown");
    if (!el) return stopCountdown();
    el.textContent = countdownText(t);
    if (Date.now() > (t.confirm_deadline_ms ?? Date.parse(t.confirm_deadline)) + 1500) {
      stopCountdown();
      if ($("#txn-detail h3")?.textContent.startsWith(`Transaction #${t.id} ·`)) {
        await refresh();
        await openTxn(t.id);
      }
    }
  }, 1000);
}

async function confirmTxn(id, persist) {
  try {
    const c0 = persist ? await driftChecks() : -1;
    const t = await api(`/v1/transactions/${id}/confirm`, { method: "POST", body: {} });
    // Confirmed with persist: it is the desired state now.
    if (persist && t.status === "applied") await driftSettled(c0, true);
    setStatus(`Transaction #${t.id}: ${t.status}`);
  } catch (e) {
    setStatus(`Not confirmed: ${explain(e)}`, "error");
  }
  await refresh();
  await openTxn(id);
}

function askRollback(t, force) {
  state.pending = { kind: "rollback", id: t.id, force };
  $("#confirm-h").textContent = force ? `Roll back #${t.id} anyway?` : `Roll back transaction #${t.id}?`;
  $("#confirm-text").textContent = t.status === "pending_confirm" ?
    `Put back the ${t.steps.length} step${t.steps.length === 1 ? "" : "s"} of #${t.id} (${profileOf(t) || "profile"}) now, ` +
      "without waiting for its confirm deadline: it ends reverted." :
    `Put back the ${t.steps.length} step${t.steps.length === 1 ? "" : "s"} of #${t.id}` +
    ` (${profileOf(t) || "profile"}) as a new transaction, journaled like any other.` +
    (force ? " A later transaction changed some of the same targets: those go back too." : "");
  $("#confirm-warnings").replaceChildren();
  $("#confirm-window-row").hidden = true;
  $("#confirm-persist-row").hidden = true;
  $("#confirm-apply").textContent = "Roll back";
  const d = $("#confirm-dialog");
  d.returnValue = "";
  d.showModal();
}

async function doRollback(p) {
  const box = $("#txn-detail");
  try {
    const t = await api(`/v1/transactions/${p.id}/rollback`, { method: "POST", body: p.force ? { force: true } : {} });
    await refresh();
    await openTxn(t.id);
    // One waiting for confirmation is reverted in place (the same id).
    $("#txn-detail").prepend(h("p.ok", {}, t.id === p.id ? `Transaction #${t.id}: ${t.status} before its confirm deadline` :
      `Transaction #${t.id} (rollback of #${p.id}): ${t.status}`));
  } catch (e) {
    const later = e instanceof ApiError && e.problem ? e.problem.later : null;
    const msg = h("p.error", { id: "rollback-error" }, `Not rolled back: ${explain(e)}`);
    // Rolled back already: the agent's sentence says by which, and no force helps.
    if (later && e.problem.rolled_back_by == null) {
      let t = null;
      try { t = await api(`/v1/transactions/${later}`); } catch { t = null; }
      if (t && t.rollback_of === p.id) msg.append(` — #${p.id} is already rolled back, by #${later}.`);
      else msg.append(" ", h("button", { type: "button", id: "rollback-force", onclick: async () => askRollback(await api(`/v1/transactions/${p.id}`), true) }, "Roll back anyway…"));
    }
    box.prepend(msg);
  }
}

// ---- plan preview ----
async function loadProfiles() {
  const doc = await api("/v1/profiles");
  const sel = $("#plan-profile");
  const cur = sel.value;
  sel.replaceChildren(h("option", { value: "" }, "(paste below)"),
    ...doc.profiles.map((p) => h("option", { value: p.name }, p.description ? `${p.name} — ${p.description}` : p.name)));
  sel.value = cur;
}

async function pickProfile() {
  const name = $("#plan-profile").value;
  if (!name) return;
  try {
    const p = await api(`/v1/profiles/${encodeURIComponent(name)}`);
    $("#plan-text").value = JSON.stringify(p, null, 2);
  } catch (e) {
    $("#plan-result").replaceChildren(h("p.error", {}, explain(e)));
  }
}

function planBody() {
  const name = $("#plan-profile").value;
  const text = $("#plan-text").value.trim();
  if (name && !text) return { ref: { profile_name: name }, label: `stored profile '${name}'` };
  let p;
  try {
    p = JSON.parse(text);
  } catch (e) {
    throw new Error(`the profile is not valid JSON: ${e.message}`);
  }
  return { ref: { profile: p }, profile: p, label: `profile '${p && p.name ? p.name : "(unnamed)"}'` };
}

async function runPlan() {
  const out = $("#plan-result");
  $("#plan-apply").disabled = true;
  state.plan = null;
  let body;
  try {
    body = planBody();
  } catch (e) {
    out.replaceChildren(h("p.error", {}, e.message));
    return;
  }
  try {
    const res = await api("/v1/plan", { method: "POST", body: body.profile || body.ref });
    state.plan = { body, res };
    const parts = [h("h3", { tabindex: "-1" }, `Plan: ${res.steps.length} step${res.steps.length === 1 ? "" : "s"}`)];
    if ((res.warnings || []).length) parts.push(...warningsBlock(res.warnings, "plan-warnings"));
    const reserved = Object.entries(res.reserved || {});
    if (reserved.length) parts.push(h("p", {}, "Kept free for applications: " + reserved.map(([k, v]) => `${k} ${v}`).join(", ")));
    if (!res.steps.length) parts.push(h("p.hint", {}, "Nothing to change: the host already matches."));
    else parts.push(stepsTable(res.steps, false));
    const irqs = res.steps.filter((s) => s.kind === "irq_affinity").map((s) => String(s.target));
    if (irqs.length) {
      parts.push(h("h4", {}, "The map after the plan (the IRQs it moves)"));
      const m = h("div.mini.after-map", { id: "plan-map" });
      parts.push(m);
      out.replaceChildren(...parts);
      let r = null;
      r = renderMap(m, { placement: placementOf(res.steps, "after"), highlight: irqs, label: "after the plan", mapRoot: () => r });
    } else {
      out.replaceChildren(...parts);
    }
    $("#plan-apply").disabled = res.steps.length === 0;
    parts[0].focus();
  } catch (e) {
    out.replaceChildren(h("p.error", {}, explain(e)));
  }
}

function askApply() {
  if (!state.plan) return;
  const d = $("#confirm-dialog");
  state.pending = { kind: "apply" };
  $("#confirm-h").textContent = "Apply this profile?";
  $("#confirm-apply").textContent = "Apply";
  $("#confirm-window-row").hidden = false;
  $("#confirm-persist-row").hidden = false;
  $("#confirm-persist").checked = false;
  $("#confirm-text").textContent = `Apply ${state.plan.body.label} to ${state.topo.host.hostname}: ` +
    `${state.plan.res.steps.length} steps, journaled and rolled back on failure.`;
  const warnings = state.plan.res.warnings || [];
  $("#confirm-warnings").replaceChildren(...(warnings.length ? warningsBlock(warnings, "confirm-warning-lines") : []));
  d.returnValue = "";
  d.showModal();
}

async function onConfirmClose() {
  const p = state.pending;
  state.pending = null;
  if ($("#confirm-dialog").returnValue !== "apply" || !p) return;
  if (p.kind === "rollback") return doRollback(p);
  if (p.kind === "clear-desired") return doClearDesired();
  if (!state.plan) return;
  const out = $("#plan-result");
  // By default as `nettune try`: the agent puts it back unless confirmed.
  // The plan previewed, by its id: exactly its steps, or nothing if a
  // target moved since (the agent answers 409 naming them). Used once.
  const body = state.plan.res.id ? { plan_id: state.plan.res.id } : { ...state.plan.body.ref };
  const secs = Number($("#confirm-seconds").value);
  if ($("#confirm-window").checked && secs >= 1 && secs <= 86400) body.confirm_timeout_s = Math.round(secs);
  // Held as the desired state once applied (with a window: once confirmed).
  if ($("#confirm-persist").checked) body.persist = true;
  try {
    $("#plan-apply").disabled = true;
    const c0 = body.persist ? await driftChecks() : -1;
    const t = await api("/v1/transactions?steps=failed", { method: "POST", body });
    if (body.persist && t.status === "applied") await driftSettled(c0, true);
    const held = !body.persist ? "" : t.status === "applied" ? "; it is now the desired state" :
      t.status === "pending_confirm" ? "; it becomes the desired state once confirmed" : "";
    out.prepend(h("p.ok", {}, `Transaction #${t.id}: ${t.status}${held}`));
    await refresh();
    await openTxn(t.id);
  } catch (e) {
    out.prepend(h("p.error", {}, `Not applied: ${explain(e)}`));
  }
}

// ---- start ----
async function refresh() {
  const t0 = performance.now();
  try {
    const topo = await api("/v1/topology");
    indexTopology(topo);
    $("#host-name").textContent = `· ${topo.host.hostname} · ${topo.host.kernel}${topo.host.live ? "" : ` · root ${topo.host.root}`}`;
    document.title = `nettune · ${topo.host.hostname}`;
    renderMap($("#map"), { mapRoot: () => $("#map .nodes") });
    if (state.selected && state.nicByName.has(state.selected)) {
      const s = state.selected;
      state.selected = null;
      selectNic(s, null, null);
    } else if (state.selected) {
      state.selected = null; // gone from the host
      showDetailPanel(false);
    }
    // Measured for the page's users and its tests: fetching and drawing the map.
    document.body.dataset.mapMs = String(Math.round(performance.now() - t0));
    // And since navigation started (HTML, script, topology, drawing), once.
    if (!document.body.dataset.mapAt) document.body.dataset.mapAt = String(Math.round(performance.now()));
    const [diag] = await Promise.all([api("/v1/diagnostics"), loadHistory(), loadProfiles(), loadDesired()]);
    renderFindings(diag);
    markDeliveredElsewhere($("#map .nodes"), diag);
    setStatus(`Updated ${new Date().toLocaleTimeString()}`);
    document.body.dataset.ready = "1";
    return true;
  } catch (e) {
    setStatus(explain(e), "error");
    return false;
  }
}

function start() {
  $("#token").value = token() ? "••••••••" : "";
  $("#token-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const v = $("#token").value.trim();
    if (v && v !== "••••••••") sessionStorage.setItem(TOKEN_KEY, v);
    $("#token").value = token() ? "••••••••" : "";
    if (await refresh()) startRates();
  });
  $("#token-forget").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    $("#token").value = "";
    setStatus("Token forgotten.");
  });
  $("#plan-run").addEventListener("click", runPlan);
  $("#fix-all").addEventListener("click", () => previewProfile(mergeFixes(state.findings || [], "diagnose-fixes")));
  $("#plan-apply").addEventListener("click", askApply);
  $("#plan-profile").addEventListener("change", pickProfile);
  $("#confirm-dialog").addEventListener("close", onConfirmClose);
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape" && state.selected && !$("#confirm-dialog").open) selectNic(state.selected, null, null);
  });
  $("#reload").addEventListener("click", refresh);
  refresh().then((ok) => { if (ok) startRates(); });
}

document.addEventListener("DOMContentLoaded", start);
