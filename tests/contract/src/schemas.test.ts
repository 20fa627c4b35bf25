// SPDX-License-Identifier: Apache-2.0
// What Spectral does not check about the document's schemas, and whether
// Prism really validates with them:
//   - the document is OpenAPI 3.1 with the JSON Schema 2020-12 dialect, and
//     no OpenAPI 3.0 keyword is left in a schema (`nullable`, `example`,
//     boolean exclusiveMinimum/Maximum): 3.1 tools ignore them silently;
//   - every schema compiles under Ajv's 2020-12 engine in strict mode (an
//     unknown keyword or format is an error), as Prism compiles them; one
//     that does not compile is skipped by Prism without a word;
//   - every `examples` entry is valid against its schema;
//   - a canary: Prism, as the contract tests run it, in front of a stub
//     agent answering known-bad and known-good bodies (a rollback's
//     `"profile": null` among the good ones) flags exactly the bad ones, and
//     the second validator (validate.ts) agrees.
import { createServer } from "node:http";
import { check, done, startPrism } from "./agent.js";
import { compileIn, DOC_ID, loadDocument, makeAjv, ResponseChecker } from "./validate.js";

const doc = loadDocument();
check(/^3\.1\.\d+$/.test(String(doc.openapi)), `openapi is ${doc.openapi}, not 3.1.x`);
check(doc.jsonSchemaDialect === "https://json-schema.org/draft/2020-12/schema",
  `jsonSchemaDialect is ${doc.jsonSchemaDialect}: Prism validates with Ajv 2020-12 only for ` +
  "https://json-schema.org/draft/2020-12/schema and skips validation for a dialect it does not know");

