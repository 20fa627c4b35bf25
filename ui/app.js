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
// interface and queue list (each pins other queues' threads), rss one per
// interface and context (a NIC's own table and each context's), sysctls
// first value wins, the first irqbalance mode.
function mergeFixes(findings, name) {
  const out = { name, description: "fixes for the findings of nettune diagnose" };
  const same = (key, d, e) => d.interface === e.interface && (key !== "napi" || d.queues === e.queues) &&
    (key !== "rss" || (d.context || 0) === (e.context || 0));
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
