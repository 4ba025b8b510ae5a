#!/bin/sh
# SPDX-License-Identifier: MIT
# The systemd unit this build generates (packaging/smd.service) is valid
# (`systemd-analyze verify`, with ExecStart pointed at the built smd) and as
# hardened as intended: `systemd-analyze security --offline=yes` rates its
# exposure at most 2.0 ("OK"; 10 is an unhardened service), and the
# settings smd depends on are there (Type=notify, WatchdogSec, the umad
# device allowed under DevicePolicy=closed); and smd works with exactly the
# unit's capability bounding set (setpriv), socket_group and the switch to
# user: included.
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

sed -e "s|^ExecStart=[^ ]*/smd |ExecStart=$top_builddir/smd/smd |" \
	-e "s|^ExecReload=[^ ]*/smctl |ExecReload=$top_builddir/smd/smctl |" "$unit" >"$work/smd.service"
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
	"StateDirectory=smd" "RuntimeDirectory=smd" "ExecReload=/.*/smctl reload$"; do
	grep -q "^$want" "$unit" || bad "the unit lacks $want"
done

# smd runs with exactly the unit's capability bounding set (and no new
# privileges), set with setpriv: it comes up, answers, and can give the
# control socket to a socket_group root is not a member of (CAP_CHOWN).
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit" | tr ' ' '\n' | grep . |
	sed 's/^CAP_//' | tr 'A-Z' 'a-z' | sed 's/^/,+/' | tr -d '\n')
grp=$(getent group daemon | cut -d: -f1)
# bounded NAME CONFIG-TEXT: smd -f on a mock fabric inside the unit's
# bounding set, no new privileges; socket $work/NAME.sock, log $work/NAME.err;
# waits until it answers; sets pid
bounded() {
	printf "$2" >"$work/$1.yaml"
	setpriv --bounding-set="-all$caps" --inh-caps=-all --no-new-privs \
		"$top_builddir/smd/smd" -f -c "$work/$1.yaml" --backend mock \
		--topology "$top_srcdir/tests/data/dryrun/ft8.ibnd" --socket "$work/$1.sock" \
		--state-dir "$work/$1.state" 2>"$work/$1.err" &
	pid=$!
	i=0
	until "$top_builddir/smd/smctl" --socket "$work/$1.sock" status >/dev/null 2>&1 || [ $i -gt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	"$top_builddir/smd/smctl" --socket "$work/$1.sock" status >/dev/null 2>&1 ||
		bad "$1: smd under the unit's bounding set ($caps) does not answer: $(cat "$work/$1.err")"
}
if ! command -v setpriv >/dev/null || [ "$(id -u)" != 0 ] || [ -z "$grp" ]; then
	echo "unit: capability check not run (needs root, setpriv and a group 'daemon')"
else
	bounded sg "sweep_interval: 0\nsocket_group: $grp\n"
	bnd=$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/$pid/status)
	[ "$(stat -c %G "$work/sg.sock" 2>/dev/null)" = "$grp" ] ||
		bad "socket group not given under the unit's capabilities: $(grep SMD-0530 "$work/sg.err")"
	kill -TERM "$pid"
	wait "$pid" || bad "smd under the unit's capabilities: exit $?"
	echo "capabilities: bounding set ${caps#,} (CapBnd $bnd): smd up, socket group $grp"
	# the optional switch to user: after the first sweep works inside the same bounds
	if getent passwd daemon >/dev/null; then
		bounded ud "sweep_interval: 0\nsocket_group: $grp\nuser: daemon\n"
		i=0
		until grep -q "SMD-080[34]" "$work/ud.err" || [ $i -gt 100 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		uid=$(awk '/^Uid:/ { print $2 }' /proc/$pid/status 2>/dev/null)
		[ "$uid" = "$(id -u daemon)" ] && grep -q "SMD-0803" "$work/ud.err" ||
			bad "user: daemon under the unit's capabilities: uid ${uid:-gone}: $(cat "$work/ud.err")"
		"$top_builddir/smd/smctl" --socket "$work/ud.sock" status >/dev/null 2>&1 ||
			bad "smd does not answer after the switch to user daemon"
		kill -TERM "$pid"
		wait "$pid" || bad "smd after the switch to user daemon: exit $?"
		echo "capabilities: user: daemon taken after the first sweep (uid $uid)"
	fi
fi
[ $fail = 0 ] && echo "unit: verify clean"
exit $fail
