// SPDX-License-Identifier: Apache-2.0
// nettune's web view: alike warnings as one line (the rule of cli/warn_group.h). Loaded after app.js
// (index.html), whose helpers (h, $, api, state) it uses; its functions are
// called from there once the page has loaded.

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
