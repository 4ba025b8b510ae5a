#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 18, "another SM on the subnet", under ibsim: smd -f manages a
# generated 16-host fat tree (ftree); then `smd --once -R updn` from another
# host's port rewrites LFT entries and sets every port's SM LID to its own.
# The daemon's light sweeps (every second) sample PortInfo and LFT blocks:
#   - within a bounded number of light sweeps it logs SMD-0562 naming the
#     other SM (its LID and port GUID) and the LFT drift;
#   - the heavy sweep that follows repairs: the LFTs read back with
#     dump_lfts are again exactly what they were before, and the CA ports'
#     SM LID (smpquery portinfo) is the daemon's again; the time is printed.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-ibsim.sh"

top_builddir=$(cd "$top_builddir" && pwd)
. "$top_srcdir/tests/lib-daemon.sh"
need_tools "ibsim-utils, infiniband-diags, python3" ibsim dump_lfts smpquery python3
_ibsim_find_umad2sim || exit 1
export UMAD2SIM
scratch foreign
umad2sim_supp

"$smctl" topo gen fat-tree --hosts 16 --radix 8 --format ibsim -o "$work/ft.net" >/dev/null ||
	{ echo "FAIL: topo gen"; exit 1; }
scratch_ibsim "$work/ft.net" || { echo "FAIL: ibsim did not start"; exit 1; }
cas() { sed -n 's/^Ca[[:space:]]*[0-9]*[[:space:]]*"\([^"]*\)".*/\1/p' "$work/ft.net"; }
host=$(cas | head -1)
other=$(cas | sed -n 4p)
probe_host=$(cas | sed -n 7p)

ibsim_dmn_start "$host" 1 || { echo "FAIL: smd did not come up"; exit 1; }
# under load a first sweep may lose answers (incomplete, swept again soon): wait for all 16 CAs
i=0
until [ "$(q "(r['state'], r['cas'], r['planes_incomplete'])")" = "('up', 16, 0)" ]; do
	i=$((i + 1))
	[ $i -gt 300 ] && { bad "not up with 16 CAs within 30 s: $(q r)"; exit 1; }
	sleep 0.1
done
our_lid=$(q "r['sm'][0]['lid']")
lfts() { SIM_HOST=$probe_host ibsim_run dump_lfts >"$1" 2>"$1.err" || bad "dump_lfts failed: $(tail -3 "$1.err")"; }
# SMLid of CA port LIDs as smpquery reads them (by LID: the tables route there)
sm_lids() {
	for l in $ca_lids; do
		SIM_HOST=$probe_host ibsim_run smpquery portinfo "$l" 1 2>/dev/null | sed -n 's/^SMLid:\.*\([0-9]*\)$/\1/p'
	done | sort | uniq -c | tr -s ' ' | tr '\n' ';'
}
lfts "$work/before.txt"
ca_lids=$("$smctl" --socket "$sock" --json nodes | python3 -c 'import json,sys
r = json.load(sys.stdin)
print(" ".join(str(n["lid"]) for n in r["planes"][0]["nodes"] if n["type"] == "Ca"))')
[ "$(echo "$ca_lids" | wc -w)" = 16 ] || bad "16 CA LIDs expected from smctl nodes: $ca_lids"
want_sm_lids=" 16 $our_lid;"
echo "smd's SM LID $our_lid; CA ports' SM LIDs before (count LID): $(sm_lids)"
[ "$(sm_lids)" = "$want_sm_lids" ] || bad "before: CA ports' SM LIDs $(sm_lids), want$want_sm_lids"

# the other SM: one run from another host's port, another engine, its own state
SIM_HOST=$other ibsim_run "$smd" --once -R updn --state-dir "$work/other" --json -q >"$work/other.json" \
	2>"$work/other.err" || { cat "$work/other.err"; bad "the other smd --once failed"; }
t0=$(date +%s.%N)
other_lid=$(json_num "$work/other.json" sm_lid)
echo "the other SM (on $other, LID $other_lid): $(json_num "$work/other.json" lft_blocks_written) LFT blocks and $(json_num "$work/other.json" portinfo_lid_sets) PortInfo (LID/SM LID) written"
[ "$(json_num "$work/other.json" portinfo_lid_sets)" -gt 0 ] || bad "the other SM set no SM LID: the test proves nothing"

# detected and named within bounded light sweeps, then repaired
s0=$(q "r['sweeps']")
i=0
until grep -q "SMD-0562" "$work/smd.log"; do
	i=$((i + 1))
	[ $i -gt 300 ] && { bad "no SMD-0562 within 30 s ($(q "r['sweeps']") sweeps)"; break; }
	sleep 0.1
done
t_det=$(date +%s.%N)
line=$(grep -m1 "SMD-0562" "$work/smd.log")
echo "$line"
echo "logged $(python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))" "$t0" "$t_det") s after the other SM's run ended"
n=$(( $(q "r['sweeps']") - s0 ))
echo "detected within $n cycle(s) of the other SM's run"
[ "$n" -le 18 ] || bad "detection took $n cycles (bound: 16 light sweeps + 2)"
case $line in *"SM LID $other_lid "*) ;; *) bad "SMD-0562 does not name the other SM's LID $other_lid" ;; esac
case $line in *"port GUID 0x"*) ;; *) bad "SMD-0562 does not name a port GUID" ;; esac

i=0
while :; do
	i=$((i + 1))
	lfts "$work/after.txt"
	if cmp -s "$work/before.txt" "$work/after.txt" && [ "$(sm_lids)" = "$want_sm_lids" ]; then
		break
	fi
	[ $i -gt 30 ] && { bad "not repaired: $(diff "$work/before.txt" "$work/after.txt" | head -5); SM LIDs $(sm_lids)"; break; }
	sleep 1
done
t1=$(date +%s.%N)
echo "read back as repaired $(python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))" "$t0" "$t1") s after the other SM's run: LFTs as before, CA ports' SM LIDs: $(sm_lids)"
echo "cycles that saw it (seq, kind, seconds): $(q "[(s['seq'], s['kind'], s['seconds']) for s in r['sweep_history'] if s['change']]")"

ibsim_dmn_stop
rc=$?
[ $rc = 0 ] || bad "smd exited $rc on SIGTERM"
[ $fail = 0 ] && echo "PASS: another SM's LFTs and SM LIDs found and repaired"
exit $fail
