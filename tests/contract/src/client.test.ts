// The fleet controller, played by a client generated from the document
// (openapi-typescript types + openapi-fetch): list NICs, plan, apply with a
// confirmation deadline, confirm, read history, roll back — against a real
// agent on a copy of the EPYC fixture, through Prism's validating proxy so
// every answer is also checked against the document. `tsc --noEmit` has
// already proved that this code and the document agree on every field used.
import createClient from "openapi-fetch";
import { readFileSync } from "node:fs";
import type { components, paths } from "./schema.js";
import { check, done, openapiPath, readRoot, startAgent } from "./agent.js";

type Profile = components["schemas"]["Profile"];

const agent = await startAgent("seed003-epyc7713", { prism: true });
const api = createClient<paths>({ baseUrl: agent.base });
let violations = 0;
api.use({
  onResponse({ request, response }) {
    const v = response.headers.get("sl-violations");
    if (v) {
      violations++;
      console.error(`CONTRACT VIOLATION: ${request.method} ${request.url}: ${v}`);
    }
    return undefined;
  },
});

try {
  // The agent serves the very document the client was generated from.
  const doc = await api.GET("/v1/openapi.yaml", { parseAs: "text" });
  check(doc.response.status === 200, `openapi.yaml status ${doc.response.status}`);
  check(doc.response.headers.get("content-type")?.startsWith("application/yaml"),
    `openapi.yaml content type ${doc.response.headers.get("content-type")}`);
  check(doc.data === readFileSync(openapiPath(), "utf8"), "served openapi.yaml differs from openapi/openapi.yaml");

  // Inventory.
  const nics = await api.GET("/v1/nics");
  check(nics.response.status === 200 && nics.data !== undefined, `list NICs: ${nics.response.status}`);
  const names = nics.data?.nics.map((n) => n.name) ?? [];
  check(names.includes("enos0") && names.includes("bond0"), `NICs ${names.join(",")}`);
  const withRings = nics.data?.nics.filter((n) => n.rings && n.rings.rx < n.rings.rx_max) ?? [];
  check(withRings.length > 0, "a NIC whose RX ring is below its maximum");
  const nic = withRings[0];

  const place = await api.GET("/v1/nics/{name}/placement", { params: { path: { name: nic.name }, query: { cpus: 4 } } });
  check(place.response.status === 200 && place.data?.nic === nic.name, `placement ${place.response.status}`);
  if (place.data?.known) check((place.data.app_cpus ?? "").length > 0, "placement recommends CPUs");
  const missing = await api.GET("/v1/nics/{name}", { params: { path: { name: "nosuch0" } } });
  check(missing.response.status === 404 && missing.error?.type.endsWith("not-found"), `missing NIC ${missing.response.status}`);

  // Plan: the controller's profile, built from what the agent reported.
  const before = readRoot(agent, "proc/sys/net/core/rmem_max");
  const target = String(Number(before) * 2);
  const profile: Profile = {
    name: "fleet-epyc",
    description: "rings to max on one NIC, bigger socket buffers",
    rings: [{ interface: nic.name, rx: "max" }],
    sysctl: { "net.core.rmem_max": target },
  };
  const plan = await api.POST("/v1/plan", { body: profile });
  check(plan.response.status === 200 && plan.data !== undefined, `plan: ${plan.response.status} ${JSON.stringify(plan.error)}`);
  const kinds = new Set(plan.data?.steps.map((s) => s.kind));
  check(kinds.has("rings") && kinds.has("sysctl"), `plan kinds ${[...kinds].join(",")}`);
  check(readRoot(agent, "proc/sys/net/core/rmem_max") === before, "plan changed nothing");

  // Apply with a confirmation deadline, then confirm.
  const apply = await api.POST("/v1/transactions", {
    body: { profile, confirm_timeout_s: 120 },
    headers: { "Idempotency-Key": "fleet-run-1" },
  });
  check(apply.response.status === 201 && apply.data !== undefined, `apply: ${apply.response.status} ${JSON.stringify(apply.error)}`);
  const tx = apply.data!;
  check(tx.status === "pending_confirm", `apply status ${tx.status}`);
  check(apply.response.headers.get("location") === `/v1/transactions/${tx.id}`, `Location ${apply.response.headers.get("location")}`);
  check(tx.confirm_timeout_s === 120 && typeof tx.confirm_deadline === "string", "confirm deadline recorded");
  check(readRoot(agent, "proc/sys/net/core/rmem_max") === target, "sysctl applied while pending");

  const retry = await api.POST("/v1/transactions", {
    body: { profile, confirm_timeout_s: 120 }, headers: { "Idempotency-Key": "fleet-run-1" },
  });
  check(retry.response.status === 200 && retry.data?.id === tx.id, `idempotent retry ${retry.response.status}`);

  const busy = await api.POST("/v1/transactions", { body: { profile } });
  const conflict = busy.error && "in_flight" in busy.error ? busy.error : undefined;
  check(busy.response.status === 409 && conflict?.in_flight === tx.id, `second apply while pending: ${busy.response.status}`);

  const conf = await api.POST("/v1/transactions/{id}/confirm", { params: { path: { id: tx.id } } });
  check(conf.response.status === 200 && conf.data?.status === "applied", `confirm: ${conf.response.status} ${conf.data?.status}`);
  const again = await api.POST("/v1/transactions/{id}/confirm", { params: { path: { id: tx.id } } });
  check(again.response.status === 409, `confirm twice: ${again.response.status}`);

  // History.
  const list = await api.GET("/v1/transactions", { params: { query: { limit: 10 } } });
  check(list.response.status === 200 && list.data?.transactions[0]?.id === tx.id, `history: ${list.response.status}`);
  check(list.data?.transactions[0]?.status === "applied", `history status ${list.data?.transactions[0]?.status}`);
  const one = await api.GET("/v1/transactions/{id}", { params: { path: { id: tx.id } } });
  check(one.response.status === 200 && (one.data?.steps?.length ?? 0) >= 2, `transaction ${tx.id}: ${one.response.status}`);
  check(one.data?.steps?.every((s) => s.result === "applied") ?? false,
    `step results ${one.data?.steps?.map((s) => s.result).join(",")}`);

  // Roll back: a new transaction restoring the before-values.
  const rb = await api.POST("/v1/transactions/{id}/rollback", { params: { path: { id: tx.id } } });
  check(rb.response.status === 201 && rb.data?.rollback_of === tx.id, `rollback: ${rb.response.status} ${JSON.stringify(rb.error)}`);
  check(rb.data?.status === "applied", `rollback status ${rb.data?.status}`);
  check(readRoot(agent, "proc/sys/net/core/rmem_max") === before, "sysctl restored by the rollback");
  const rb2 = await api.POST("/v1/transactions/{id}/rollback", { params: { path: { id: tx.id } } });
  check(rb2.response.status === 409, `rolling back twice: ${rb2.response.status}`);
  const applied = await api.GET("/v1/transactions", { params: { query: { status: "applied" } } });
  check(applied.data?.transactions.some((t) => t.rollback_of === tx.id) ?? false, "rollback listed in history");

  check(violations === 0, `${violations} responses broke the document`);
} finally {
  await agent.stop();
}
done();
