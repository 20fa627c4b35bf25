#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# No file outside the allowed targets is ever opened for writing, created,
# renamed, removed or made a directory by the agent.
#
# The agent runs under strace on a COPY of the EPYC host fixture and is driven with
# curl through plan, apply (IRQ affinity, rings, bonds, sysctls), rollback,
# stored profiles and hostile input: "../../etc" names, "eth0/../x",
# over-long and non-printable names, sysctl keys like
# "net.ipv4/../../../etc/passwd", IRQ numbers that are not numbers. Then
# every open with O_WRONLY / O_RDWR / O_CREAT / O_TRUNC (whether it
# succeeded or not: an attempt is what matters) and every rename, unlink,
# mkdir, rmdir, link and symlink must name only:
#   ROOT/proc/irq/N/<file>, ROOT/proc/sys/net/..., ROOT/sys/class/net/IF/bonding/<file>,
#   ROOT/sys/devices/.../bonding/<file>, ROOT/ethtool/IF.json (and its temporary
#   .IF.json.XXXXXX), and the state directory; on a fixture root also
#   <file>.nt-new beside an attribute (how a fixture attribute is replaced).
# The checker is run on a planted bad log first, so it is shown to fail.
# It lives in live/ because it runs a tool (strace) that needs ptrace.
set -u
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*"; }
for t in strace curl jq; do
	command -v $t >/dev/null || { echo "SKIP: $t is not installed (Debian package $t)"; exit 77; }
done
# strace needs ptrace; a container may forbid it.
strace -f -o /dev/null true 2>/dev/null || { echo "SKIP: strace cannot trace here (ptrace not permitted)"; exit 77; }

work=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

root=$work/root
state=$work/state
cp -a "$NT_FIXTURES/epyc7713-2node-bond" "$root"
root=$(cd "$root" && pwd -P)
mkdir -p "$state"
state=$(cd "$state" && pwd -P)

