#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 18, "never black-hole a live host", under ibsim: 128 hosts (a
# generated radix-16 fat tree), smd -f; after its first complete sweep,
# `Error "<switch>" RATE` on every switch (25%: each MAD reaching a switch
# port is dropped with that chance) and `smctl resweep --heavy`:
#   - at every check (after each cycle that ends under the loss) 0 CA pairs
#     are black-holed in the tables the switches hold, read back with
#     dump_lfts + ibnetdiscover and judged by bench/lft_eval (the daemon is
#     stopped with SIGSTOP and the loss lifted while the tools read, so they
#     read everything and the daemon repairs nothing meanwhile);
#   - the status never says "up" without every CA: a sweep that lost answers
#     is "incomplete" (status degraded, planes_incomplete, SMD-0560);
#   - once the loss stops, the first heavy sweep that starts afterwards is
#     complete (state up, 128 CAs, SMD-0561) and 0 pairs are black-holed;
#     the time from the end of the loss to "up" is printed.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-ibsim.sh"

top_builddir=$(cd "$top_builddir" && pwd)
. "$top_srcdir/tests/lib-daemon.sh"
RATE=${RATE:-25}
HOSTS=${HOSTS:-128}
need_tools "ibsim-utils, infiniband-diags, python3" ibsim dump_lfts ibnetdiscover python3
_ibsim_find_umad2sim || exit 1
export UMAD2SIM
eval_=$top_builddir/bench/lft_eval
[ -x "$eval_" ] || { echo "FAIL: $eval_ not built"; exit 1; }
scratch incomplete
umad2sim_supp

"$smctl" topo gen fat-tree --hosts "$HOSTS" --radix 16 --format ibsim -o "$work/ft.net" >/dev/null ||
	{ echo "FAIL: topo gen"; exit 1; }
IBSIM_CONSOLE=1 scratch_ibsim "$work/ft.net" || { echo "FAIL: ibsim did not start"; exit 1; }
cas() { sed -n 's/^Ca[[:space:]]*[0-9]*[[:space:]]*"\([^"]*\)".*/\1/p' "$work/ft.net"; }
host=$(cas | head -1)
probe_host=$(cas | sed -n 5p)
switches=$(sed -n 's/^Switch[[:space:]]*[0-9]*[[:space:]]*"\([^"]*\)".*/\1/p' "$work/ft.net")
set_errors() { # RATE
	for s in $switches; do ibsim_console "Error \"$s\" $1"; done
	sleep 0.5   # the console is read between MADs
}

ibsim_dmn_start "$host" 2 || { echo "FAIL: smd did not come up"; exit 1; }
[ "$(q "(r['state'], r['cas'], r['planes_incomplete'])")" = "('up', $HOSTS, 0)" ] ||
	{ bad "first sweep: $(q r)"; exit 1; }

# holes LABEL: CA pairs the switches' tables do not deliver, read while the daemon is stopped and the
# loss lifted (the tools then read everything; the daemon repairs nothing meanwhile)
holes() {
	kill -STOP "$spid"
	[ "$lossy" = 1 ] && set_errors 0
	(SIM_HOST=$probe_host ibsim_run dump_lfts >"$work/lfts.txt" 2>"$work/lfts.err" &&
		SIM_HOST=$probe_host ibsim_run ibnetdiscover >"$work/topo.ibnd" 2>"$work/topo.err") ||
		bad "$1: dump_lfts/ibnetdiscover failed: $(tail -3 "$work/lfts.err" "$work/topo.err")"
	[ "$lossy" = 1 ] && set_errors "$RATE"
	kill -CONT "$spid"
	"$eval_" --perms 0 --no-shift "$work/topo.ibnd" "$work/lfts.txt" >"$work/eval.txt" 2>&1
	grep -q "hosts $HOSTS " "$work/eval.txt" || bad "$1: lft_eval did not see $HOSTS hosts: $(cat "$work/eval.txt")"
	n=$(sed -n 's/.* unreachable \([0-9]*\) .*/\1/p' "$work/eval.txt")
	echo "$1: ${n:-?} of $((HOSTS * (HOSTS - 1))) CA pairs black-holed; status $(q "(r['state'], r['cas'], r['planes_incomplete'], r['sweeps'])")"
	[ "${n:-x}" = 0 ] || bad "$1: ${n:-?} CA pairs black-holed"
}
lossy=0
holes "after the first complete sweep"

# the loss, and a heavy sweep asked for under it
set_errors "$RATE"
lossy=1
s0=$(q "r['sweeps']")
"$smctl" --socket "$sock" resweep --heavy --no-wait >/dev/null || bad "resweep --heavy failed"
i=0
seen=$s0
heavy_under_loss=0
while [ $i -lt 180 ] && [ "$heavy_under_loss" -lt 2 ]; do
	sleep 1
	i=$((i + 1))
	kill -0 "$pid" 2>/dev/null || { bad "smd died"; break; }
	s=$(q "r['sweeps'] if r['state'] != 'sweeping' else -1")
	[ "$s" -gt "$seen" ] 2>/dev/null || continue
	seen=$s
	st=$(q "(r['state'], r['cas'], r['planes_incomplete'], r['last_sweep']['kind'])")
	case $st in *"'heavy')") heavy_under_loss=$((heavy_under_loss + 1)) ;; esac
	[ "$(q "r['state'] != 'up' or (r['cas'] == $HOSTS and r['planes_incomplete'] == 0)")" = True ] ||
		bad "status says up without every CA: $st"
	holes "under ${RATE}% loss, after sweep $s $st"
done
[ "$heavy_under_loss" -ge 1 ] || bad "no heavy sweep ended under the loss"
inc=$(q "r['incomplete_sweeps']")
[ "${inc:-0}" -ge 1 ] 2>/dev/null || bad "no sweep was incomplete under ${RATE}% loss: the loss did not take"
grep -q "SMD-0560" "$work/smd.log" || bad "no SMD-0560 (incomplete sweep) in the log"
echo "under ${RATE}% loss: $inc incomplete heavy sweeps; $(grep -m1 SMD-0560 "$work/smd.log")"

# the loss stops: the first heavy sweep that starts afterwards is complete
set_errors 0
lossy=0
t0=$(date +%s.%N)
i=0
until [ "$(q "r['state'] == 'up' and r['cas'] == $HOSTS and r['planes_incomplete'] == 0")" = True ]; do
	i=$((i + 1))
	[ $i -gt 1200 ] && { bad "not up 120 s after the loss stopped: $(q r)"; break; }
	sleep 0.1
done
t1=$(date +%s.%N)
el=$(python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))" "$t0" "$t1")
echo "loss stopped: up with $HOSTS CAs after $el s"
# every heavy sweep that started after the loss stopped (start = end - duration) is complete
after=$("$smctl" --socket "$sock" --json status | python3 -c 'import json,sys
r = json.load(sys.stdin); since = float(sys.argv[1])
print([(s["seq"], s["planes_up"]) for s in r["sweep_history"] if s["kind"] == "heavy" and s["age_s"] + s["seconds"] < since])' "$el")
echo "heavy sweeps started after the loss stopped: (seq, planes_up) = $after"
case $after in *", 0)"*) bad "a heavy sweep that started after the loss was not complete: $after" ;; esac
grep -q "SMD-0561" "$work/smd.log" || bad "no SMD-0561 (complete again) in the log"
holes "after the loss"

ibsim_dmn_stop
rc=$?
[ $rc = 0 ] || bad "smd exited $rc on SIGTERM"
[ $fail = 0 ] && echo "PASS: 0 black-holed CA pairs under ${RATE}% MAD loss and after it"
exit $fail
