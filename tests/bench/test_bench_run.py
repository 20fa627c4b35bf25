#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The benchmark command works (label "bench"): bench/run.py --short runs
every row on the 256-CPU tree and this checks what it reports, never how
fast. First the load generator's framing against a small server of its own
(chunked bodies, Content-Length, a server closing the connection): every
response counted once, with its status. Then: every row holds a number, each reference was measured (lstopo may be
reported as not installed, then skipped), the read floors were measured on
the tree's every IRQ, the apply changed the sampled files and the
rollback restored them (run.py's own checks, which fail it otherwise), and
afterwards no process it started is alive and its work folder is gone.
The table is printed (ctest -V, or --output-on-failure)."""
import http.server, json, os, subprocess, sys, tempfile, threading

src, build = os.environ["NT_SRC"], os.environ["NT_BUILD"]
failed = []


def check(cond, what):
    print("%s: %s" % ("ok" if cond else "FAIL", what))
    if not cond:
        failed.append(what)


class Handler(http.server.BaseHTTPRequestHandler):
    """/chunked: a chunked body in three chunks; /length: Content-Length;
    /close: Content-Length and Connection: close; /missing: a 404."""
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        body = b'{"status": "ok", "padding": "' + b"x" * 3000 + b'"}'
        code = 404 if self.path == "/missing" else 200
        self.send_response(code)
        if self.path == "/chunked":
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for part in (body[:10], body[10:2000], body[2000:]):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
            return
        self.send_header("Content-Length", str(len(body)))
        if self.path == "/close":
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
thread = threading.Thread(target=server.serve_forever, daemon=True)
thread.start()
try:
    for path, conns, n, status, closes in (("/chunked", 2, 40, "200", False), ("/length", 2, 40, "200", False),
                                           ("/close", 1, 10, "200", True), ("/missing", 1, 5, "404", False)):
        p = subprocess.run([os.path.join(build, "bench_http"), "-c", str(conns), "-n", str(n),
                            "127.0.0.1", str(server.server_address[1]), path],
                           capture_output=True, text=True, timeout=60)
        r = json.loads(p.stdout)
        check(r["requests"] == n and r["status"] == {status: n} and r["errors"] == 0,
              "bench_http %s: %d responses, all %s (got %s, %d errors)" % (path, n, status, r["status"], r["errors"]))
        check((r["reconnects"] == n) if closes else (r["reconnects"] == 0),
              "bench_http %s: reconnects %d counted" % (path, r["reconnects"]))
        check((p.returncode == 0) == (r["errors"] == 0), "bench_http %s: exit status follows errors" % path)
finally:
    server.shutdown()
    server.server_close()
    thread.join()

with tempfile.TemporaryDirectory(prefix="nt-bench-test-") as tmp:
    out = os.path.join(tmp, "result.json")
    p = subprocess.run([sys.executable, os.path.join(src, "bench/run.py"), "--short", "--build", build,
                        "--json", out], timeout=600)
    check(p.returncode == 0, "bench/run.py --short exits 0 (it fails on any wrong reply or state)")
    if not os.path.exists(out):
        sys.exit("FAIL: no JSON result written")
    with open(out) as f:
        res = json.load(f)

check(res["ok"] is True, "the run reports ok")
rows = res["rows"]
check(len(rows) == 9, "9 rows (got %d)" % len(rows))
for r in rows:
    v = r["value"]
    check(isinstance(v, (int, float)) and v > 0, "%s: measured (%r %s)" % (r["work"], v, r["unit"]))
    if r["reference"]:
        ref = r["reference_value"]
        skipped = ref is None and ("not installed" in r["note"] or "not counted" in r["note"])
        check(skipped or (isinstance(ref, (int, float)) and ref > 0),
              "%s: reference measured or reported skipped (%r)" % (r["work"], ref))
        if ref:
            check(abs(r["ratio"] - v / ref) < 1e-9, "%s: ratio is value/reference" % r["work"])
lstopo = [r for r in rows if r["reference"] and r["reference"].startswith("lstopo")]
check(len(lstopo) == 1, "the topology row has lstopo as its reference")
# The floors: the bare read loop found every IRQ's two affinity files of
# the tree (1244 IRQs) and measured each pass; the CLI row's reference is
# the loop opening each file plus a whole `nettune --version` process.
fl = res["floor"]
check(fl and fl["irqs"] == 1244 and fl["files"] == 2 * fl["irqs"] and fl["interrupts_bytes"] > 1000000,
      "bench_readloop read the tree's 1244 IRQs, 2 files each, and its /proc/interrupts (%r)" % fl)
check(all(fl[k] > 0 for k in ("held_ms", "open_ms", "parallel_ms", "interrupts_ms", "version_ms")),
      "each floor pass was timed")
cli = [r for r in rows if r["work"].startswith("nettune topology")]
check(len(cli) == 1 and cli[0]["reference"].startswith("C loop: open+read") and
      abs(cli[0]["reference_value"] - (fl["open_ms"] + fl["version_ms"])) < 1e-9,
      "the CLI row's reference is the open loop plus nettune --version")
check("floor: a bare C loop" in lstopo[0]["note"], "the topology row's note gives the read floor")
apply = [r for r in rows if r["work"].startswith("apply via API")]
check(len(apply) == 1 and "IRQs local + 3 sysctls" in apply[0]["work"],
      "the apply row is the every-NIC-IRQ, 3-sysctl transaction")
steer = [r for r in rows if r["work"].startswith("steering apply")]
check(len(steer) == 1 and steer[0]["reference"].startswith("Python loop"),
      "the steering apply row has the bare loop as its reference")
check(any(c.startswith("apply by plan id changed and rollback restored") for c in res["checks"]),
      "the apply (by plan id) changed the tree's files and the rollback put them back (%r)" % res["checks"])
check(any("no process left" in c for c in res["checks"]), "run.py found no process left")
check(not os.path.exists(res["work"]), "the work folder %s is removed" % res["work"])
left = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            if res["work"].encode() in f.read():
                left.append(pid)
    except OSError:
        pass
check(not left, "no process names the work folder (%s)" % left)
sys.exit(1 if failed else 0)
