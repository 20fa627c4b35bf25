// SPDX-License-Identifier: Apache-2.0
// The fleet controller, played by a client generated from the document
// (openapi-typescript types + openapi-fetch): list NICs, plan, apply with a
// confirmation deadline, confirm, read history, roll back, store, read and
// delete profiles, apply by name, and the error answers on the way —
// against a real agent on a copy of the EPYC fixture, through Prism's
// validating proxy, and every answer also checked by a second validator
// (validate.ts, Ajv 2020-12) against the operation, status and media type
// it came from. `tsc --noEmit` has already proved that this code and the
// document agree on every field used.
import createClient from "openapi-fetch";
import { readFileSync } from "node:fs";
import type { components, paths } from "./schema.js";
import { check, done, openapiPath, readRoot, startAgent } from "./agent.js";
import { ResponseChecker } from "./validate.js";

type Profile = components["schemas"]["Profile"];
type Transaction = components["schemas"]["Transaction"];

const agent = await startAgent("epyc7713-2node-bond", { prism: true });
const api = createClient<paths>({ baseUrl: agent.base });
const checker = new ResponseChecker();
let violations = 0;
const seen = new Set<string>(); // "METHOD /template STATUS" answered and checked
api.use({
  async onResponse({ request, response, schemaPath }) {
    const v = response.headers.get("sl-violations");
    if (v) {
      violations++;
      console.error(`CONTRACT VIOLATION (prism): ${request.method} ${request.url}: ${v}`);
    }
    const errors = checker.check(request.method, schemaPath, response.status,
      response.headers.get("content-type"), await response.clone().text());
    for (const e of errors) {
      violations++;
      console.error(`CONTRACT VIOLATION (validate.ts): ${request.url}: ${e}`);
    }
    seen.add(`${request.method} ${schemaPath} ${response.status}`);
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

  // Roll back: a new transaction restoring the before-values. It applies
  // no profile, so its `profile` is null (the type says so: Profile | null).
  const rb = await api.POST("/v1/transactions/{id}/rollback", { params: { path: { id: tx.id } } });
  check(rb.response.status === 201 && rb.data?.rollback_of === tx.id, `rollback: ${rb.response.status} ${JSON.stringify(rb.error)}`);
  check(rb.data?.status === "applied", `rollback status ${rb.data?.status}`);
  const rbProfile: Profile | null | undefined = rb.data?.profile;
  check(rbProfile === null, `a rollback's profile is null: ${JSON.stringify(rbProfile)}`);
  check(rb.response.headers.get("location") === `/v1/transactions/${rb.data?.id}`, `rollback Location ${rb.response.headers.get("location")}`);
  check(readRoot(agent, "proc/sys/net/core/rmem_max") === before, "sysctl restored by the rollback");
  const rbRead = await api.GET("/v1/transactions/{id}", { params: { path: { id: rb.data?.id ?? 0 } } });
  const rbTx: Transaction | undefined = rbRead.data;
  check(rbRead.response.status === 200 && rbTx?.profile === null && rbTx?.rollback_of === tx.id,
    `rollback read back: ${rbRead.response.status} profile ${JSON.stringify(rbTx?.profile)}`);
  check((rbTx?.steps ?? []).some((s) => s.kind === "sysctl" && s.after === before && s.result === "applied"),
    `rollback steps ${JSON.stringify(rbTx?.steps?.map((s) => [s.kind, s.after, s.result]))}`);
  const rb2 = await api.POST("/v1/transactions/{id}/rollback", { params: { path: { id: tx.id } } });
  check(rb2.response.status === 409, `rolling back twice: ${rb2.response.status}`);
  const rbMissing = await api.POST("/v1/transactions/{id}/rollback", { params: { path: { id: 999999 } } });
  check(rbMissing.response.status === 404 && rbMissing.error?.type.endsWith("not-found") === true,
    `rolling back an absent transaction: ${rbMissing.response.status}`);
  const applied = await api.GET("/v1/transactions", { params: { query: { status: "applied" } } });
  check(applied.data?.transactions.some((t) => t.rollback_of === tx.id && t.profile === null) ?? false,
    "rollback listed in history, profile null");

  // Stored profiles: store, list, read, plan and apply by name, roll back,
  // delete; and the refusals on the way.
  const stored: Profile = { name: "fleet-stored", sysctl: { "net.core.rmem_max": target } };
  const put = await api.PUT("/v1/profiles/{name}", { params: { path: { name: stored.name } }, body: stored });
  check(put.response.status === 201 && put.data?.name === stored.name, `store profile: ${put.response.status} ${JSON.stringify(put.error)}`);
  const put2 = await api.PUT("/v1/profiles/{name}", { params: { path: { name: stored.name } },
    body: { ...stored, description: "replaced" } });
  check(put2.response.status === 200 && put2.data?.description === "replaced", `replace profile: ${put2.response.status}`);
  const badPut = await api.PUT("/v1/profiles/{name}", { params: { path: { name: "fleet-bad" } },
    body: { name: "fleet-bad", rings: [{ interface: "nosuch0", rx: 64 }] } });
  const vp = badPut.error && "errors" in badPut.error ? badPut.error : undefined;
  check(badPut.response.status === 422 && (vp?.errors.length ?? 0) > 0, `invalid profile refused: ${badPut.response.status}`);
  const plist = await api.GET("/v1/profiles");
  check(plist.data?.profiles.some((p) => p.name === stored.name && p.description === "replaced") ?? false,
    `profiles listed: ${JSON.stringify(plist.data)}`);
  const pget = await api.GET("/v1/profiles/{name}", { params: { path: { name: stored.name } } });
  check(pget.response.status === 200 && pget.data?.sysctl?.["net.core.rmem_max"] === target, `read profile: ${pget.response.status}`);
  const byName = await api.POST("/v1/plan", { body: { profile_name: stored.name } });
  check(byName.response.status === 200 && byName.data?.profile.name === stored.name, `plan by name: ${byName.response.status}`);
  const noName = await api.POST("/v1/plan", { body: { profile_name: "never-stored" } });
  check(noName.response.status === 404, `plan of an absent stored profile: ${noName.response.status}`);
  const applyByName = await api.POST("/v1/transactions", { body: { profile_name: stored.name } });
  check(applyByName.response.status === 201 && applyByName.data?.profile_name === stored.name &&
    applyByName.data?.profile?.name === stored.name, `apply by name: ${applyByName.response.status} ${JSON.stringify(applyByName.error)}`);
  const rbByName = await api.POST("/v1/transactions/{id}/rollback", {
    params: { path: { id: applyByName.data?.id ?? 0 } }, body: { force: false }, headers: { "Idempotency-Key": "fleet-rb-1" } });
  check(rbByName.response.status === 201 && rbByName.data?.profile === null, `roll back the apply by name: ${rbByName.response.status}`);
  check(readRoot(agent, "proc/sys/net/core/rmem_max") === before, "sysctl restored again");
  const del = await api.DELETE("/v1/profiles/{name}", { params: { path: { name: stored.name } } });
  check(del.response.status === 204, `delete profile: ${del.response.status}`);
  const gone = await api.GET("/v1/profiles/{name}", { params: { path: { name: stored.name } } });
  check(gone.response.status === 404, `deleted profile: ${gone.response.status}`);
  const del2 = await api.DELETE("/v1/profiles/{name}", { params: { path: { name: stored.name } } });
  check(del2.response.status === 404, `delete twice: ${del2.response.status}`);
  const badLimit = await api.GET("/v1/transactions", { params: { query: { limit: 0 } } });
  check(badLimit.response.status === 400, `limit=0: ${badLimit.response.status}`);

  // Every operation of the document answered at least once here, the
  // rollback among them, each answer checked by both validators.
  for (const want of ["POST /v1/transactions/{id}/rollback 201", "POST /v1/transactions/{id}/rollback 409",
    "POST /v1/transactions/{id}/confirm 200", "PUT /v1/profiles/{name} 201", "PUT /v1/profiles/{name} 422",
    "GET /v1/profiles/{name} 200", "DELETE /v1/profiles/{name} 204", "POST /v1/plan 200", "POST /v1/plan 404"])
    check(seen.has(want), `answered and checked: ${want}`);
  console.log(`${checker.checked} bodies checked by validate.ts; ${seen.size} operation/status pairs`);

  check(violations === 0, `${violations} responses broke the document`);
} finally {
  await agent.stop();
}
done();
