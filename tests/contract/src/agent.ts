// SPDX-License-Identifier: Apache-2.0
// Run `nettune serve` on a throw-away copy of a fixture (optionally behind
// Prism's validating proxy), for the contract tests. Environment from
// ctest: NT_BIN (the agent), NT_FIXTURES, NT_SRC.
import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";

export const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (run through ctest or tests/contract/run.sh)`);
  return v;
};

export const openapiPath = (): string => join(env("NT_SRC"), "openapi", "openapi.yaml");

export interface Agent {
  base: string; // where requests go (the proxy when there is one)
  direct: string; // the agent itself
  root: string; // the fixture copy the agent works on
  stop(): Promise<void>;
}

function waitForLine(child: ChildProcess, stream: "stdout" | "stderr", re: RegExp,
                     what: string, ms: number, log: string[]): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let buf = "";
    const timer = setTimeout(() => reject(new Error(`${what}: no start within ${ms} ms\n${log.join("")}`)), ms);
    const onData = (d: Buffer) => {
      buf += d.toString();
      log.push(d.toString());
      const m = buf.match(re);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child[stream]!.on("data", onData);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}) before it listened\n${log.join("")}`));
    });
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      const port = typeof a === "object" && a ? a.port : 0;
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

// Every child still running, so none outlives this process: on exit
// (process.exit, the end of the event loop, SIGINT/SIGTERM/SIGHUP, an
// uncaught error) each is sent SIGKILL, with its process group when it has
// one. tests/contract/run.sh sweeps again after us.
const live = new Map<ChildProcess, boolean>(); // child -> own process group
function track(child: ChildProcess, group: boolean): ChildProcess {
  live.set(child, group);
  child.on("exit", () => live.delete(child));
  return child;
}
process.on("exit", () => {
  for (const [child, group] of live) {
    try {
      if (group && child.pid) process.kill(-child.pid, "SIGKILL");
      else child.kill("SIGKILL");
    } catch { /* already gone */ }
  }
});
for (const [sig, code] of [["SIGINT", 130], ["SIGTERM", 143], ["SIGHUP", 129]] as const)
  process.on(sig, () => process.exit(code));

function stopChild(child: ChildProcess, group: boolean): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const kill = (sig: NodeJS.Signals) => {
      try {
        if (group && child.pid) process.kill(-child.pid, sig);
        else child.kill(sig);
      } catch { /* already gone */ }
    };
    const t = setTimeout(() => kill("SIGKILL"), 10000);
    child.on("exit", () => { clearTimeout(t); resolve(); });
    kill("SIGTERM");
  });
}

export interface Proxy {
  base: string;
  stop(): Promise<void>;
}

/** Prism's validating proxy (the document at DOC, default openapi.yaml) in
 * front of UPSTREAM, as the C tests run it. */
export async function startPrism(upstream: string, doc: string = openapiPath()): Promise<Proxy> {
  const port = await freePort();
  const prism = track(spawn(join(env("NT_SRC"), "tests", "contract", "node_modules", ".bin", "prism"),
    ["proxy", doc, upstream, "--errors", "--validate-request", "false", "--cors", "false",
     "--host", "127.0.0.1", "--port", String(port), "-v", "warn"],
    { stdio: ["ignore", "pipe", "pipe"], detached: true }), true);
  const prismLog: string[] = [];
  prism.stderr!.on("data", (d: Buffer) => prismLog.push(d.toString()));
  // At level warn Prism prints nothing once it is up, so readiness is a
  // successful connection rather than a log line.
  const deadline = Date.now() + 60000;
  for (;;) {
    try {
      await fetch(`http://127.0.0.1:${port}/v1/health`);
      break;
    } catch {
      if (Date.now() > deadline || prism.exitCode !== null) {
        await stopChild(prism, true);
        throw new Error(`prism did not start\n${prismLog.join("")}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return { base: `http://127.0.0.1:${port}`, stop: () => stopChild(prism, true) };
}

/** Start the agent on a copy of FIXTURE (a name under NT_FIXTURES, or an
 * absolute path); with PRISM, behind the proxy; ARGS are more `nettune
 * serve` options (--tokens FILE). */
export async function startAgent(fixture: string,
                                 opts: { prism?: boolean; args?: string[] } = {}): Promise<Agent> {
  const dir = mkdtempSync(join(tmpdir(), "nt-contract-"));
  const root = join(dir, "root");
  cpSync(isAbsolute(fixture) ? fixture : join(env("NT_FIXTURES"), fixture), root,
    { recursive: true, verbatimSymlinks: true });
  const agentLog: string[] = [];
  const agent = track(spawn(env("NT_BIN"), ["serve", "--listen", "127.0.0.1:0", "--root", root,
    "--state-dir", join(dir, "state"), ...(opts.args ?? [])], { stdio: ["ignore", "pipe", "pipe"] }), false);
  agent.stderr!.on("data", (d: Buffer) => { if (process.env.NT_CONTRACT_VERBOSE) process.stderr.write(d); });
  let prism: Proxy | undefined;
  const stop = async () => {
    if (prism) await prism.stop();
    await stopChild(agent, false);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const m = await waitForLine(agent, "stdout", /listening on (http:\/\/\S+:\d+)/, "nettune serve", 15000, agentLog);
    const direct = m[1];
    if (opts.prism) prism = await startPrism(direct);
    return { base: prism ? prism.base : direct, direct, root, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

export const readRoot = (a: Agent, rel: string): string => readFileSync(join(a.root, rel), "utf8").trim();

// A tiny harness: every check counts, the run fails when any failed.
let passed = 0, failed = 0;
export function check(cond: unknown, msg: string): boolean {
  if (cond) passed++;
  else {
    failed++;
    console.error(`FAIL: ${msg}`);
  }
  return !!cond;
}
export function done(): never {
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}
