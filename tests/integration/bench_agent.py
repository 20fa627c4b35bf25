#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# A scripted nettune agent for bench-run's tests (test_bench_undo.sh,
# test_bench_hostile.sh): the few requests bench-run makes, answered from
# memory. BUSY: how many times each rollback is refused 409 before it
# reverts; LOG: every request's method and path, a line each; PORTFILE: the
# port it listens on (127.0.0.1), written once it does.
#   bench_agent.py BUSY LOG PORTFILE [window-closed]
import json, sys
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
busy_per_rollback, log, portfile = int(sys.argv[1]), sys.argv[2], sys.argv[3]
# "window-closed": every transaction reads back reverted, as when its confirm
# window closed while COMMAND still ran.
window_closed = len(sys.argv) > 4 and sys.argv[4] == "window-closed"
state = {"next": 1, "txns": {}, "busy": {}}
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def reply(self, code, doc, ctype="application/json"):
        body = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def note(self):
        with open(log, "a") as f:
            f.write(f"{self.command} {self.path}\n")
    def do_GET(self):
        self.note()
        p = self.path.split("?")[0]
        if p == "/v1/topology": return self.reply(200, {"numa_nodes": []})
        if p == "/v1/nics": return self.reply(200, {"nics": []})
        if p == "/v1/irqs": return self.reply(200, {"irqs": []})
        if p.startswith("/v1/transactions/"):
            t = state["txns"].get(int(p.rsplit("/", 1)[1]))
            return self.reply(200, t) if t else self.reply(404, {"title": "Not found"})
        self.reply(404, {"title": "Not found"})
    def do_POST(self):
        self.note()
        n = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(n)
        p = self.path
        if p == "/v1/plan": return self.reply(200, {"id": "p-1", "steps": []})
        if p == "/v1/transactions":
            i = state["next"]; state["next"] += 1
            t = {"id": i, "status": "pending_confirm", "confirm_deadline": "2026-12-02T07:00:00Z",
                 "steps": [{"kind": "sysctl", "target": "net.core.rmem_max", "result": "applied"}]}
            state["txns"][i] = t
            state["busy"][i] = busy_per_rollback
            self.reply(201, t)
            if window_closed:
                t = dict(t); t["status"] = "reverted"; state["txns"][i] = t
            return
        if p.endswith("/rollback"):
            i = int(p.split("/")[3]); t = state["txns"][i]
            if state["busy"][i] > 0:
                state["busy"][i] -= 1
                return self.reply(409, {"type": "about:blank", "title": "Conflict", "status": 409,
                                        "detail": "another transaction is in flight"}, "application/problem+json")
            t["status"] = "reverted"
            return self.reply(200, t)
        if p.endswith("/confirm"):
            i = int(p.split("/")[3]); state["txns"][i]["status"] = "applied"
            return self.reply(200, state["txns"][i])
        self.reply(404, {"title": "Not found"})
s = ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(portfile, "w") as f: f.write(str(s.server_address[1]))
s.serve_forever()
