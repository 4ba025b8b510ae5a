#!/bin/sh
# SPDX-License-Identifier: MIT
# Failover benchmark (issue 15): a master smd killed with kill -9 under ibsim,
# time until a standby has taken over, smd standby vs OpenSM standby, same
# fabric, same run.
#
# usage: bench/failover.sh [RUNS]     (from a build directory; default 3)
# env:   HOSTS (16) RADIX (8) BUILD (.) OSM_TIMEOUT (120 s per OpenSM round)
#
# Per round, on a FRESH ibsim (fat tree from `smctl topo gen`), three cases:
#  smd:      smd master (priority 1) at the first CA, smd standby (priority 1,
#            default polling: 500 ms, 3 misses) at the second;
#  osm:      smd master at the first CA, OpenSM standby (-p 0, its defaults:
#            sminfo_polling_timeout 10 s, polling_retry_number 4);
#  osm-fast: the same with OpenSM polling every 500 ms, 3 retries (-F file).
# t0 = kill -9 of the master smd; t1 = when a CA of the far end of the fabric
# (the last CA) reads PortInfo.SMLid = the standby's LID (`smpquery -D
# portinfo 0` at that CA, each poll ~50-100 ms, so t1 is late by at most
# one poll). The standby's LFT blocks written on takeover: smd's own sweep
# line; OpenSM's is not counted. Prints one line per case and round, then
# medians.
set -u
RUNS=${1:-3}
: "${HOSTS:=16}" "${RADIX:=8}" "${BUILD:=.}" "${OSM_TIMEOUT:=120}"
top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
top_builddir=$(cd "$BUILD" && pwd)
. "$top_srcdir/tests/lib-daemon.sh"
. "$top_srcdir/tests/lib-ibsim.sh"
. "$top_srcdir/tests/lib-ha.sh"   # now, osm_pid (through /proc: no ps/pgrep)
umad2sim_supp
scratch failover
"$smctl" topo gen fat-tree --radix "$RADIX" --hosts "$HOSTS" --format ibsim -o "$work/ft.net" >/dev/null || exit 1
cas=$(grep -E '^(Ca|Hca)[[:space:]]' "$work/ft.net" | sed 's/^[^"]*"\(H-[0-9a-f]*\)".*/\1/')
[ -n "$cas" ] || { echo "no CA in $work/ft.net"; exit 1; }
first=$(echo "$cas" | sed -n 1p)
second=$(echo "$cas" | sed -n 2p)
last=$(echo "$cas" | tail -1)
printf 'sweep_interval: 0\nsm_key: 0x1\n' >"$work/smd.yaml"
printf 'sminfo_polling_timeout 500\npolling_retry_number 3\n' >"$work/osm-fast.conf"
smlid_of() { SIM_HOST=$1 ibsim_run smpquery -D portinfo 0 2>/dev/null | sed -n "s/^SMLid:\\.*//p"; }
lid_of() { SIM_HOST=$1 ibsim_run smpquery -D portinfo 0 2>/dev/null | sed -n 's/^Lid:\.*//p'; }
round() {   # round CASE
	ibsim_start "$work/ft.net" >/dev/null || { echo "ibsim did not start"; return 1; }
	SIM_HOST=$first ibsim_run "$smd" -f -c "$work/smd.yaml" --backend umad --socket "$work/m.sock" \
		--state-dir "$work/m.state.$1.$r" >"$work/m.err.$1.$r" 2>&1 &
	sock="$work/m.sock" pid=$!
	dmn_up "$work/m.st" 300 || { echo "master did not come up"; ibsim_stop; return 1; }
	case $1 in
	smd) SIM_HOST=$second ibsim_run "$smd" -f -c "$work/smd.yaml" --backend umad --socket "$work/s.sock" \
		--state-dir "$work/s.state.$r" >"$work/s.err.$r" 2>&1 &
	     sw=$!
	     _i=0; while ! grep -q "standby: master" "$work/s.err.$r" && [ $_i -lt 100 ]; do sleep 0.1; _i=$((_i + 1)); done ;;
	osm) SIM_HOST=$second ibsim_run opensm -p 0 -f "$IBSIM_DIR/osm.log" >/dev/null 2>&1 & sw=$!; sleep 3 ;;
	osm-fast) SIM_HOST=$second ibsim_run opensm -p 0 -F "$work/osm-fast.conf" -f "$IBSIM_DIR/osm.log" \
		>/dev/null 2>&1 & sw=$!; sleep 3 ;;
	esac
	slid=$(lid_of "$second")
	[ "$(smlid_of "$last")" = "$(lid_of "$first")" ] || echo "round $r $1: the master is not the SM of $last before the kill"
	t0=$(now)
	kill -9 "$(json_num "$work/m.st" pid)"
	end=$(($(date +%s) + OSM_TIMEOUT))
	while [ "$(smlid_of "$last")" != "$slid" ] && [ "$(date +%s)" -lt "$end" ]; do :; done
	t1=$(now)
	secs=$(python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$t1")
	[ "$(smlid_of "$last")" = "$slid" ] || secs="timeout"
	lft=-
	[ "$1" = smd ] && lft=$(sed -n 's/.*sweep 1 (start).* \([0-9]*\) LFT blocks.*/\1/p' "$work/s.err.$r")
	echo "round $r $1: ${secs} s, standby LID $slid, LFT blocks on takeover $lft"
	echo "$secs" >>"$work/t.$1"
	if [ "$1" = smd ]; then
		sock="$work/s.sock"
		"$smctl" --socket "$sock" --json status >"$work/s.st" 2>/dev/null && kill -TERM "$(json_num "$work/s.st" pid)"
	else
		kill -TERM "$(osm_pid "$sw")" 2>/dev/null
	fi
	wait "$sw" 2>/dev/null
	wait "$pid" 2>/dev/null
	ibsim_stop
}
r=1
while [ $r -le "$RUNS" ]; do
	for c in smd osm-fast osm; do round $c; done
	r=$((r + 1))
done
for c in smd osm-fast osm; do
	echo "median $c: $(sort -n "$work/t.$c" | python3 -c "import sys, statistics; v=[float(x) for x in sys.stdin if x.strip() not in ('', 'timeout')]; print('%.2f s of %d' % (statistics.median(v), len(v)) if v else 'none')")"
done
