#!/bin/sh
# SPDX-License-Identifier: MIT
# The systemd unit this build generates (packaging/smd.service) is valid
# (`systemd-analyze verify`, with ExecStart pointed at the built smd) and as
# hardened as intended: `systemd-analyze security --offline=yes` rates its
# exposure at most 2.0 ("OK"; 10 is an unhardened service), and the
# settings smd depends on are there (Type=notify, WatchdogSec, the umad
# device allowed under DevicePolicy=closed).
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
unit="$top_builddir/packaging/smd.service"
command -v systemd-analyze >/dev/null ||
	{ echo "FAIL: systemd-analyze not found (Debian package systemd, see packaging/deps.sh)"; exit 1; }
[ -f "$unit" ] || { echo "FAIL: $unit not built"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/smd-unit.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

sed "s|^ExecStart=[^ ]*/smd |ExecStart=$top_builddir/smd/smd |" "$unit" >"$work/smd.service"
grep -q "^ExecStart=$top_builddir/smd/smd -f -c /.*/smd/smd.yaml$" "$work/smd.service" ||
	bad "unexpected ExecStart: $(grep ^ExecStart "$unit")"
out=$(cd "$work" && systemd-analyze verify --man=no ./smd.service 2>&1)
rc=$?
[ $rc = 0 ] && [ -z "$out" ] || bad "systemd-analyze verify (exit $rc): $out"
sec=$(cd "$work" && systemd-analyze security --offline=yes ./smd.service 2>&1)
score=$(echo "$sec" | sed -n 's/.*Overall exposure level for smd.service: \([0-9.]*\).*/\1/p')
echo "systemd-analyze security: exposure ${score:-?} (0 best, 10 worst)"
[ -n "$score" ] || bad "no exposure level: $sec"
[ -n "$score" ] && [ "$(echo "$score <= 2.0" | awk '{print ($1 <= $3)}')" = 1 ] ||
	{ bad "exposure $score above 2.0"; echo "$sec" | grep "✗"; }
for want in "Type=notify" "WatchdogSec=" "DevicePolicy=closed" "DeviceAllow=char-infiniband_mad rw" \
	"StateDirectory=smd" "RuntimeDirectory=smd" "ExecReload=/bin/kill -HUP \$MAINPID"; do
	grep -q "^$want" "$unit" || bad "the unit lacks $want"
done
[ $fail = 0 ] && echo "unit: verify clean"
exit $fail
