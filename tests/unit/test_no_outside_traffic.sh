#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# No test, benchmark or set-up script sends packets off this machine, and
# only the set-up (prepare*.sh, deploy/) downloads
# (tests/unit/no_outside_traffic.py says what is allowed): the repository's
# own scripts have no finding, and the check finds each kind of planted one.
set -u
cd "${NT_SRC:?NT_SRC: the source tree}" || exit 1
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
fail=0
chk=tests/unit/no_outside_traffic.py

python3 "$chk" . || { echo "FAIL: a script may send packets off the machine (above)"; fail=1; }

# The check can fail: each planted line is found, the allowed ones are not.
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/tests/live" "$t/tests/lab"
cat > "$t/tests/live/test_bad.sh" <<'EOF'
read -r gw dev < <(ip route show default | awk '{ print $3, $5 }')
timeout 0.3 bash -c "exec 3<>/dev/tcp/$gw/80"
exec 3<>/dev/tcp/192.0.2.1/443
ping -c 1 10.1.2.3
curl -s http://example.com/
ip -4 r get 1.1.1.1
(cd "$here" && npm ci --no-audit) >log 2>&1
systemd-nspawn -D "$root" /bin/sh -c "apt-get update -qq && apt-get install -y -qq /root/x.deb"
EOF
cat > "$t/tests/live/test_good.sh" <<'EOF'
ip -n "$ns" addr add 10.214.0.2/24 dev veth1
ip netns exec "$ns" bash -c '</dev/tcp/10.214.0.2/5201'
curl -s "$url/v1/health" http://127.0.0.1:8470/ http://[::1]:1/
iperf3 -c 10.214.0.2 -t 1
# a comment may name ip route show default
skip "npm packages missing: npm ci installs them; apt-get install nodejs"
sh -c "apt-get install -y --no-download /root/x.deb"
EOF
mkdir -p "$t/tests/systemd"
printf '%s\n' 'apt-get update -qq' 'npm ci' 'mmdebstrap bookworm "$root"' > "$t/tests/systemd/prepare.sh"
cat > "$t/tests/lab/test_guest.sh" <<'EOF'
timeout 0.5 bash -c 'exec 3<>/dev/tcp/10.0.2.2/80'
EOF
cp "$t/tests/lab/test_guest.sh" "$t/tests/live/test_guest.sh"
got=$(python3 "$chk" "$t" tests)
for want in "test_bad.sh:1: reads the default route" "test_bad.sh:2: /dev/tcp or /dev/udp to a destination found at run time" \
	"test_bad.sh:3: /dev/tcp or /dev/udp to 192.0.2.1" "test_bad.sh:4: a network client with 10.1.2.3" \
	"test_bad.sh:5: a network client with a URL to example.com" "test_bad.sh:6: reads the default route" \
	"live/test_guest.sh:1: /dev/tcp or /dev/udp to 10.0.2.2" "test_bad.sh:7: downloads (npm ci)" \
	"test_bad.sh:8: downloads (apt-get update)"; do
	grep -qF "$want" <<<"$got" || { echo "FAIL: the check missed '$want'; it said:"; echo "$got"; fail=1; }
done
if grep -q -e "test_good.sh" -e "lab/test_guest.sh" -e "systemd/prepare.sh:" <<<"$got"; then
	echo "FAIL: the check found allowed destinations:"; echo "$got"; fail=1
fi
n=$(grep -c ': ' <<<"$got")
[ "$n" -eq 9 ] || { echo "FAIL: 9 findings planted, $n found:"; echo "$got"; fail=1; }
[ $fail -eq 0 ] && echo "no script sends packets off the machine or downloads outside the set-up; the check finds all 9 planted"
exit $fail
