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
  rateTimer: 0,
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
    return errs ? `${e.message}: ${errs}` : e.message;
  }
  return `cannot reach the agent (${e.message})`;
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
      $("#nic-detail").replaceChildren(h("p.hint", {}, "Select a NIC."));
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

function showNicDetail(nic) {
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
      h("p.hint", {}, "No IRQs of its own.")));
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
  let max = 0;
  for (const c of r.cpus) max = Math.max(max, c.irq_per_second);
  const byCpu = new Map(r.cpus.map((c) => [c.cpu, c.irq_per_second]));
  for (const el of $$(".cpu", root)) {
    const v = byCpu.get(Number(el.dataset.cpu)) || 0;
    el.style.backgroundColor = heat(v, max);
    el.title = `CPU ${el.dataset.cpu}: ${fmtRate(v)} interrupts/s`;
    el.dataset.rate = String(v);
  }
  const legend = $("#legend");
  // Kept to one line (see app.css); the whole sentence is in the tooltip.
  legend.textContent = legend.title = `Interrupts/s, busiest CPU ${fmtRate(max)} (sampled over ${Math.round(r.interval_ms)} ms, refreshed every few seconds).`;
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
function renderFindings(doc) {
  const ul = $("#findings");
  const list = doc.findings || [];
  if (!list.length) {
    ul.replaceChildren(h("li.hint", {}, "No findings: nothing misplaced."));
    return;
  }
  ul.replaceChildren(...list.map((f, i) => {
    const fix = f.fix ? JSON.stringify(f.fix, null, 2) : null;
    // Folded: a host with many findings stays one screen of messages.
    const pre = fix ? h("details", {}, h("summary", {}, "Fix fragment (profile JSON)"),
      h("pre.fix", { tabindex: "0", "aria-label": "fix fragment" }, fix)) : null;
    return h("li.finding.sev-" + (f.severity || "info"), { dataset: { finding: f.id } },
      h("div.finding-head", {},
        h("span.sev", {}, f.severity || "info"), " ", h("code", {}, f.id), " ", h("b", {}, f.subject || "")),
      h("p", {}, f.message),
      h("div.buttons", {},
        h("button", { type: "button", onclick: () => showFinding(f) }, "Show on map"),
        fix ? h("button", { type: "button", onclick: (ev) => copy(fix, ev.currentTarget) }, "Copy fix") : null,
        fix ? h("button", { type: "button", onclick: () => previewFix(f, i) }, "Preview fix") : null),
      pre);
  }));
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

function previewFix(f, i) {
  $("#plan-profile").value = "";
  $("#plan-text").value = JSON.stringify({ name: `fix-${f.id}-${i}`, ...f.fix }, null, 2);
  $("#plan-section").scrollIntoView({ behavior: "instant", block: "start" });
  runPlan();
}

// ---- history ----
async function loadHistory() {
  const doc = await api("/v1/transactions?limit=50");
  const list = [...doc.transactions].sort((a, b) => b.id - a.id);
  const tb = $("#history tbody");
  if (!list.length) {
    tb.replaceChildren(h("tr", {}, h("td.hint", { colspan: "6" }, "No transactions yet.")));
    return;
  }
  tb.replaceChildren(...list.map((t) => h("tr", { dataset: { txn: t.id } },
    h("td", {}, h("button.link", { type: "button", onclick: () => openTxn(t.id), "aria-label": `open transaction ${t.id}` }, `#${t.id}`)),
    h("td", {}, h("span.status." + t.status, {}, t.status)),
    h("td", {}, t.profile_name || ""),
    h("td", {}, t.created),
    h("td", {}, t.identity || t.client || ""),
    h("td.num", {}, String(t.nsteps)))));
}

function stepsTable(steps, withResult) {
  return h("table.grid.steps", {},
    h("thead", {}, h("tr", {}, ["kind", "target", "NIC", "before", "", "after", withResult ? "result" : null].filter((x) => x !== null).map((t) => h("th", {}, t)))),
    h("tbody", {}, steps.map((s) => h("tr", { dataset: { kind: s.kind, target: s.target } },
      h("td", {}, s.kind), h("td", {}, s.target), h("td", {}, s.interface || ""),
      h("td.before", {}, s.before ?? "–"), h("td", { "aria-hidden": "true" }, "→"), h("td.after", {}, s.after ?? "–"),
      withResult ? h("td", {}, h("span.status." + s.result, {}, s.result), s.error ? ` ${s.error}` : "") : null))));
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
    const head = h("h3", { tabindex: "-1" }, `Transaction #${t.id} · `, h("span.status." + t.status, {}, t.status),
      ` · ${t.profile_name || ""}`);
    const extra = [t.error ? h("p.error", {}, t.error) : null,
      t.rollback_of ? h("p", {}, `Rolls back #${t.rollback_of}`) : null,
      ...(t.warnings || []).map((w) => h("p.warning", {}, w))];
    const ba = h("div");
    box.replaceChildren(head, ...extra.filter(Boolean), stepsTable(t.steps, true), ba);
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
    for (const w of res.warnings || []) parts.push(h("p.warning", {}, w));
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
  $("#confirm-text").textContent = `Apply ${state.plan.body.label} to ${state.topo.host.hostname}: ` +
    `${state.plan.res.steps.length} steps, journaled and rolled back on failure.`;
  d.returnValue = "";
  d.showModal();
}

async function onConfirmClose() {
  if ($("#confirm-dialog").returnValue !== "apply" || !state.plan) return;
  const out = $("#plan-result");
  try {
    const t = await api("/v1/transactions", { method: "POST", body: state.plan.body.ref });
    out.prepend(h("p.ok", {}, `Transaction #${t.id}: ${t.status}`));
    $("#plan-apply").disabled = true;
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
    }
    // Measured for the page's users and its tests: fetching and drawing the map.
    document.body.dataset.mapMs = String(Math.round(performance.now() - t0));
    // And since navigation started (HTML, script, topology, drawing), once.
    if (!document.body.dataset.mapAt) document.body.dataset.mapAt = String(Math.round(performance.now()));
    const [diag] = await Promise.all([api("/v1/diagnostics"), loadHistory(), loadProfiles()]);
    renderFindings(diag);
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
