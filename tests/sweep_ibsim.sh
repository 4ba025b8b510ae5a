#!/bin/sh
# SPDX-License-Identifier: MIT
# Light, heavy and incremental sweeps of smd -f against ibsim's SMAs (issue 7):
#  - after the first (full) sweep a light sweep is quiet: one SwitchInfo per
#    switch, nothing written (so the heavy sweep cleared ibsim's
#    PortStateChange bits, which are all set when ibsim links its fabric);
#  - a link unlinked on ibsim's console: the trap-driven cycle sweeps
#    incrementally, reads no LFT block back, writes some; every CA pair is
#    routed again, read back with dump_lfts + ibnetdiscover and judged by
#    bench/lft_eval; a light sweep after it is quiet again (bits cleared);
#  - the link relinked: the trap-driven cycle is incremental too (issue 17:
#    it explores the ports that came up), the link ports are ACTIVE as
#    before, and every LFT read back with dump_lfts is what the first (cold)
#    bring-up wrote: the routes that moved went back, nothing else moved;
#  - a whole spine, then a leaf with its hosts, unlinked and relinked on the
#    console (Unlink/ReLink "switch"): every cycle after each event is
#    incremental (the switch is left out, then explored again with what is
#    behind it), every CA pair that is there is routed after the loss, and
#    after the return the LFTs are again the cold bring-up's;
#  - resweep --reread reads every LFT block back and writes none.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-ibsim.sh"
for t in ibsim dump_lfts ibnetdiscover python3; do
	command -v $t >/dev/null || { echo "FAIL: $t not installed"; exit 1; }
