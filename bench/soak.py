#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A bounded soak of the agent (a benchmark, not a test): for DURATION
seconds, READERS threads read every read route, one thread applies and rolls
back a profile in a loop (each cycle a transaction and its rollback), and
TRICKLE connections from 127.0.0.2 trickle request headers (a header line a
second, never finishing). At the end it reports the requests by status, the
5xx (must be 0), the p50/p99/max of GET /v1/health, and checks the history:
every transaction the applier was told about is there, and none is left
applying or rolling back (lost rows must be 0).

  python3 bench/soak.py BUILD/nettune ROOT [DURATION=60] [READERS=8] [TRICKLE=100]

ROOT is copied first (a fixture tree; it is changed and restored by the
applier). Standard library only.
"""
import json, os, shutil, socket, subprocess, sys, tempfile, threading, time, urllib.request

nettune, fixture = sys.argv[1], sys.argv[2]
duration = float(sys.argv[3]) if len(sys.argv) > 3 else 60
readers = int(sys.argv[4]) if len(sys.argv) > 4 else 8
tricklers = int(sys.argv[5]) if len(sys.argv) > 5 else 100

work = tempfile.mkdtemp(prefix="nt-soak-")
root = os.path.join(work, "root")
shutil.copytree(fixture, root, symlinks=True)
state = os.path.join(work, "state")
out = open(os.path.join(work, "out"), "w+")
agent = subprocess.Popen([nettune, "serve", "--listen", "127.0.0.1:0", "--root", root,
                          "--state-dir", state], stdout=out, stderr=subprocess.DEVNULL)
port = None
for _ in range(200):
    out.seek(0)
    t = out.read()
    if "listening on" in t:
        port = int(t.strip().rsplit(":", 1)[1])
        break
    time.sleep(0.05)
if not port:
    agent.kill()
    sys.exit("agent did not start")
base = "http://127.0.0.1:%d" % port
stop = threading.Event()
lock = threading.Lock()
codes, health_lat, created = {}, [], []


def req(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    r = urllib.request.Request(base + path, data=data, method=method,
                               headers={"Content-Type": "application/json"} if data else {})
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(r, timeout=30) as resp:
            code, text = resp.status, resp.read()
    except urllib.error.HTTPError as e:
        code, text = e.code, e.read()
    except Exception:
        code, text = 0, b""
    dt = time.monotonic() - t0
    with lock:
        codes[code] = codes.get(code, 0) + 1
        if path == "/v1/health":
            health_lat.append(dt)
    return code, text


def reader():
    paths = ["/v1/health", "/v1/topology", "/v1/nics", "/v1/irqs", "/v1/diagnostics",
             "/v1/transactions?limit=5", "/metrics"]
    i = 0
    while not stop.is_set():
        req("GET", paths[i % len(paths)])
        i += 1


def applier():
    values = ["4194304", "8388608"]
    i = 0
    while not stop.is_set():
        prof = {"name": "soak", "sysctl": {"net.core.rmem_max": values[i % 2]}}
        code, text = req("POST", "/v1/transactions", {"profile": prof})
        if code == 201:
            doc = json.loads(text)
            with lock:
                created.append(doc["id"])
            if doc.get("status") == "applied":
                c2, t2 = req("POST", "/v1/transactions/%d/rollback" % doc["id"], {})
                if c2 == 201:
                    with lock:
                        created.append(json.loads(t2)["id"])
        i += 1


def trickler():
    while not stop.is_set():
        s = None
        try:
            s = socket.socket()
            s.bind(("127.0.0.2", 0))
            s.settimeout(5)
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET /v1/health HTTP/1.1\r\n")
            while not stop.is_set():
                time.sleep(1)
                s.sendall(b"X-Slow: 1\r\n")
        except Exception:
            time.sleep(0.2)
        finally:
            if s:
                s.close()


threads = [threading.Thread(target=reader) for _ in range(readers)]
threads.append(threading.Thread(target=applier))
threads += [threading.Thread(target=trickler, daemon=True) for _ in range(tricklers)]
for t in threads:
    t.start()
time.sleep(duration)
stop.set()
for t in threads[:readers + 1]:
    t.join()

# History: every created transaction is there, none left in flight.
hist, offset = {}, 0
while True:
    code, text = req("GET", "/v1/transactions?limit=100&offset=%d" % offset)
    page = json.loads(text)["transactions"] if code == 200 else []
    hist.update({t["id"]: t["status"] for t in page})
    if len(page) < 100:
        break
    offset += 100
lost = [i for i in created if i not in hist]
inflight = [i for i, s in hist.items() if s in ("applying", "rolling_back")]
agent.terminate()
agent.wait(timeout=20)
shutil.rmtree(work, ignore_errors=True)

lat = sorted(health_lat)
pct = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1000 if lat else float("nan")
fivexx = sum(n for c, n in codes.items() if c >= 500)
total = sum(codes.values())
print("soak %.0f s: %d requests (%.0f/s), by status %s" %
      (duration, total, total / duration, dict(sorted(codes.items()))))
print("5xx: %d   failed connections: %d" % (fivexx, codes.get(0, 0)))
print("GET /v1/health: %d, p50 %.1f ms, p99 %.1f ms, max %.1f ms" %
      (len(lat), pct(0.5), pct(0.99), lat[-1] * 1000 if lat else float("nan")))
print("transactions: %d created, %d lost from history, %d left in flight" %
      (len(created), len(lost), len(inflight)))
sys.exit(1 if fivexx or lost or inflight or codes.get(0, 0) else 0)