// ---- every schema in the document, with its JSON pointer ----
const esc = (k: string) => k.replace(/~/g, "~0").replace(/\//g, "~1");
const one = ["additionalProperties", "items", "not", "if", "then", "else", "contains", "propertyNames",
  "unevaluatedProperties", "unevaluatedItems"];
const many = ["allOf", "anyOf", "oneOf", "prefixItems"];
const named = ["properties", "patternProperties", "$defs", "dependentSchemas"];
function walkSchema(s: any, ptr: string, visit: (s: any, ptr: string) => void) {
  if (!s || typeof s !== "object" || Array.isArray(s)) return;
  visit(s, ptr);
  for (const k of one) walkSchema(s[k], `${ptr}/${k}`, visit);
  for (const k of many) if (Array.isArray(s[k])) s[k].forEach((x: any, i: number) => walkSchema(x, `${ptr}/${k}/${i}`, visit));
  for (const k of named)
    if (s[k] && typeof s[k] === "object")
      for (const [n, x] of Object.entries(s[k])) walkSchema(x, `${ptr}/${k}/${esc(n)}`, visit);
}
// Top-level schemas: components.schemas, and every `schema` of a
// parameter, header or media type anywhere else in the document.
const roots: [any, string][] = Object.entries<any>(doc.components?.schemas ?? {})
  .map(([n, s]) => [s, `#/components/schemas/${esc(n)}`]);
(function findSchemas(v: any, ptr: string) {
  if (!v || typeof v !== "object") return;
  for (const [k, x] of Object.entries<any>(v)) {
    const p = `${ptr}/${esc(k)}`;
    if (k === "schema" && x && typeof x === "object") roots.push([x, p]);
    else if (!(ptr === "#/components" && k === "schemas")) findSchemas(x, p);
  }
})({ paths: doc.paths, components: doc.components }, "#");

const legacy: string[] = [];
let nschemas = 0;
for (const [root, ptr] of roots)
  walkSchema(root, ptr, (s, p) => {
    nschemas++;
    for (const k of ["nullable", "x-nullable", "example"]) if (k in s) legacy.push(`${p}: ${k}`);
    for (const k of ["exclusiveMinimum", "exclusiveMaximum"]) if (typeof s[k] === "boolean") legacy.push(`${p}: boolean ${k}`);
  });
check(legacy.length === 0, `OpenAPI 3.0 keywords in 3.1 schemas (use type: [T, 'null'], oneOf [$ref, null], examples):\n  ${legacy.join("\n  ")}`);

// ---- strict compile, and the examples ----
const strict = makeAjv(doc, true);
let compiled = 0, examples = 0;
for (const [root, ptr] of roots) {
  try {
    compileIn(strict, ptr.startsWith("#/components/schemas/") ? { $ref: ptr } : root);
    compiled++;
  } catch (e) {
    check(false, `${ptr} does not compile (Ajv 2020-12, strict): ${e instanceof Error ? e.message : e}`);
  }
  walkSchema(root, ptr, (s, p) => {
    if (!("examples" in s)) return;
    if (!check(Array.isArray(s.examples), `${p}: examples is not an array`)) return;
    let validate;
    try {
      validate = p.startsWith("#/components/schemas/")
        ? strict.compile({ $ref: `${DOC_ID}#/$defs/${p.slice("#/components/schemas/".length)}` })
        : compileIn(strict, s);
    } catch (e) {
      check(false, `${p} does not compile: ${e instanceof Error ? e.message : e}`);
      return;
    }
    for (const ex of s.examples) {
      examples++;
      check(validate(ex), `${p}: example ${JSON.stringify(ex)} is not valid: ${JSON.stringify(validate.errors)}`);
    }
  });
}
console.log(`${roots.length} schemas (${nschemas} with subschemas): ${compiled} compile strictly; ${examples} examples valid`);

// ---- the canary ----
const tx = (o: object) => ({ id: 1, status: "applied", created: "2026-11-30T12:00:00Z", client: "127.0.0.1",
  identity: "", ...o });
const rollback = tx({ id: 2, profile: null, profile_name: null, rollback_of: 1, warnings: [],
  steps: [{ index: 0, kind: "sysctl", target: "net.core.rmem_max", before: "425984", after: "212992",
    result: "applied", error: null, observed: null }] });
const cases: { method: string; path: string; template: string; status: number; body: unknown; bad: boolean; what: string }[] = [
  { method: "GET", path: "/v1/health", template: "/v1/health", status: 200, bad: false, what: "a health answer",
    body: { status: "ok", version: "0.1.0", root: "/", live: false, netns: null, netns_initial: true,
      machine_wide: "allowed" } },
  { method: "GET", path: "/v1/health", template: "/v1/health", status: 200, bad: true, what: "status outside the enum",
    body: { status: "bad", version: "0.1.0", root: "/", live: false, netns: null, netns_initial: true,
      machine_wide: "allowed" } },
  { method: "POST", path: "/v1/transactions/1/rollback", template: "/v1/transactions/{id}/rollback", status: 201,
    bad: false, what: "a rollback: profile null", body: rollback },
  { method: "GET", path: "/v1/transactions/2", template: "/v1/transactions/{id}", status: 200,
    bad: false, what: "a rollback read back", body: rollback },
  { method: "GET", path: "/v1/transactions/3", template: "/v1/transactions/{id}", status: 200,
    bad: true, what: "profile neither a Profile nor null", body: tx({ id: 3, profile: 42 }) },
  { method: "GET", path: "/v1/transactions/4", template: "/v1/transactions/{id}", status: 200,
    bad: true, what: "profile missing", body: tx({ id: 4 }) },
  { method: "GET", path: "/v1/nics/eth0", template: "/v1/nics/{name}", status: 200,
    bad: true, what: "a NIC without its required fields", body: { name: "eth0" } },
  { method: "GET", path: "/v1/nics/eth0/placement", template: "/v1/nics/{name}/placement", status: 200,
    bad: true, what: "app_cpus neither a cpulist nor null", body: { nic: "eth0", known: false, node: -1, reason: "x",
      node_cpus: null, irq_cpus: null, app_cpus: 7, numactl: null, iperf3: null } },
  { method: "GET", path: "/v1/nics/eth1/placement", template: "/v1/nics/{name}/placement", status: 200,
    bad: false, what: "a placement of an unknown node", body: { nic: "eth1", known: false, node: -1, nodes: null,
      rule: "unknown", source: null, ports: null, reason: "x",
      node_cpus: null, irq_cpus: null, napi_cpus: null, app_cpus: null, numactl: null, iperf3: null, nettune_run: null } },
  { method: "GET", path: "/v1/nics/bond0/placement", template: "/v1/nics/{name}/placement", status: 200,
    bad: false, what: "a bond's placement from a reservation", body: { nic: "bond0", known: true, node: 0,
      nodes: "0-1", rule: "reserved", source: "transaction 3", ports: "enos0,enos2", reason: "x",
      node_cpus: "0-127", irq_cpus: "0-3", napi_cpus: "", app_cpus: "30-31,62-63", numactl: "numactl --physcpubind=30-31,62-63 --membind=0-1",
      iperf3: "iperf3 -A 30", nettune_run: "nettune run --near bond0 --" } },
  { method: "GET", path: "/v1/nics/eth1/placement", template: "/v1/nics/{name}/placement", status: 200,
    bad: true, what: "a placement rule not in the list", body: { nic: "eth1", known: false, node: -1, nodes: null,
      rule: "guess", source: null, ports: null, reason: "x",
      node_cpus: null, irq_cpus: null, napi_cpus: null, app_cpus: null, numactl: null, iperf3: null, nettune_run: null } },
];
// The stub answers the case named by the x-nt-case header (Prism passes it on).
const stub = createServer((req, res) => {
  const c = cases[Number(req.headers["x-nt-case"] ?? -1)];
  req.resume();
  res.writeHead(c ? c.status : 404, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(c ? c.body : { type: "about:blank", title: "Not Found", status: 404, detail: "no case" }));
});
await new Promise<void>((r) => stub.listen(0, "127.0.0.1", r));
const addr = stub.address();
const upstream = `http://127.0.0.1:${typeof addr === "object" && addr ? addr.port : 0}`;
const checker = new ResponseChecker(doc);
const prism = await startPrism(upstream);
try {
  for (const [i, c] of cases.entries()) {
    const res = await fetch(`${prism.base}${c.path}`, {
      method: c.method,
      headers: { "x-nt-case": String(i), ...(c.method === "POST" ? { "content-type": "application/json" } : {}) },
      body: c.method === "POST" ? "{}" : undefined,
    });
    const text = await res.text();
    const flagged = res.headers.get("sl-violations");
    check(!!flagged === c.bad, `prism: ${c.what} (${c.method} ${c.path}): ` +
      (c.bad ? "not flagged: Prism is not validating this response" : `flagged: ${flagged}`));
    const errors = checker.check(c.method, c.template, c.status, "application/json", JSON.stringify(c.body));
    check((errors.length > 0) === c.bad, `validate.ts: ${c.what}: ${c.bad ? "not flagged" : errors.join("; ")}`);
    if (!c.bad) check(res.status === c.status && JSON.stringify(JSON.parse(text)) === JSON.stringify(c.body),
      `prism passed ${c.what} on unchanged: ${res.status}`);
  }
} finally {
  await prism.stop();
  stub.close();
}
done();
