#!/bin/sh
# SPDX-License-Identifier: MIT
# The umad transport, unchanged, under ibsim's umad2sim: DR NodeInfo /
# NodeDescription / PortInfo Gets at hop 0, 1, 2 and 3 of a shipped example
# fabric, decoded by our codecs and cross-checked with infiniband-diags'
# smpquery (which we did not write); before any SM the SM port is INIT with
# physical state LinkUp and is still chosen as default; an explicit
# umad:CA:PORT spec works and a bad one is refused clearly; a DR path
# through an unconnected port times out and is reported; after
# `opensm --once` assigned LIDs, LID-routed Gets reach a switch and a
# remote HCA.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
umad_setup
ibsim_start "$net" || { echo "FAIL: cannot start ibsim"; exit 1; }
export SIM_HOST=Hca1
out=$(ibsim_run "$probe" 0 0,1 0,1,3 0,1,3,2 2>"$IBSIM_DIR/err") || { cat "$IBSIM_DIR/err"; bad "probe failed"; }
echo "$out"

# local port: INIT (2) but LinkUp (5), chosen by physical state
echo "$out" | grep -q '^local ca=[^ ]* port=1 .* state=2 phys=5$' || bad "local port not INIT/LinkUp port 1"
field() { echo "$out" | grep "^path=$1 " | tr ' ' '\n' | sed -n "s/^$2=//p"; }
[ "$(field 0 type)" = 1 ] || bad "hop 0 is not a CA"
[ "$(field 0,1 type)" = 2 ] || bad "hop 1 is not a switch"
[ "$(field 0,1 ports)" = 8 ] || bad "Switch1 port count"
[ "$(field 0,1 desc)" = '"Switch1"' ] || bad "Switch1 description: $(field 0,1 desc)"
[ "$(field 0,1,3 localport)" = 3 ] || bad "Switch2 entered by port 3"
[ "$(field 0,1,3,2 desc)" = '"Hca4"' ] || bad "hop 3 is not Hca4"
[ "$(field 0,1,3,2 phys)" = 5 ] || bad "Hca4 port not LinkUp"

# cross-check GUIDs with smpquery (DR, same paths)
for p in 0 0,1 0,1,3 0,1,3,2; do
	ours=$(field $p guid)
	ref=$(ibsim_run smpquery -D nodeinfo $p 2>/dev/null | sed -n 's/^Guid:\.*//p')
	[ -n "$ref" ] || { bad "smpquery gave nothing for $p"; continue; }
	[ "$(printf '%d' "$ours")" = "$(printf '%d' "$ref")" ] || bad "path $p guid $ours, smpquery says $ref"
	ours=$(field $p portguid)
	ref=$(ibsim_run smpquery -D nodeinfo $p 2>/dev/null | sed -n 's/^PortGuid:\.*//p')
	[ "$(printf '%d' "$ours")" = "$(printf '%d' "$ref")" ] || bad "path $p port guid $ours, smpquery says $ref"
done

# explicit CA:PORT; a wrong one is refused with a message
ca=$(echo "$out" | sed -n 's/^local ca=\([^ ]*\) .*/\1/p')
ibsim_run "$probe" "umad:$ca:1" 0,1 >/dev/null 2>&1 || bad "umad:$ca:1 failed"
if ibsim_run "$probe" umad:nosuchca:1 0 >/dev/null 2>"$IBSIM_DIR/err"; then bad "bad CA accepted"; fi
grep -q "nosuchca" "$IBSIM_DIR/err" || { cat "$IBSIM_DIR/err"; bad "no clear error for a bad CA"; }
# Switch1 port 7 is unconnected: the SMP is dropped, the engine gives up
if ibsim_run "$probe" 0,1,7 >/dev/null 2>"$IBSIM_DIR/err"; then bad "unconnected port answered"; fi
grep -q "timed out" "$IBSIM_DIR/err" || { cat "$IBSIM_DIR/err"; bad "no timeout reported"; }

# LID routed, after OpenSM gave out LIDs and routes
ibsim_opensm_once || bad "opensm --once failed"
lids=$(ibsim_run "$probe" 0 0,1 0,1,3,2 2>&1) || { echo "$lids"; bad "probe after opensm failed"; }
out=$lids
sw_lid=$(field 0,1 lid)
hca_lid=$(field 0,1,3,2 lid)
[ -n "$sw_lid" ] && [ "$sw_lid" != 0 ] || bad "Switch1 has no LID after opensm"
out=$(ibsim_run "$probe" "lid:$sw_lid" "lid:$hca_lid" 2>&1) || { echo "$out"; bad "LID-routed probe failed"; }
echo "$out"
[ "$(field lid:$sw_lid desc)" = '"Switch1"' ] || bad "LID $sw_lid is not Switch1"
[ "$(field lid:$hca_lid desc)" = '"Hca4"' ] || bad "LID $hca_lid is not Hca4"
[ "$(field lid:$hca_lid state)" = 4 ] || bad "Hca4 not ACTIVE after opensm"

[ $fail = 0 ] && echo "PASS: umad transport under ibsim"
exit $fail
