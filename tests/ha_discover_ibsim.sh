#!/bin/sh
# SPDX-License-Identifier: MIT
# Discovery before the election, and a master that finds a better master
# (issue 15, IBA 14.4), under ibsim (net.2sw2path4hca, umad2sim):
#  - OpenSM master (priority 10); smd (priority 1) started beside it sweeps
#    read-only (its discovery: SMInfo by directed route from every IsSM
#    port), finds OpenSM and stands by: its discovery sent 0 Sets, it ran
#    no cycle (0 sweeps, 0 LFT blocks, 0 PortInfo Sets by its own counters);
#  - two smd started at once on a fresh fabric (no LIDs, no master): one
#    master, one standby. Which one sweeps first depends on the race: an
#    SM whose discovery ran before the other's port claimed IsSM saw
#    nobody and became master; the better one then takes over by HANDOVER
#    (IBA: a master hands over to a better SM). The sweeps are printed;
#  - two masters on one subnet: smd a (priority 5) is stopped (SIGSTOP),
#    standby b (priority 1) takes over; a resumes still believing it is
#    master and sets its SM LID on the ports again; b's light sweep finds
#    that better master on its ports and hands it to the election:
#    HANDOVER, b standby, a the only master.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
need_python
umad_setup
scratch ha-disc
IBSIM_RUN_TIMEOUT=120
export IBSIM_RUN_TIMEOUT
ibsim_start "$net" || { echo "FAIL: cannot start ibsim"; exit 1; }
scratch_trap

. "$top_srcdir/tests/lib-ha.sh"
role() { "$smctl" --socket "$work/$1.sock" --json status 2>/dev/null | python3 -c \
	"import json,sys; r=json.load(sys.stdin); print(r['sm'][0]['role'], r['sweeps'])" 2>/dev/null; }
# SIGTERM to each named smd (its own PID from its status: ibsim_run's is a wrapper's), and up to 10 s for it to go
stop_all() {
	for _n in "$@"; do
		"$smctl" --socket "$work/$_n.sock" --json status >"$work/$_n.st" 2>/dev/null
		_p=$(json_num "$work/$_n.st" pid)
		[ -n "$_p" ] || continue
		kill -CONT "$_p" 2>/dev/null
		kill -TERM "$_p" 2>/dev/null
		_i=0
		while kill -0 "$_p" 2>/dev/null && [ $_i -lt 100 ]; do sleep 0.1; _i=$((_i + 1)); done
	done
}

# --- OpenSM master, smd beside it: straight to standby, nothing written ---------
osm_master_hca1
sminfo_at | grep -q "priority 10 state 3" || bad "OpenSM did not become master"
printf 'sweep_interval: 0\n' >"$work/p1.yaml"
start_smd s Hca2 "$work/p1.yaml"
dmn_pids="$!"
wait_note "$work/s.err" "election: standby: master 0x0000000000100001" ||
	{ cat "$work/s.err"; bad "smd did not stand by beside OpenSM"; }
grep "election: discovery:" "$work/s.err" | head -1
grep -q "election: discovery: [0-9]* nodes, 1 other SM port, 1 answered; [0-9]* SMPs, 0 Sets" "$work/s.err" ||
	bad "discovery beside OpenSM: $(grep 'discovery' "$work/s.err")"
"$smctl" --socket "$work/s.sock" --json status >"$work/s.st" || bad "s: no status"
[ "$(json "$work/s.st" '(r["sweeps"], r["sm"][0]["role"])')" = "(0, 'standby')" ] ||
	bad "the standby swept or is not standby: $(json "$work/s.st" '(r["sweeps"], r["sm"])')"
"$smctl" --socket "$work/s.sock" metrics >"$work/s.metrics"
lft=$(sed -n 's/^smd_lft_blocks_written_total{plane="plane0"} //p' "$work/s.metrics")
pis=$(sed -n 's/^smd_portinfo_sets_total{plane="plane0"} //p' "$work/s.metrics")
echo "smd beside OpenSM: LFT blocks written ${lft:-0}, PortInfo Sets ${pis:-0}"
[ "${lft:-0}" = 0 ] && [ "${pis:-0}" = 0 ] || bad "the standby wrote: $lft LFT blocks, $pis PortInfo Sets"
stop_all s
kill -TERM "$(osm_pid "$osm_wrap")" 2>/dev/null
wait "$osm_wrap" 2>/dev/null
ibsim_stop
ibsim_start "$net" || { echo "FAIL: cannot restart ibsim"; exit 1; }
scratch_trap

# --- two smd at once on a fresh fabric: one master ---------------------------
start_smd a Hca1 "$work/p1.yaml"
apid=$!
start_smd b Hca2 "$work/p1.yaml"
bpid=$!
dmn_pids="$apid $bpid"
i=0
while [ $i -lt 100 ]; do
	ra=$(role a); rb=$(role b)
	case "$ra/$rb" in master*/standby*|standby*/master*) break ;; esac
	sleep 0.1
	i=$((i + 1))
done
sleep 1
ra=$(role a); rb=$(role b)
echo "started together: a $ra, b $rb (role, sweeps)"
case "$ra/$rb" in
master*/standby*|standby*/master*) ;;
*) bad "two smd started together: a '$ra', b '$rb' (want one master, one standby)" ;;
esac
grep "election:" "$work/a.err" "$work/b.err" | head -8
stop_all a b
wait "$apid" "$bpid" 2>/dev/null

# --- two masters: the worse one finds the better on its ports and hands over ----
printf 'sweep_interval: 1\nsm_priority: 5\n' >"$work/p5.yaml"
printf 'sweep_interval: 1\nsm_priority: 1\n' >"$work/p1i.yaml"
start_smd c Hca1 "$work/p5.yaml"
cpid=$!
dmn_pids="$cpid"
sock="$work/c.sock"
pid=$cpid
dmn_up "$work/c.st" 150 || { cat "$work/c.err"; bad "smd c did not come up"; }
start_smd e Hca2 "$work/p1i.yaml"
epid=$!
dmn_pids="$cpid $epid"
wait_note "$work/e.err" "election: standby: master" || bad "e did not stand by"
"$smctl" --socket "$work/e.sock" --json status >"$work/e.st"
creal=$(json_num "$work/c.st" pid)
kill -STOP "$creal"
wait_note "$work/e.err" "taking over" 100 || bad "e did not take over from the stopped c"
wait_note "$work/e.err" "sweep 1 (start)" 100 || bad "e did not sweep after taking over"
t0=$(now)
kill -CONT "$creal"
wait_note "$work/e.err" "election: handed over to 0x0000000000100001" 200 ||
	{ tail -n 20 "$work/c.err" "$work/e.err"; bad "e (master, worse) did not hand over to c (master, better)"; }
echo "two masters: the worse handed over $(elapsed "$t0") s after the better resumed"
grep -E "better master holds our ports|handing over|handed over" "$work/e.err" | head -3
sleep 1
rc=$(role c); re=$(role e)
echo "after: c $rc, e $re"
case "$rc/$re" in master*/standby*) ;; *) bad "after the handover: c '$rc', e '$re'" ;; esac
sminfo_at | grep -q "sm guid 0x100001, .*priority 5 state 3" || bad "sminfo: c is not the master: $(sminfo_at)"
stop_all c e
wait "$cpid" "$epid" 2>/dev/null

[ $fail = 0 ] && echo "PASS: discovery before the election; a better master found by a master gets the subnet"
exit $fail
