#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The unit's sandbox, as systemd scores it: `systemd-analyze security
# --offline=true` on deploy/nettune.service must stay at 2.5 ("OK") or
# better, and the unit must parse without warnings (systemd-analyze
# verify would complain of unknown settings). tests/systemd/run.sh shows
# the same unit working under real systemd.
set -u
unit="$NT_SRC/deploy/nettune.service"
command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze missing (Debian package systemd)"; exit 77; }
out=$(systemd-analyze security --offline=true --no-pager "$unit" 2>&1)
score=$(sed -n 's/.*Overall exposure level for nettune.service: \([0-9.]*\).*/\1/p' <<<"$out")
if [ -z "$score" ]; then
	grep -q "unrecognized option\|Unknown option" <<<"$out" &&
		{ echo "SKIP: this systemd-analyze has no --offline"; exit 77; }
	echo "FAIL: no score from systemd-analyze:"; echo "$out"; exit 1
fi
echo "exposure $score"
fail=0
awk -v s="$score" 'BEGIN { exit !(s <= 2.5) }' || { echo "FAIL: exposure $score > 2.5"; fail=1; }
# Unknown or misspelt settings are reported on stderr as the unit is read.
if grep -q "Unknown key\|Unknown lvalue\|Failed to parse" <<<"$out"; then
	echo "FAIL: the unit has settings systemd does not understand:"; grep "Unknown\|Failed" <<<"$out"; fail=1
fi
for s in "Type=notify" "WatchdogSec=" "Restart=on-failure" "ExecReload=" "ProtectSystem=strict"; do
	grep -q "^$s" "$unit" || { echo "FAIL: $s missing"; fail=1; }
done
[ $fail -eq 0 ] && echo "1 passed, 0 failed"
exit $fail
