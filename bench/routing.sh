#!/bin/sh
# SPDX-License-Identifier: MIT
# Routing benchmark: ftree quality and speed on generated fat trees, and
# OpenSM 3.3.23's ftree routing phase on the same 2,048-host plane (ibsim),
# measured in the same run. Results are written up in bench/routing.md.
#
# usage: bench/routing.sh BUILD_DIR [WORK_DIR]
#   BUILD_DIR: a configured and built tree (make && make check, so that
#              bench/route_bench exists); WORK_DIR: scratch (default mktemp).
# Environment: OSM_RUNS (default 3) OpenSM runs; SKIP_OSM=1 skips OpenSM;
# SKIP_BIG=1 skips the 3-level trees.
set -eu

build=$(cd "${1:?usage: routing.sh BUILD_DIR [WORK_DIR]}" && pwd)
work=${2:-$(mktemp -d /tmp/smd-routing-bench.XXXXXX)}
mkdir -p "$work"
work=$(cd "$work" && pwd)
rb="$build/bench/route_bench"
smctl="$build/smd/smctl"
smd="$build/smd/smd"
umad2sim=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
runs=${OSM_RUNS:-3}
ibsim_pid=

cleanup() {
	if [ -n "$ibsim_pid" ]; then
		kill "$ibsim_pid" 2>/dev/null || true
		wait "$ibsim_pid" 2>/dev/null || true
	fi
}
trap cleanup EXIT INT TERM

[ -x "$rb" ] || { echo "routing.sh: $rb missing: run make check in $build first" >&2; exit 1; }

echo "== machine"
echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "nproc: $(nproc)"
grep -m1 'model name' /proc/cpuinfo
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "opensm: $(opensm --version 2>/dev/null | sed -n 's/^\(OpenSM .*\)/\1/p' | head -1)"

echo
echo "== ftree quality, 2,048-host radix-64 2-level tree (generator), 100 random permutations, seed = removal seed"
"$rb" --hosts 2048 --radix 64 --repeat 5
for frac in 0.01 0.03 0.10; do
	seeds="1 2 3"
	[ "$frac" = 0.03 ] && seeds="1 2 3 4 5"   # the 3% target is checked on seeds 1-5
	for seed in $seeds; do
		echo
		echo "-- $frac of switch-switch links removed, seed $seed"
		"$rb" --hosts 2048 --radix 64 --repeat 3 --remove "$frac" --seed "$seed" || true
	done
done

for sw in 1 4; do
	echo
	echo "-- $sw spine(s) removed, seed 1"
	"$rb" --hosts 2048 --radix 64 --repeat 3 --remove-switches "$sw" --seed 1 || true
done

echo
echo "== ftree speed"
echo "-- 8 planes x 2,048 hosts (16,384 endpoints)"
"$rb" --hosts 2048 --radix 64 --planes 8 --repeat 10 --no-metrics
if [ "${SKIP_BIG:-0}" != 1 ]; then
	echo "-- 3-level, 32,768 hosts, radix 64 (metrics without shifts, 10 permutations)"
	"$rb" --levels 3 --hosts 32768 --radix 64 --repeat 3 --no-shift --perms 10
	echo "-- 3-level, 8,192 hosts, radix 64 (same shape, 8 pods; all 8,191 shifts, 20 permutations)"
	"$rb" --levels 3 --hosts 8192 --radix 64 --repeat 3 --perms 20
	for frac in 0.01 0.03; do
		echo "-- the same with $frac of switch-switch links removed, seed 1"
		"$rb" --levels 3 --hosts 8192 --radix 64 --repeat 1 --perms 20 --remove "$frac" --seed 1 || true
	done
fi

echo
echo "== smd --dry-run, 8 planes from ibnetdiscover dumps"
"$smctl" topo gen fat-tree --hosts 2048 --radix 64 --planes 8 --split -o "$work/mp8.ibnd"
dumps=""
for i in 0 1 2 3 4 5 6 7; do dumps="$dumps -t $work/mp8.ibnd.$i"; done
for i in 1 2 3; do
	# shellcheck disable=SC2086
	/usr/bin/time -f "dry-run (no LFT file, no report): %e s wall, %U s user, %S s sys, %M KB peak RSS" \
		"$smd" --dry-run $dumps -R ftree -q 2>&1 | grep -E 'dry-run|error' || true
