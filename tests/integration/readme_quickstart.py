#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs the README's quick starts as written (test_readme_quickstart.sh).

The README marks what belongs to a quick start with an HTML comment right before a fenced
block: `<!-- quickstart:NAME -->` before a ```console block of `$ command` lines, each followed
by lines of the output it shows, and `<!-- quickstart:NAME file=PATH -->` before a block that is
a file the commands use (written to PATH in the quick start's folder). A command's shown lines
must appear in its output in that order, each as a whole line; `<...>` in a shown line stands
for anything. A command that exits non-zero fails the test.

Each quick start runs in a folder of its own against agents the test starts on copies of the
fixture hosts, and everything started is stopped at the end. What is the test's and not the
README's: `nettune` is the binary under test, and the commands that read the host directly
(topology, irqs, ...) read the fixture (`--root`), as the agent does; NETTUNE_AGENT points
at the test's agent, and so does the default address http://127.0.0.1:8470 where a command
names it (`diagnose` asks the agent named, so it reads the fixture through the agent); `try` gets a terminal and ENTER two seconds after it starts; and in the
fleet's files the agents' URLs, the CA file and the repository's path are replaced by the test's.
Exit status: 0 pass, 1 fail, 77 skipped (with the reason) when a tool is missing.
"""
import json
import os
import re
import select
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

SRC = os.environ["NT_SRC"]
BIN = os.environ["NT_BIN"]
FIX = os.environ.get("NT_FIXTURES", os.path.join(SRC, "tests/fixtures"))
HOST_CMDS = {"topology", "irqs", "rates", "placement", "run", "nics"}
DEFAULT_AGENT = "http://127.0.0.1:8470"

failures = []
checks = 0


def check(ok, what):
    global checks
    checks += 1
    if not ok:
        failures.append(what)
        print("FAIL: " + what, flush=True)


def parse(readme):
    """{name: {"files": [(path, text)], "blocks": [[(cmd, [shown lines])]]}}"""
    out = {}
    lines = open(readme, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"<!-- quickstart:([a-z]+)(?: file=(\S+))? -->$", lines[i])
        i += 1
        if not m:
            continue
        while i < len(lines) and not lines[i].startswith("```"):
            i += 1
        lang = lines[i][3:].strip()
        i += 1
        body = []
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        qs = out.setdefault(m.group(1), {"files": [], "blocks": []})
        if m.group(2):
            qs["files"].append((m.group(2), "\n".join(body) + "\n"))
            continue
        if lang != "console":
            raise SystemExit("README: quickstart:%s block is not a console block" % m.group(1))
        cmds = []
        k = 0
        while k < len(body):
            line = body[k]
            k += 1
            if not line.startswith("$ "):
                if not cmds:
                    raise SystemExit("README: output before any command: " + line)
                cmds[-1][1].append(line)
                continue
            cmd = line[2:]
            while cmd.endswith("\\") and k < len(body):
                cmd = cmd + "\n" + body[k]
                k += 1
            cmds.append((cmd, []))
        qs["blocks"].append(cmds)
    return out


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Run:
    """The processes a quick start started, stopped in reverse order."""

    def __init__(self):
        self.procs = []

    def start(self, argv, out, err):
        p = subprocess.Popen(argv, stdout=open(out, "w"), stderr=open(err, "w"),
                             start_new_session=True)
        self.procs.append(p)
        return p

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
        self.procs = []


def agent(run, work, name, fixture, extra=()):
    root = os.path.join(work, "root-" + name)
    shutil.copytree(os.path.join(FIX, fixture), root, symlinks=True)
    out, err = os.path.join(work, name + ".out"), os.path.join(work, name + ".err")
    run.start([BIN, "serve", "--config", "/dev/null", "--root", root, "--listen", "127.0.0.1:0",
               "--state-dir", os.path.join(work, "state-" + name)] + list(extra), out, err)
    for _ in range(100):
        m = re.search(r"^listening on (\S+)", open(out).read(), re.M)
        if m:
            return root, m.group(1)
        time.sleep(0.1)
    raise SystemExit("agent %s did not start: %s" % (name, open(err).read()))


