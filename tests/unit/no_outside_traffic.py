#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tests and benchmarks send packets only to loopback, to network namespaces
they make themselves and to the lab guest's user-mode network: never to the
default gateway or any other address (CI machines are watched for such
traffic). This reads every script and test source under the given folders
and names each place that could send elsewhere:

- reading the default route or gateway (`ip route show default`, `ip route
  get`, /proc/net/route, `route -n`, `netstat -r`): the first step to
  traffic off the machine;
- bash's /dev/tcp or /dev/udp to a variable (a destination found at run
  time) or to an address that is not allowed;
- a network client (curl, wget, ping, iperf3, nc, socat, netperf, neper,
  ssh, telnet) on a line with an IPv4 address that is not allowed, or with
  a URL naming a host other than loopback;
- a download (npm ci/install, npx, apt-get update/download/install without
  --no-download or systemd-nspawn's --private-network on its line, mmdebstrap, debootstrap, pip install, git clone/fetch/pull,
  wget) outside the set-up: the scripts named prepare*.sh (tests/prepare.sh
  and what it runs, before ctest) and deploy/.

Allowed: 127.0.0.0/8, ::1, localhost and 0.0.0.0 (a listening address); an
address the same file gives an interface of its own namespaces (`ip ...
addr add ADDR`); under tests/lab/, qemu's user-mode network inside the
guest (10.0.2.0/24), which never reaches the host's network; the Debian
mirror and the npm registry for the set-up alone, as the README's commands
install from them. Usage: no_outside_traffic.py ROOT [FOLDER...]; prints one line a
finding, exits 1 when there is one."""
import os
import re
import sys

EXTS = (".sh", ".bash", ".py", ".c", ".h", ".js", ".mjs", ".ts", ".yml", ".yaml")
SKIP_DIRS = {"node_modules", "fixtures", "seeds", ".git"}
ROUTE = re.compile(r"\bip\b(\s+-\S+)*\s+(r|ro|rou|rout|route)\b[^\n#]*\b(default|get)\b"
                   r"|/proc/net/route\b|\broute\s+-n\b|\bnetstat\s+-\w*r")
DEVNET = re.compile(r"/dev/(tcp|udp)/([^/\s'\"]+)")
CLIENT = re.compile(r"(?<![\w-])(curl|wget|ping|ping6|iperf3|nc|ncat|socat|netperf|neper|tcp_rr|tcp_stream|ssh|telnet)(?![\w-])")
IPV4 = re.compile(r"(?<![\d.])((?:\d{1,3}\.){3}\d{1,3})(?![\d.])")
URL_HOST = re.compile(r"\bhttps?://([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\])")
ADDR_ADD = re.compile(r"\baddr(?:ess)?\s+(?:add|replace)\s+((?:\d{1,3}\.){3}\d{1,3})")
MIRRORS = {"deb.debian.org"}
DOWNLOAD = re.compile(r"(?<![\w./-])(npm\s+(ci|install|i|update)\b|npx\s|apt-get\b[^\n]*?\s(update|download|install|upgrade|source)\b"
                      r"|apt\s+(update|install|download)\b|mmdebstrap\s|debootstrap\s|pip3?\s+install\b"
                      r"|git\s+(clone|fetch|pull)\b|wget\s)")
# The text of a message (skip "...", echo "...") names commands, runs none.
MESSAGE = re.compile(r"\b(skip|fail|echo|die|log|pass|check|offline|printf|print|console\.log)\s*\(?\s*"
                     r"(\"[^\"]*\"|'[^']*'|`[^`]*`)")


def loopback(host):
    return (host.startswith("127.") or host in ("localhost", "::1", "[::1]", "0.0.0.0"))


def own_addresses(text):
    """Addresses the file gives interfaces it makes (its own namespaces)."""
    return set(ADDR_ADD.findall(text))


def allowed(host, own, lab):
    if loopback(host) or host in own:
        return True
    return lab and host.startswith("10.0.2.")


def setup_script(path):
    """The set-up may download: deploy/ and the prepare*.sh scripts."""
    return path.startswith("deploy/") or os.path.basename(path).startswith("prepare")


def check_text(path, text, lab):
    """Findings of one file as (line number, what) pairs."""
    found = []
    own = own_addresses(text)
    setup = setup_script(path)
    for n, line in enumerate(text.splitlines(), 1):
        code = line.strip()
        if code.startswith("#") or code.startswith("//") or code.startswith("*"):
            continue
        if not setup:
            cmd = MESSAGE.sub("", line)
            m = DOWNLOAD.search(cmd)
            # apt-get offline, or in a container without a network
            if m and "--no-download" not in cmd and "--private-network" not in cmd:
                found.append((n, "downloads (%s) outside the set-up (tests/prepare.sh)" % m.group(1).strip()))
        if ROUTE.search(line):
            found.append((n, "reads the default route or gateway"))
        for _, host in DEVNET.findall(line):
            if host.startswith("$") or "$(" in host:
                found.append((n, "/dev/tcp or /dev/udp to a destination found at run time (%s)" % host))
            elif not allowed(host, own, lab):
                found.append((n, "/dev/tcp or /dev/udp to %s, neither loopback nor the test's own namespace" % host))
        if not CLIENT.search(line):
            continue
        for a in IPV4.findall(line):
            if not allowed(a, own, lab):
                found.append((n, "a network client with %s, neither loopback nor the test's own namespace" % a))
        for host in URL_HOST.findall(line):
            if not allowed(host, own, lab) and host not in MIRRORS:
                found.append((n, "a network client with a URL to %s" % host))
    return found


def files(root, folders):
    for folder in folders:
        top = os.path.join(root, folder)
        if os.path.isfile(top):
            yield top
            continue
        for d, dirs, names in os.walk(top):
            dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS)
            for name in sorted(names):
                if name.endswith(EXTS) or name in ("init", "run"):
                    yield os.path.join(d, name)


def main(argv):
    root = argv[1] if len(argv) > 1 else "."
    folders = argv[2:] or ["tests", "bench", "deploy", ".ci"]
    # This file and its test, whose planted findings prove it finds them.
    here = os.path.dirname(os.path.realpath(__file__))
    me = {os.path.realpath(__file__), os.path.join(here, "test_no_outside_traffic.sh")}
    bad = checked = 0
    for path in files(root, folders):
        if os.path.realpath(path) in me:
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError as e:
            print("%s: cannot read: %s" % (path, e))
            bad += 1
            continue
        checked += 1
        rel = os.path.relpath(path, root)
        for n, what in check_text(rel, text, rel.startswith("tests/lab/")):
            print("%s:%d: %s" % (rel, n, what))
            bad += 1
    print("%d file(s) read, %d finding(s)" % (checked, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