done
for i in 1 2 3; do
	# shellcheck disable=SC2086
	/usr/bin/time -f "dry-run (LFT file, no report): %e s wall, %U s user, %S s sys, %M KB peak RSS" \
		"$smd" --dry-run $dumps -R ftree --lfts-out "$work/mp8.lfts" -q 2>&1 | grep -E 'dry-run|error' || true
done
# shellcheck disable=SC2086
/usr/bin/time -f "dry-run with report: %e s wall, %U s user, %M KB peak RSS" \
	"$smd" --dry-run $dumps -R ftree --lfts-out "$work/mp8.lfts" --report "$work/mp8.report" -q 2>&1 |
	grep -E 'dry-run|error' || true
grep -E '^summary' "$work/mp8.report" || true

[ "${SKIP_OSM:-0}" = 1 ] && exit 0

# Routing phase = "ucast_mgr_route: building routing with 'ftree'" .. "tables configured".
phase_ms() {
	awk '
	function t(   a) { split($3, a, ":"); return a[1] * 3600 + a[2] * 60 + a[3] + $4 / 1e6 }
	/ucast_mgr_route: building routing with/ { if (!s) s = t() }
	/do_routing: Starting FatTree routing/ { r = t() }
	/do_routing: FatTree routing is done/ { e2 = t() }
	/tables configured on all switches/ { e = t(); eng = $9 }
	END {
		if (!s || !e) { print "not found"; exit }
		printf "%.1f ms (routed by %s", (e - s) * 1000, eng
		if (r && e2) printf "; ftree do_routing %.1f ms", (e2 - r) * 1000
		print ")"
	}' "$1"
}

# osm_plane NETFILE LABEL RUNS: OpenSM --once under ibsim RUNS times, then its LFTs
# read back with dump_lfts and judged by lft_eval (the evaluator ftree is judged by).
osm_plane() {
	net=$1 label=$2 n=$3
	IBSIM_SOCKNAME="smd-$$-bench-$label"
	export IBSIM_SOCKNAME
	ibsim -s -N 4096 -S 256 -P 16384 -n "$net" >"$work/ibsim-$label.log" 2>&1 &
	ibsim_pid=$!
	sleep 3
	kill -0 "$ibsim_pid" || { echo "ibsim did not start:"; cat "$work/ibsim-$label.log"; exit 1; }
	i=1
	while [ "$i" -le "$n" ]; do
		d="$work/osm-$label-$i"
		mkdir -p "$d/dump"
		(cd "$d" && LD_PRELOAD=$umad2sim /usr/bin/time -f "%e s wall, %U s user" \
			opensm -R ftree --once -D 0x07 -f "$d/osm.log" --dump_files_dir "$d/dump" \
			>"$d/osm.out" 2>"$d/time.txt") || true
		echo "run $i: routing phase $(phase_ms "$d/osm.log"); whole --once: $(tail -1 "$d/time.txt"); load $(cut -d' ' -f1 /proc/loadavg)"
		grep -m1 'ERR AB0D' "$d/osm.log" | sed 's/^.*-> /  OpenSM says: /' || true
		i=$((i + 1))
	done
	(cd "$d" && LD_PRELOAD=$umad2sim ibnetdiscover >"$d/topo.ibnd" 2>"$d/ibnd.err" &&
		LD_PRELOAD=$umad2sim dump_lfts >"$d/lfts.txt" 2>"$d/lfts.err") || true
	echo "OpenSM's tables judged by lft_eval (100 random permutations, seed 1):"
	"$build/bench/lft_eval" "$d/topo.ibnd" "$d/lfts.txt" | sed 's/^/  /' || true
	kill "$ibsim_pid"
	wait "$ibsim_pid" 2>/dev/null || true
	ibsim_pid=
}

echo
echo "== OpenSM 3.3.23 (-R ftree --once, under ibsim) on one 2,048-host plane"
"$smctl" topo gen fat-tree --hosts 2048 --radix 64 --format ibsim -o "$work/ft2048.net" 2>/dev/null
osm_plane "$work/ft2048.net" full "$runs"
echo "-- smd's ftree on the same plane, right after (route_bench, generator fabric)"
"$rb" --hosts 2048 --radix 64 --repeat 10 --no-metrics | grep -E 'all planes'

echo
echo "== OpenSM 3.3.23 on the same plane with 3% of switch-switch links removed (seed 1)"
"$smctl" topo gen fat-tree --hosts 2048 --radix 64 --remove-links 0.03 --seed 1 --format ibsim \
	-o "$work/ft2048-3pct.net" 2>/dev/null
osm_plane "$work/ft2048-3pct.net" 3pct 1
