// SPDX-License-Identifier: Apache-2.0
// nettune's web view: the history of transactions, one transaction's detail and
// its confirm window, rollback. Loaded after app.js
// (index.html), whose helpers (h, $, api, state) it uses; its functions are
// called from there once the page has loaded.

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
