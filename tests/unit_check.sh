#!/bin/sh
# SPDX-License-Identifier: MIT
# The systemd unit this build generates (packaging/smd.service) is valid
# (`systemd-analyze verify`, with ExecStart pointed at the built smd) and as
# hardened as intended: `systemd-analyze security --offline=yes` rates its
# exposure at most 2.0 ("OK"; 10 is an unhardened service), and the
# settings smd depends on are there (Type=notify, WatchdogSec, the umad
# device allowed under DevicePolicy=closed); and smd works with exactly the
# unit's capability bounding set (setpriv), socket_group included.
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

# smd runs with exactly the unit's capability bounding set (and no new
# privileges), set with setpriv: it comes up, answers, and can give the
# control socket to a socket_group root is not a member of (CAP_CHOWN).
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit" | tr ' ' '\n' | grep . |
	sed 's/^CAP_//' | tr 'A-Z' 'a-z' | sed 's/^/,+/' | tr -d '\n')
grp=$(getent group daemon | cut -d: -f1)
if ! command -v setpriv >/dev/null || [ "$(id -u)" != 0 ] || [ -z "$grp" ]; then
	echo "unit: capability check not run (needs root, setpriv and a group 'daemon')"
else
	printf 'sweep_interval: 0\nsocket_group: %s\n' "$grp" >"$work/sg.yaml"
	setpriv --bounding-set="-all$caps" --inh-caps=-all --no-new-privs \
		"$top_builddir/smd/smd" -f -c "$work/sg.yaml" --backend mock \
		--topology "$top_srcdir/tests/data/dryrun/ft8.ibnd" --socket "$work/s.sock" \
		--state-dir "$work/state" 2>"$work/smd.err" &
	pid=$!
	i=0
	until "$top_builddir/smd/smctl" --socket "$work/s.sock" status >/dev/null 2>&1 || [ $i -gt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	"$top_builddir/smd/smctl" --socket "$work/s.sock" status >/dev/null 2>&1 ||
		bad "smd under the unit's bounding set ($caps) does not answer: $(cat "$work/smd.err")"
	bnd=$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/$pid/status)
	[ "$(stat -c %G "$work/s.sock" 2>/dev/null)" = "$grp" ] ||
		bad "socket group not given under the unit's capabilities: $(grep SMD-0530 "$work/smd.err")"
	kill -TERM "$pid"
	wait "$pid" || bad "smd under the unit's capabilities: exit $?"
	echo "capabilities: bounding set ${caps#,} (CapBnd $bnd): smd up, socket group $grp"
fi
[ $fail = 0 ] && echo "unit: verify clean"
exit $fail
