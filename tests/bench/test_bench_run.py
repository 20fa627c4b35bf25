#!/usr/bin/env python3
"""The benchmark command works (label "bench"): bench/run.py --short runs
every row on the 256-CPU tree and this checks what it reports, never how
fast: every row holds a number, each reference was measured (lstopo may be
reported as not installed, then skipped), the apply changed the sampled files and the
rollback restored them (run.py's own checks, which fail it otherwise), and
afterwards no process it started is alive and its work folder is gone.
The table is printed (ctest -V, or --output-on-failure)."""
import json, os, subprocess, sys, tempfile

src, build = os.environ["NT_SRC"], os.environ["NT_BUILD"]
failed = []


def check(cond, what):
    print("%s: %s" % ("ok" if cond else "FAIL", what))
    if not cond:
        failed.append(what)


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
check(len(rows) == 7, "7 rows (got %d)" % len(rows))
for r in rows:
    v = r["value"]
    check(isinstance(v, (int, float)) and v > 0, "%s: measured (%r %s)" % (r["work"], v, r["unit"]))
    if r["reference"]:
        ref = r["reference_value"]
        skipped = ref is None and "not installed" in r["note"]
        check(skipped or (isinstance(ref, (int, float)) and ref > 0),
              "%s: reference measured or reported skipped (%r)" % (r["work"], ref))
        if ref:
            check(abs(r["ratio"] - v / ref) < 1e-9, "%s: ratio is value/reference" % r["work"])
lstopo = [r for r in rows if r["reference"] and r["reference"].startswith("lstopo")]
check(len(lstopo) == 1, "the topology row has lstopo as its reference")
apply = [r for r in rows if r["work"].startswith("apply via API")]
check(len(apply) == 1 and "IRQs local + 3 sysctls" in apply[0]["work"],
      "the apply row is the every-NIC-IRQ, 3-sysctl transaction")
check(any(c.startswith("apply changed and rollback restored") for c in res["checks"]),
      "the apply changed the tree's files and the rollback put them back")
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