# check_log LOG: prints every offending line, returns 1 when there is one.
check_log() {
	python3 - "$1" "$root" "$state" <<'PY'
import re, sys
log, root, state = sys.argv[1], sys.argv[2], sys.argv[3]
R, S = re.escape(root), re.escape(state)
# On a fixture root an attribute is replaced through NAME.nt-new beside it.
allowed = [
    rf'^{R}/proc/irq/[0-9]+/[a-z_]+(\.nt-new)?$',
    rf'^{R}/proc/sys/net/[A-Za-z0-9_./-]+$',
    rf'^{R}/sys/class/net/[^/]+/bonding/[a-z_]+(\.nt-new)?$',
    rf'^{R}/sys/devices/[A-Za-z0-9_.:/-]+/bonding/[a-z_]+(\.nt-new)?$',
    rf'^{R}/ethtool/\.?[A-Za-z0-9_.:-]+\.json(\.[A-Za-z0-9]{{6}})?$',
    rf'^{S}(/[^/]+)*$',
]
write_flags = ('O_WRONLY', 'O_RDWR', 'O_CREAT', 'O_TRUNC')
# strace -y: a descriptor argument is printed as 3</path>; AT_FDCWD as is.
strarg = r'"((?:[^"\\]|\\.)*)"'
dirfd = r'(AT_FDCWD(?:<[^>]*>)?|-?\d+<([^>]*)>|-?\d+)'
pats = {
    'open': re.compile(r'\b(open|creat)\(' + strarg + r'(?:, ([A-Z_|]+))?'),
    'openat': re.compile(r'\b(openat2?)\(' + dirfd + r', ' + strarg + r'(?:, (\{flags=)?([A-Z_|]+))?'),
    'path1': re.compile(r'\b(unlink|rmdir|mkdir|truncate)\(' + strarg),
    'at1': re.compile(r'\b(unlinkat|mkdirat)\(' + dirfd + r', ' + strarg),
    'path2': re.compile(r'\b(rename|link|symlink)\(' + strarg + r', ' + strarg),
    'at2': re.compile(r'\b(renameat2?|linkat)\(' + dirfd + r', ' + strarg + r', ' + dirfd + r', ' + strarg),
    'symat': re.compile(r'\b(symlinkat)\(' + strarg + r', ' + dirfd + r', ' + strarg),
}
cwd = root  # the agent never changes directory; relative paths would be a finding anyway

def full(d, dpath, p):
    if p.startswith('/'):
        return p
    if d and not d.startswith('AT_FDCWD') and dpath:
        return dpath.rstrip('/') + '/' + p
    return '(relative)' + p

def ok(p):
    if '/../' in p + '/' or '/./' in p + '/' or p.startswith('(relative)'):
        return False
    return any(re.match(a, p) for a in allowed)

bad = 0
checked = 0
for line in open(log, errors='replace'):
    targets = []
    m = pats['openat'].search(line)
    if m:
        flags = m.group(6) or ''
        if any(f in flags for f in write_flags):
            targets.append(full(m.group(2), m.group(3), m.group(4)))
    else:
        m = pats['open'].search(line)
        if m and (m.group(1) == 'creat' or any(f in (m.group(3) or '') for f in write_flags)):
            targets.append(m.group(2))
    for k in ('path1',):
        m = pats[k].search(line)
        if m:
            targets.append(m.group(2))
    m = pats['at1'].search(line)
    if m:
        targets.append(full(m.group(2), m.group(3), m.group(4)))
    m = pats['path2'].search(line)
    if m:
        targets += [m.group(2), m.group(3)]
    m = pats['at2'].search(line)
    if m:
        targets += [full(m.group(2), m.group(3), m.group(4)), full(m.group(5), m.group(6), m.group(7))]
    m = pats['symat'].search(line)
    if m:
        targets.append(full(m.group(3), m.group(4), m.group(5)))
    for t in targets:
        checked += 1
        if not ok(t):
            bad += 1
            print('stray write:', t, '<-', line.strip()[:300])
print(f'checked {checked} write targets', file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

# 1. The checker fails on bad lines and passes good ones.
cat > "$work/fake.log" <<EOF
100 openat(AT_FDCWD</>, "$root/proc/irq/5/smp_affinity_list", O_WRONLY|O_CLOEXEC|O_NOCTTY|O_TRUNC) = 7</x>
100 openat(AT_FDCWD</>, "$state/nettune.db-wal", O_RDWR|O_CREAT|O_NOFOLLOW|O_CLOEXEC, 0644) = 8</y>
100 openat(AT_FDCWD</>, "$root/etc/passwd", O_RDONLY|O_CLOEXEC) = 9</z>
EOF
if check_log "$work/fake.log" > "$work/fake.out" 2>&1; then ok; else bad "checker refused good lines: $(cat "$work/fake.out")"; fi
for line in \
	"101 openat(AT_FDCWD</>, \"$root/etc/passwd\", O_WRONLY|O_TRUNC) = -1 ENOENT (No such file or directory)" \
	"101 openat(AT_FDCWD</>, \"$root/proc/sys/net/../../../etc/x\", O_WRONLY) = 3</x>" \
	"101 openat(AT_FDCWD</>, \"/etc/shadow\", O_RDWR) = 3</etc/shadow>" \
	"101 openat(5<$root/proc>, \"irq/../../etc/x\", O_WRONLY) = 3</x>" \
	"101 rename(\"$state/a\", \"/tmp/b\") = 0" \
	"101 renameat2(AT_FDCWD</>, \"$root/ethtool/.enos0.json.AbC123\", AT_FDCWD</>, \"$root/etc/enos0.json\", 0) = 0" \
	"101 unlink(\"$root/sys/class/net/enos0/mtu\") = 0" \
	"101 mkdir(\"/var/lib/nettune\", 0700) = 0" \
	"101 creat(\"/tmp/x\", 0600) = 3</tmp/x>" ; do
	printf '%s\n' "$line" > "$work/fake.log"
	if check_log "$work/fake.log" > /dev/null 2>&1; then bad "checker missed: $line"; else ok; fi
done

# 2. The agent under strace.
strace -f -y -qq -o "$work/trace" \
	-e trace=open,openat,openat2,creat,rename,renameat,renameat2,unlink,unlinkat,mkdir,mkdirat,rmdir,link,linkat,symlink,symlinkat,truncate \
	"$NT_BIN" serve --listen 127.0.0.1:0 --root "$root" --state-dir "$state" > "$work/out" 2> "$work/err" &
pid=$!
for _ in $(seq 200); do grep -q listening "$work/out" && break; sleep 0.1; done
url=$(sed -n 's/^listening on //p' "$work/out")
[ -n "$url" ] || { echo "FAIL: agent did not start"; cat "$work/err"; exit 1; }

req() { # req METHOD PATH [BODY] -> prints status
	if [ $# -ge 3 ]; then
		curl -s --path-as-is -o "$work/body" -w '%{http_code}' -X "$1" -H 'Content-Type: application/json' --data-binary "$3" "$url$2"
	else
		curl -s --path-as-is -o "$work/body" -w '%{http_code}' -X "$1" "$url$2"
	fi
}
expect() { # expect WANT METHOD PATH [BODY]
	local want=$1; shift
	local got; got=$(req "$@")
	if [[ "$got" =~ ^($want)$ ]]; then ok; else bad "$1 $2: got $got, want $want ($(head -c 200 "$work/body"))"; fi
}

good='{"name":"good","irq_affinity":[{"interface":"enos0","policy":"local"}],"rings":[{"interface":"enos*","rx":4096}],"bonds":[{"interface":"bond0","xmit_hash_policy":"layer3+4"}],"sysctl":{"net.core.rmem_max":"16777216","net.ipv4.tcp_rmem":"4096 87380 16777216"}}'
expect 200 POST /v1/plan "$good"
expect 201 POST /v1/transactions "{\"profile\":$good}"
id=$(jq -r .id "$work/body")
status=$(jq -r .status "$work/body")
if [ "$status" = applied ]; then ok; else bad "apply status $status: $(jq -c '[.error, (.steps[]|select(.result!="applied"))]' "$work/body")"; fi
nsteps=$(jq '.steps | length' "$work/body")
if [ "${nsteps:-0}" -gt 3 ]; then ok; else bad "only $nsteps steps applied"; fi
expect 201 POST "/v1/transactions/$id/rollback" '{}'
expect '20[01]' PUT /v1/profiles/good "$good"
expect 201 POST /v1/transactions '{"profile_name":"good"}'
expect 204 DELETE /v1/profiles/good

long=$(printf 'a%.0s' $(seq 300))
for name in '..%2F..%2Fetc' 'eth0%2F..%2Fx' '%2E%2E' "$long" 'eth0%01' 'a%2Fb' '..'; do
	expect '400|404' GET "/v1/nics/$name"
	expect '400|404' PUT "/v1/profiles/$name" "$good"
	expect '400|404' DELETE "/v1/profiles/$name"
	expect '400|404|405' POST "/v1/transactions/$name/rollback" '{}'
done
expect '400|404' GET '/v1/nics/../../etc/passwd'
expect '400|404' PUT '/v1/profiles/../../etc/x' "$good"
for body in \
	'{"sysctl":{"net.ipv4/../../../etc/passwd":"1"}}' \
	'{"sysctl":{"net.ipv4.../../../etc/passwd":"1"}}' \
	'{"sysctl":{"../../etc/passwd":"1"}}' \
	'{"sysctl":{"net.core.rmem_max/../../../../etc/x":"1"}}' \
	"{\"sysctl\":{\"net.$long\":\"1\"}}" \
	'{"sysctl":{"net.core.rmem_max":"1\n2"}}' \
	'{"rings":[{"interface":"../../etc","rx":4096}]}' \
	'{"rings":[{"interface":"eth0/../x","rx":4096}]}' \
	"{\"rings\":[{\"interface\":\"$long\",\"rx\":4096}]}" \
	'{"bonds":[{"interface":"../../../etc","xmit_hash_policy":"layer3+4"}]}' \
	'{"bonds":[{"interface":"bond0/../../x","xmit_hash_policy":"layer3+4"}]}' \
	'{"irq_affinity":[{"interface":"../../etc","cpus":"0"}]}' \
	'{"irq_affinity":[{"interface":"enos0","cpus":"0/../../x"}]}' \
	'{"name":"../../etc/x","sysctl":{}}' ; do
	expect '4[0-9][0-9]' POST /v1/plan "$body"
	expect '4[0-9][0-9]' POST /v1/transactions "{\"profile\":$body}"
	expect '4[0-9][0-9]' PUT /v1/profiles/x "$body"
done
expect '4[0-9][0-9]' POST /v1/transactions '{"profile_name":"../../etc/passwd"}'

# Stop the agent itself (strace's child), then strace follows it out; a
# SIGTERM to strace would only detach it and leave the agent running.
agent=$(cat /proc/$pid/task/$pid/children 2>/dev/null | awk '{print $1}')
[ -n "$agent" ] && kill "$agent"
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && { bad "the agent did not stop on SIGTERM"; kill "$pid"; }
wait "$pid" 2>/dev/null; pid=

# 3. Check what it did.
nw=$(grep -cE 'O_WRONLY|O_RDWR|O_CREAT' "$work/trace")
if [ "$nw" -gt 5 ]; then ok; else bad "the trace holds only $nw writes: is strace seeing the agent?"; fi
# openat, or openat2 (a fixture path without symlinks) with its flags in a struct.
if grep -qE "$root/proc/sys/net/core/rmem_max\", (\{flags=)?O_WRONLY" "$work/trace"; then ok; else bad "the sysctl write is not in the trace"; fi
if check_log "$work/trace" > "$work/stray" 2> "$work/checked"; then ok; else bad "$(cat "$work/stray")"; fi
cat "$work/checked"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