def wrapper(work, root):
    """A `nettune` on PATH: the binary under test, reading ROOT for host commands."""
    bindir = os.path.join(work, "bin")
    os.makedirs(bindir, exist_ok=True)
    path = os.path.join(bindir, "nettune")
    with open(path, "w") as f:
        f.write('#!/bin/sh\ncase "$1" in\n  %s) c=$1; shift; exec "%s" "$c" --root "%s" "$@";;\n'
                'esac\nexec "%s" "$@"\n' % ("|".join(sorted(HOST_CMDS)), BIN, root, BIN))
    os.chmod(path, 0o755)
    return bindir


def matches(shown, outlines):
    """Whether every shown line is a whole output line, in order; the first missing one."""
    pos = 0
    for s in shown:
        pat = "^" + ".*".join(re.escape(p) for p in s.rstrip().split("<...>")) + "$"
        while pos < len(outlines) and not re.match(pat, outlines[pos].rstrip()):
            pos += 1
        if pos == len(outlines):
            return s
        pos += 1
    return None


def run_commands(name, qs, cwd, env):
    exports = []
    for block in qs["blocks"]:
        for cmd, shown in block:
            cmd = cmd.replace(DEFAULT_AGENT, env["NETTUNE_AGENT"])
            script = "set -e -o pipefail\n" + "\n".join(exports) + "\n" + cmd + "\n"
            path = os.path.join(cwd, ".cmd.sh")
            open(path, "w").write(script)
            if re.match(r"nettune try\b", cmd):
                p = subprocess.Popen(["script", "-qec", "bash " + path, "/dev/null"], cwd=cwd,
                                     env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
                # ENTER once the prompt has counted down at least once: the
                # README's line is the prompt followed by its next count,
                # which a fixed sleep missed when the CLI started slowly
                # (under ASan, 2 s held one count only).
                got, deadline = b"", time.time() + 60
                while got.count(b"keep these changes?") < 2 and time.time() < deadline:
                    if not select.select([p.stdout], [], [], 0.5)[0]:
                        continue
                    chunk = os.read(p.stdout.fileno(), 65536)
                    if not chunk:
                        break
                    got += chunk
                out, _ = p.communicate(b"\n", timeout=120)
                out = got + out
                err = b""
            else:
                p = subprocess.run(["bash", path], cwd=cwd, env=env, capture_output=True,
                                   timeout=300)
                out, err = p.stdout, p.stderr
            text = (out + b"\n" + err).decode("utf-8", "replace")
            # The CLI's progress line ("\rapplying… 1 s", then "\r<spaces>\r"
            # once the answer came) is gone from a terminal when the next
            # line prints: drop it, or a slow run (under ASan the 220-step
            # apply took over a second) glues it before the README's line.
            text = re.sub(r"(\r[^\r\n]*… \d+ s)+\r *\r", "", text).replace("\r", "")
            # The prompt's counts overwrite each other with \r: one line here.
            outlines = text.split("\n")
            check(p.returncode == 0, "%s: `%s` exited %s:\n%s" % (name, cmd, p.returncode, text[-2000:]))
            missing = matches(shown, outlines)
            check(missing is None, "%s: `%s` no longer prints the README's line\n  %s\nits output:\n%s"
                  % (name, cmd, missing, text[-3000:]))
            if cmd.startswith("export "):
                exports.append(cmd.split("#")[0])


def base_env(work, bindir, url):
    env = dict(os.environ)
    env.update(PATH=bindir + ":" + env["PATH"], NETTUNE_AGENT=url, NO_COLOR="1", TERM="dumb",
               HOME=os.path.join(work, "home"))
    os.makedirs(env["HOME"], exist_ok=True)
    env.pop("NETTUNE_TOKEN", None)
    return env


def write_files(qs, cwd, subst=()):
    for path, text in qs["files"]:
        for a, b in subst:
            text = text.replace(a, b)
        full = os.path.join(cwd, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        open(full, "w").write(text)


def tokens_file(work, name, secret):
    path = os.path.join(work, name + ".tokens")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, ("controller apply %s\n" % secret).encode())
    os.close(fd)
    return path


def get(url, path, token=None, ca=None):
    req = urllib.request.Request(url + path)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    ctx = ssl.create_default_context(cafile=ca) if ca else None
    with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
        return json.load(r)


def operator(qs, work):
    run = Run()
    try:
        root, url = agent(run, work, "operator", "epyc7713-2node-bond")
        cwd = os.path.join(work, "operator")
        os.makedirs(cwd)
        write_files(qs, cwd)
        env = base_env(work, wrapper(work, root), url)
        run_commands("operator", qs, cwd, env)
        txns = get(url, "/v1/transactions")["transactions"]
        check([t["status"] for t in txns] == ["applied"],
              "operator: one applied transaction after the quick start, not %s" % txns)
        # The examples of docs/profiles.md are valid profiles on this host (a section
        # alone is planned inside a profile of its own).
        text = open(os.path.join(SRC, "docs/profiles.md"), encoding="utf-8").read()
        for block in re.findall(r"```json\n(.*?)```", text, re.S):
            doc = block if block.lstrip().startswith("{") else '{"name": "doc-example", %s}' % block
            req = urllib.request.Request(url + "/v1/plan", data=doc.encode(),
                                         headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=30) as r:
                    code, body = r.status, r.read()
            except urllib.error.HTTPError as e:
                code, body = e.code, e.read()
            check(code == 200, "docs/profiles.md's example plans on the EPYC host (%d %s):\n%s"
                  % (code, body[:500], block))
    finally:
        run.stop()


def example(name, qs, work, fixture):
    """A worked example: its profile files, which are the repository's shipped profiles of
    the same path (profiles/...) when they name one, planned and applied on FIXTURE."""
    run = Run()
    try:
        for path, text in qs["files"]:
            shipped = os.path.join(SRC, path)
            if path.startswith("profiles/"):
                # The shipped file says more in its description, which the README leaves out.
                want = json.load(open(shipped)) if os.path.exists(shipped) else None
                if want:
                    want.pop("description", None)
                same = want is not None and json.loads(text) == want
                check(same, "%s: the README's %s is the shipped %s" % (name, path, shipped))
        root, url = agent(run, work, name, fixture)
        cwd = os.path.join(work, name)
        os.makedirs(cwd)
        write_files(qs, cwd)
        env = base_env(work, wrapper(work, root), url)
        run_commands(name, qs, cwd, env)
    finally:
        run.stop()


def ci(qs, work):
    run = Run()
    try:
        secret = os.urandom(16).hex()
        root, url = agent(run, work, "ci", "epyc7713-2node-bond",
                          ["--tokens", tokens_file(work, "ci", secret)])
        before = open(os.path.join(root, "ethtool/enos0.json")).read()
        port = free_port()
        run.start(["iperf3", "-s", "-1", "-p", str(port)], os.path.join(work, "iperf3.out"),
                  os.path.join(work, "iperf3.err"))
        time.sleep(0.5)
        cwd = os.path.join(work, "ci")
        os.makedirs(cwd)
        write_files(qs, cwd)
        env = base_env(work, wrapper(work, root), url)
        env.update(CI_NETTUNE_TOKEN=secret, BENCH_PEER="127.0.0.1", BENCH_PORT=str(port))
        run_commands("ci", qs, cwd, env)
        after = open(os.path.join(root, "ethtool/enos0.json")).read()
        check(json.loads(before) == json.loads(after), "ci: enos0's rings are back as they were")
    finally:
        run.stop()


def fleet(qs, work):
    for tool in ("ansible-playbook", "openssl"):
        if not shutil.which(tool):
            print("SKIP: %s is not installed (Debian package ansible-core): the fleet quick start "
                  "did not run" % tool)
            return False
    run = Run()
    try:
        certs = os.path.join(work, "certs")
        os.makedirs(certs)
        ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
        sh = ("printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth\\n' > srv.ext && "
              "openssl req -x509 %s -keyout ca.key -out ca.pem -days 2 -subj '/CN=quickstart CA' && "
              "openssl req %s -keyout srv.key -out srv.csr -subj '/CN=127.0.0.1' && "
              "openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem "
              "-days 2 -extfile srv.ext" % (ec, ec))
        r = subprocess.run(["sh", "-c", sh], cwd=certs, capture_output=True)
        if r.returncode:
            raise SystemExit("openssl: " + r.stderr.decode()[-500:])
        ca = os.path.join(certs, "ca.pem")
        secret = os.urandom(16).hex()
        tls = ["--tls-cert", os.path.join(certs, "srv.pem"), "--tls-key", os.path.join(certs, "srv.key")]
        _, epyc = agent(run, work, "epyc", "epyc7713-2node-bond",
                        ["--tokens", tokens_file(work, "epyc", secret)] + tls)
        _, x460 = agent(run, work, "x460", "x460-4node-8nic",
                        ["--tokens", tokens_file(work, "x460", secret)] + tls)
        check(epyc.startswith("https://"), "fleet: the agents serve HTTPS (%s)" % epyc)
        cwd = os.path.join(work, "fleet")
        os.makedirs(cwd)
        write_files(qs, cwd, [("https://epyc-1.example.net:8470", epyc),
                              ("https://x460-1.example.net:8470", x460),
                              ("/etc/nettune/fleet-ca.pem", ca)])
        env = base_env(work, os.path.join(work, "nobin"), "http://127.0.0.1:1")
        env.update(FLEET_TOKEN=secret, ANSIBLE_LOCAL_TEMP=os.path.join(work, "ansible-tmp"),
                   ANSIBLE_NOCOLOR="1")
        for block in qs["blocks"]:
            for i, (cmd, shown) in enumerate(block):
                block[i] = (cmd.replace("/path/to/nettune", SRC), shown)
        # The check-mode run must leave no transaction: look between the two runs.
        checkonly = {"blocks": [[c for c in b if "--check" in c[0] or c[0].startswith("export")]
                                for b in qs["blocks"]]}
        rest = {"blocks": [[c for c in b if "--check" not in c[0]] for b in qs["blocks"]]}
        run_commands("fleet", checkonly, cwd, env)
        for name, url in (("epyc", epyc), ("x460", x460)):
            n = get(url, "/v1/transactions", secret, ca)["total"]
            check(n == 0, "fleet: --check made no transaction on %s (%d)" % (name, n))
        run_commands("fleet", rest, cwd, env)
        for name, url, profile in (("epyc", epyc, "epyc-fix"), ("x460", x460, "x460-local")):
            t = get(url, "/v1/transactions", secret, ca)["transactions"]
            got = [(x["status"], (x["profile"] or {}).get("name")) for x in t]
            check(got == [("applied", profile)],
                  "fleet: %s has its group's profile applied and confirmed: %s" % (name, got))
        return True
    finally:
        run.stop()


def main():
    qs = parse(os.path.join(SRC, "README.md"))
    # The whole-host worked example stands in docs/profiles.md, tested as the README's are.
    host = parse(os.path.join(SRC, "docs/profiles.md")).get("host")
    if host:
        qs["host"] = host
    for name in ("operator", "ci", "fleet", "recipe", "host"):
        check(name in qs and qs[name]["blocks"], "README (or docs/profiles.md) has the %s quick start" % name)
    # docs/fleet.md shows the same fleet example: the same files and commands.
    page = parse(os.path.join(SRC, "docs/fleet.md")).get("fleet", {"files": [], "blocks": []})
    check(page == qs.get("fleet"), "docs/fleet.md shows the README's fleet files and commands")
    for tool in ("script", "iperf3", "jq"):
        if not shutil.which(tool):
            print("SKIP: %s is not installed" % tool)
            return 77
    work = tempfile.mkdtemp(prefix="nt-quickstart-")
    ran_fleet = False
    try:
        if "operator" in qs:
            operator(qs["operator"], work)
        if "ci" in qs:
            ci(qs["ci"], work)
        if "fleet" in qs:
            ran_fleet = fleet(qs["fleet"], work)
        for name in ("recipe", "host"):
            if name in qs:
                example(name, qs[name], work, "epyc7713-2node-bond")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        print("FAIL: %d of %d checks" % (len(failures), checks))
        return 1
    if not ran_fleet:
        return 77
    print("ok: %d checks, the README's three quick starts as written" % checks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