done
_ibsim_find_umad2sim || { echo "FAIL: libumad2sim.so missing (ibsim-utils)"; exit 1; }
smd=$top_builddir/smd/smd
smctl=$top_builddir/smd/smctl
eval_=$top_builddir/bench/lft_eval
[ -x "$eval_" ] || { echo "FAIL: $eval_ not built"; exit 1; }
fail=0
bad() { echo "FAIL: $*"; fail=1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/smd-sweep.XXXXXX") || exit 1
smd_pid=
cleanup() {
	if [ -n "$smd_pid" ]; then
		kill "$smd_pid" 2>/dev/null
		wait "$smd_pid" 2>/dev/null
	fi
	ibsim_cleanup
	rm -rf "$work"
}
net=$work/ft.net
"$smctl" topo gen fat-tree --radix 8 --hosts 16 --format ibsim -o "$net" >/dev/null || { echo "FAIL: generator"; exit 1; }
IBSIM_CONSOLE=1 ibsim_start "$net" || { echo "FAIL: ibsim did not start"; exit 1; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

sock=$IBSIM_DIR/smd.sock
printf 'sweep_interval: 0\ntrap_holdoff_ms: 10\n' >"$IBSIM_DIR/smd.yaml"
"$smd" -f -c "$IBSIM_DIR/smd.yaml" --plane ibsim:H-0002c92000000000 --socket "$sock" \
	--state-dir "$IBSIM_DIR/state" 2>"$IBSIM_DIR/smd.log" &
smd_pid=$!

# q EXPR: evaluate a Python expression over the status reply (r)
q() {
	"$smctl" --socket "$sock" --json status 2>/dev/null | python3 -c 'import json,sys
try: r = json.load(sys.stdin)
except Exception: print("no status"); sys.exit()
print(eval(sys.argv[1]))' "$1"
}
# wait_sweeps N: until N cycles completed (20 s)
wait_sweeps() {
	i=0
	until [ "$(q "r['sweeps'] >= $1 and r['state'] != 'sweeping'")" = True ]; do
		i=$((i + 1))
		[ $i -gt 200 ] && return 1
		kill -0 "$smd_pid" 2>/dev/null || return 1
		sleep 0.1
	done
}
wait_sweeps 1 || { cat "$IBSIM_DIR/smd.log"; echo "FAIL: smd did not come up"; exit 1; }
sw=$(q "r['switches']")
[ "$(q "(r['state'], r['switches'], r['cas'], r['last_sweep']['kind'])")" = "('up', 8, 16, 'heavy')" ] ||
	bad "first sweep: $(q r)"

# what the cold bring-up wrote
dump() { SIM_HOST=H-0002c92000000002 ibsim_run dump_lfts >"$1" 2>"$1.err" || bad "dump_lfts failed: $(cat "$1.err")"; }
dump "$IBSIM_DIR/lfts0.txt"

# a light sweep on a quiet fabric
"$smctl" --socket "$sock" resweep >/dev/null || bad "resweep (light) failed"
# (a SwitchInfo per switch, and PortInfo/LFT samples: SM_LIGHT_MIN_SAMPLES of each at most here)
[ "$(q "(r['last_sweep']['kind'], r['last_sweep']['escalated'], $sw < r['last_sweep']['smps'] <= $sw + 128, r['last_sweep']['lft_blocks_written'])")" = \
	"('light', False, True, 0)" ] || bad "light sweep on a quiet fabric: $(q "r['last_sweep']")"

# pull leaf 0's first uplink
links0=$("$smctl" --socket "$sock" --json planes | python3 -c 'import json,sys; print(json.load(sys.stdin)["planes"][0]["link_ports"])')
ibsim_console 'Unlink "S-0002c91000000000"[5]'
wait_sweeps 3 || bad "no cycle after the unlink"
sleep 0.5   # a late trap may start one more (incremental) cycle
wait_sweeps 3
[ "$(q "(r['sweep_history'][2]['reason'], r['sweep_history'][2]['kind'], r['sweep_history'][2]['planes_incremental'], r['sweep_history'][2]['lft_blocks_read'], r['sweep_history'][2]['lft_blocks_written'] > 0)")" = \
	"('trap', 'heavy', 1, 0, True)" ] || bad "trap cycle after the unlink: $(q "r['sweep_history'][2]")"
(SIM_HOST=H-0002c92000000002 ibsim_run dump_lfts >"$IBSIM_DIR/lfts.txt" 2>"$IBSIM_DIR/lfts.err" &&
	SIM_HOST=H-0002c92000000002 ibsim_run ibnetdiscover >"$IBSIM_DIR/topo.ibnd" 2>"$IBSIM_DIR/topo.err") ||
	bad "dump_lfts/ibnetdiscover failed: $(cat "$IBSIM_DIR/lfts.err" "$IBSIM_DIR/topo.err")"
"$eval_" --perms 0 --no-shift "$IBSIM_DIR/topo.ibnd" "$IBSIM_DIR/lfts.txt" >"$IBSIM_DIR/eval.txt" 2>&1
grep -q " unreachable 0 loops 0 " "$IBSIM_DIR/eval.txt" || bad "not every pair routed after the unlink: $(cat "$IBSIM_DIR/eval.txt")"
grep -q "hosts 16 " "$IBSIM_DIR/eval.txt" || bad "lft_eval did not see 16 hosts: $(cat "$IBSIM_DIR/eval.txt")"

n=$(q "r['sweeps']")
"$smctl" --socket "$sock" resweep >/dev/null || bad "resweep after the unlink failed"
[ "$(q "(r['sweeps'], r['last_sweep']['kind'], r['last_sweep']['escalated'])")" = "($((n + 1)), 'light', False)" ] ||
	bad "light sweep after the reroute is not quiet (PortStateChange not cleared?): $(q "r['last_sweep']")"

# the link comes back: explored incrementally from its two ends
ibsim_console 'ReLink "S-0002c91000000000"[5]'
wait_sweeps $((n + 2)) || bad "no cycle after the relink"
sleep 0.5
wait_sweeps $((n + 2))
# until the link ports are ACTIVE as they were (5 s)
links_back() {
	i=0
	until [ "$("$smctl" --socket "$sock" --json planes | python3 -c 'import json,sys; print(json.load(sys.stdin)["planes"][0]["active_ports"])')" = "$links0" ]; do
		i=$((i + 1))
		[ $i -gt 50 ] && { bad "link ports after $1: want $links0 active: $("$smctl" --socket "$sock" --json planes)"; break; }
		sleep 0.1
	done
}
links_back "the relink"
relink="[h for h in r['sweep_history'] if h['seq'] == $((n + 2))][0]"
[ "$(q "($relink['reason'], $relink['planes_incremental'], $relink['lft_blocks_read'], $relink['lft_blocks_written'] > 0)")" = \
	"('trap', 1, 0, True)" ] || bad "the relink was not taken incrementally: $(q "$relink")"
dump "$IBSIM_DIR/lfts2.txt"
cmp -s "$IBSIM_DIR/lfts0.txt" "$IBSIM_DIR/lfts2.txt" ||
	bad "LFTs after the relink differ from the cold bring-up's: $(diff "$IBSIM_DIR/lfts0.txt" "$IBSIM_DIR/lfts2.txt" | head -20)"

# every pair routed (lft_eval on dump_lfts + ibnetdiscover read-backs): HOSTS hosts seen
routed() {
	SIM_HOST=H-0002c92000000002 ibsim_run ibnetdiscover >"$IBSIM_DIR/topo.ibnd" 2>"$IBSIM_DIR/topo.err" ||
		bad "ibnetdiscover failed: $(cat "$IBSIM_DIR/topo.err")"
	dump "$IBSIM_DIR/lfts.txt"
	"$eval_" --perms 0 --no-shift "$IBSIM_DIR/topo.ibnd" "$IBSIM_DIR/lfts.txt" >"$IBSIM_DIR/eval.txt" 2>&1
	grep -q " unreachable 0 loops 0 " "$IBSIM_DIR/eval.txt" && grep -q "hosts $1 " "$IBSIM_DIR/eval.txt" ||
		bad "$2: not every pair of $1 hosts routed: $(cat "$IBSIM_DIR/eval.txt")"
}
# switch_event CMD SWITCH HOSTS WHAT: the console command, then every cycle it caused incremental, HOSTS hosts routed
switch_event() {
	n=$(q "r['sweeps']")
	ibsim_console "$1 \"$2\""
	wait_sweeps $((n + 1)) || bad "no cycle after $4"
	sleep 0.5   # ibsim changes the links one by one: more traps, more (incremental) cycles
	wait_sweeps $((n + 1))
	[ "$(q "[(h['reason'], h['planes_incremental']) for h in r['sweep_history'] if h['seq'] > $n and h['kind'] == 'heavy'] == [('trap', 1)] * len([h for h in r['sweep_history'] if h['seq'] > $n and h['kind'] == 'heavy']) and r['cas'] == $3")" = True ] ||
		bad "$4: not taken incrementally: $(q "[h for h in r['sweep_history'] if h['seq'] > $n]") cas $(q "r['cas']")"
	[ "$1" = ReLink ] && links_back "$4"
	routed "$3" "$4"
}
switch_event Unlink S-0002c91000000007 16 "a spine unlinked"
switch_event ReLink S-0002c91000000007 16 "the spine relinked"
cmp -s "$IBSIM_DIR/lfts0.txt" "$IBSIM_DIR/lfts.txt" ||
	bad "LFTs after the spine came back differ from the cold bring-up's: $(diff "$IBSIM_DIR/lfts0.txt" "$IBSIM_DIR/lfts.txt" | head -20)"
switch_event Unlink S-0002c91000000003 12 "a leaf and its hosts unlinked"
switch_event ReLink S-0002c91000000003 16 "the leaf relinked"
cmp -s "$IBSIM_DIR/lfts0.txt" "$IBSIM_DIR/lfts.txt" ||
	bad "LFTs after the leaf came back differ from the cold bring-up's: $(diff "$IBSIM_DIR/lfts0.txt" "$IBSIM_DIR/lfts.txt" | head -20)"

# reread: every LFT block read back, none written
"$smctl" --socket "$sock" resweep --reread >/dev/null || bad "resweep --reread failed"
[ "$(q "(r['last_sweep']['kind'], r['last_sweep']['lft_blocks_read'] > 0, r['last_sweep']['lft_blocks_written'])")" = \
	"('heavy', True, 0)" ] || bad "reread: $(q "r['last_sweep']")"

kill "$smd_pid"
wait "$smd_pid"
rc=$?
smd_pid=
[ $rc = 0 ] || bad "smd exited $rc on SIGTERM"
[ $fail = 0 ] && echo "sweep_ibsim: all checks passed"
exit $fail
