#!/bin/sh
# SPDX-License-Identifier: MIT
# Bring-up against SMP loss (issue 8): bench/faults.md has the results.
#
# usage: bench/faults.sh [RUNS]      (from a build directory; default 3 seeds per rate)
# env:   HOSTS (2048) RADIX (64) RATES ("0 1 10 30") IB_HOSTS (128) IB_RADIX (16)
#        IB (1; 0 skips ibsim) BUILD (.) OUT (a temp dir)
#
# 1. Mock backend, a HOSTS-host 2-level fat tree, RATES percent of SMP
#    exchanges lost (seeded; half the losses hit the answer), RUNS seeds each:
#    bench/faults_bench prints wall time (CPU-bound: emulation + SM), the
#    mock's virtual clock at the end ("fabric time": what the 100 ms timeouts
#    cost on a real fabric), SMPs sent, retries, adaptive retries, whether
#    the fabric came up whole. Then 10% and 30% again with the adaptation off
#    (adaptive_max 0, min_timeout_ms 0: 3 retries, 100 ms first timeout, as
#    before this change; the refused-retried-Set read-back stays on).
# 2. ibsim, an IB_HOSTS-host tree: `Error "switch" RATE` on every switch
#    through ibsim's console (every MAD reaching a switch port is dropped
#    with RATE% chance, on every hop, both ways), then smd --once: wall time
#    of the process, SMPs, retries, ok.
set -u
RUNS=${1:-3}
HOSTS=${HOSTS:-2048}
RADIX=${RADIX:-64}
RATES=${RATES:-"0 1 10 30"}
IB_HOSTS=${IB_HOSTS:-128}
IB_RADIX=${IB_RADIX:-16}
BUILD=${BUILD:-$(pwd)}
BUILD=$(cd "$BUILD" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/.." && pwd)}
SMD=$BUILD/smd/smd
SMCTL=$BUILD/smd/smctl
FB=$BUILD/bench/faults_bench
[ -x "$FB" ] || { echo "faults.sh: $FB missing (make check builds it)" >&2; exit 1; }
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/smd-faults-bench.XXXXXX")}
mkdir -p "$OUT"
echo "# output in $OUT"
echo "# machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(uname -r)"

val() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
median() { sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

mock_rows() { # LABEL EXTRA_ARGS...
	label=$1
	shift
	for r in $RATES; do
		: >"$OUT/rows"
		s=1
		while [ $s -le "$RUNS" ]; do
			"$FB" --hosts "$HOSTS" --radix "$RADIX" --drop $((r * 10000)) --seed $s "$@" >>"$OUT/rows" 2>>"$OUT/mock.err"
			s=$((s + 1))
		done
		cat "$OUT/rows" >>"$OUT/mock-$label.txt"
		ok=$(grep -c ' ok=1 ' "$OUT/rows")
		printf '| %s | %s%% | %s/%s |' "$label" "$r" "$ok" "$RUNS"
		for k in wall_s fabric_s smps retried adaptive lost sweeps; do
			m=$(while read -r line; do val "$line" $k; done <"$OUT/rows" | median)
			printf ' %s |' "$m"
		done
		echo
	done
}

echo
echo "## mock, $HOSTS hosts (radix $RADIX), $RUNS seeds per rate, medians"
echo "| retries | loss | came up whole | wall s | fabric s | SMPs | retried | beyond 3 | lost | sweeps |"
echo "|---|---|---|---|---|---|---|---|---|---|"
mock_rows adaptive
RATES="10 30" mock_rows fixed-3 --adaptive-max 0 --min-timeout-ms 0

[ "${IB:-1}" = 0 ] && exit 0
. "$top_srcdir/tests/lib-ibsim.sh"
_ibsim_find_umad2sim || exit 1
net=$OUT/ft$IB_HOSTS.net
"$SMCTL" topo gen fat-tree --hosts "$IB_HOSTS" --radix "$IB_RADIX" --levels 2 --format ibsim -o "$net" >/dev/null || exit 1
SIM_HOST=$(sed -n 's/^Ca[[:space:]]*[0-9]*[[:space:]]*"\([^"]*\)".*/\1/p' "$net" | head -1)
export SIM_HOST
switches=$(sed -n 's/^Switch[[:space:]]*[0-9]*[[:space:]]*"\([^"]*\)".*/\1/p' "$net")
nsw=$(echo "$switches" | wc -l)

ib_up() { # start ibsim with a console on fd 3
	IBSIM_DIR=$OUT/ib
	rm -rf "$IBSIM_DIR"
	mkdir -p "$IBSIM_DIR"
	IBSIM_SOCKNAME="smd-fbench-$$-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
	export IBSIM_DIR IBSIM_SOCKNAME
	mkfifo "$IBSIM_DIR/console"
	(cd "$IBSIM_DIR" && exec ibsim -s "$net" <console >ibsim.log 2>&1) &
	IBSIM_PID=$!
	exec 3>"$IBSIM_DIR/console"
	until grep -q " @$IBSIM_SOCKNAME:ctl@*\$" /proc/net/unix 2>/dev/null; do sleep 0.1; done
}
ib_down() {
	exec 3>&-
	kill "$IBSIM_PID" 2>/dev/null
	wait "$IBSIM_PID" 2>/dev/null
	IBSIM_PID=
}
trap 'ib_down' EXIT

echo
echo "## ibsim, $IB_HOSTS hosts (radix $IB_RADIX, $nsw switches), Error RATE on every switch, $RUNS runs per rate, medians"
echo "| Error rate | came up whole | wall ms | SMPs | retried | beyond 3 | lost | sweeps |"
echo "|---|---|---|---|---|---|---|---|"
for r in $RATES; do
	: >"$OUT/ib-rows"
	i=1
	while [ $i -le "$RUNS" ]; do
		ib_up
		for s in $switches; do echo "Error \"$s\" $r" >&3; done
		sleep 0.5
		t0=$(date +%s%N)
		ibsim_run "$SMD" --once -q --json --state-dir "$OUT/state-$r-$i" >"$OUT/ib-$r-$i.json" 2>"$OUT/ib-$r-$i.err"
		rc=$?
		t1=$(date +%s%N)
		ib_down
		j=$OUT/ib-$r-$i.json
		num() { grep -o "\"$1\":[0-9]*" "$j" | head -1 | sed 's/.*://'; }
		echo "ok=$([ $rc = 0 ] && echo 1 || echo 0) ms=$(( (t1 - t0) / 1000000 )) smps=$(num sent) retried=$(num retried) adaptive=$(num adaptive_retries) lost=$(num lost) sweeps=$(num sweeps)" >>"$OUT/ib-rows"
		i=$((i + 1))
	done
	cat "$OUT/ib-rows" >>"$OUT/ibsim.txt"
	printf '| %s%% | %s/%s |' "$r" "$(grep -c '^ok=1' "$OUT/ib-rows")" "$RUNS"
	for k in ms smps retried adaptive lost sweeps; do
		m=$(while read -r line; do val "$line" $k; done <"$OUT/ib-rows" | median)
		printf ' %s |' "$m"
	done
	echo
done
