#!/bin/sh
# SPDX-License-Identifier: MIT
# Traps through the umad transport under ibsim/umad2sim: OpenSM gives out
# LIDs and the SM LID once (so switches know where to send traps), then
# mad_probe, attached at the SM's port, waits for an unsolicited MAD while
# the ibsim console unlinks Switch2 port 2 (Hca4): Switch2 sends Trap 128
# (Notice, LIDADDR = its LID) to the SM LID; mad_probe decodes it and
# answers with a TrapRepress. Claiming IsSM itself shows as a Trap 144 from
# our own port. LIDs are cross-checked with smpquery.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
umad_setup
UMAD2SIM=${UMAD2SIM:-/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so}
[ -f "$UMAD2SIM" ] || { echo "FAIL: $UMAD2SIM missing (ibsim-utils)"; exit 1; }
export UMAD2SIM

scratch trap
probe_pid=
cleanup_hook() { [ -n "$probe_pid" ] && kill "$probe_pid" 2>/dev/null; }
# ibsim with its console (Unlink below)
IBSIM_CONSOLE=1 scratch_ibsim "$net" || { echo "FAIL: ibsim did not start"; exit 1; }

export SIM_HOST=Hca1
ibsim_opensm_once || { echo "FAIL: opensm --once"; exit 1; }
sw2_lid=$(ibsim_run smpquery -D portinfo 0,1,3 0 2>/dev/null | sed -n 's/^Lid:\.*//p')
sm_lid=$(ibsim_run smpquery -D portinfo 0 1 2>/dev/null | sed -n 's/^Lid:\.*//p')
[ -n "$sw2_lid" ] && [ "$sw2_lid" != 0 ] || { bad "Switch2 has no LID"; exit 1; }

out="$IBSIM_DIR/probe.out"
ibsim_run "$probe" --trap 20 0 0,1,3 >"$out" 2>"$IBSIM_DIR/probe.err" &
probe_pid=$!
i=0
until grep -q "^waiting for a trap" "$out"; do
	i=$((i + 1))
	if [ $i -gt 300 ] || ! kill -0 "$probe_pid" 2>/dev/null; then
		cat "$out" "$IBSIM_DIR/probe.err"
		bad "probe did not get ready"
		exit 1
	fi
	sleep 0.1
done
ibsim_console 'Unlink "Switch2"[2]'
wait "$probe_pid"
rc=$?
probe_pid=
cat "$out"
[ $rc = 0 ] || { cat "$IBSIM_DIR/probe.err"; bad "probe exit $rc"; }
# claiming IsSM changed our port's capability mask: its SMA said so with a
# Trap 144 to the SM LID (ours, from opensm's run), LIDADDR = our LID
grep -q "^trap method=0x05 num=144 issuer=$sm_lid lidaddr=$sm_lid slid=$sm_lid\$" "$out" ||
	bad "no trap 144 from our own port (IsSM not claimed?)"
line=$(grep "^trap .* num=128 " "$out")
[ -n "$line" ] || bad "no trap 128 received"
echo "$line" | grep -q " lidaddr=$sw2_lid " || bad "LIDADDR is not Switch2's LID $sw2_lid: $line"
echo "$line" | grep -q " issuer=$sw2_lid " || bad "issuer is not Switch2's LID $sw2_lid: $line"
echo "$line" | grep -q " slid=$sw2_lid\$" || bad "source LID is not Switch2's LID: $line"
echo "(SM LID $sm_lid, Switch2 LID $sw2_lid)"
[ $fail = 0 ] && echo "PASS: trap 128 through the umad transport"
exit $fail
