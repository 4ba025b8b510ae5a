#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 4's speed target, measured in one run: the whole `smd --dry-run` of
# the 8-plane, 16,384-endpoint fat tree (8 ibnetdiscover dumps, -R ftree, no
# output files) against OpenSM 3.3.23's ftree routing phase for ONE
# 2,048-host plane of the same shape under ibsim. The two are interleaved
# (one OpenSM run, then RUNS dry-runs, repeated OSM_RUNS times) so both see
# the same machine load. Results are written up in bench/dryrun.md.
#
# usage: bench/dryrun_vs_opensm.sh BUILD_DIR [WORK_DIR]
#   BUILD_DIR: a built tree (smd/smd and smd/smctl); WORK_DIR: scratch
#   (default mktemp; the dumps are kept there).
# Environment: LFTS_OUT (non-empty: the dry-run writes --lfts-out, and the floor is printed), SMD_ENGINE (default ftree) the chain smd routes with, RUNS (default 11) dry-runs per OpenSM run, OSM_RUNS (default
# 3) OpenSM runs. Exit status 0 if smd's median is below OpenSM's, 1 if not,
# 2 on a setup failure.
#
# OpenSM's routing phase is read from its own log (-D 0x07) as in
# bench/routing.sh: from "ucast_mgr_route: building routing with 'ftree'"
# to "ftree tables configured on all switches". smd's time is the wall time
# of the whole process (start to exit: reading 7 MB of text, LIDs, routing,
# validation), taken with date +%s%N around it; CPU and peak RSS come from
# /usr/bin/time on a separate run of each batch.
set -eu

build=$(cd "${1:?usage: dryrun_vs_opensm.sh BUILD_DIR [WORK_DIR]}" && pwd)
work=${2:-$(mktemp -d /tmp/smd-dryrun-bench.XXXXXX)}
mkdir -p "$work"
work=$(cd "$work" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
smd="$build/smd/smd"
smctl="$build/smd/smctl"
runs=${RUNS:-11}
osm_runs=${OSM_RUNS:-3}

[ -x "$smd" ] && [ -x "$smctl" ] || { echo "dryrun_vs_opensm.sh: build $build first" >&2; exit 2; }
command -v opensm >/dev/null || { echo "dryrun_vs_opensm.sh: opensm not installed" >&2; exit 2; }
# shellcheck source=../tests/lib-ibsim.sh
. "$here/../tests/lib-ibsim.sh"

# median of the numbers on stdin, one a line
median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# OpenSM's routing phase in ms from its log, or nothing
phase_ms() {
	awk '
	function t(   a) { split($3, a, ":"); return a[1] * 3600 + a[2] * 60 + a[3] + $4 / 1e6 }
	/ucast_mgr_route: building routing with/ { if (!s) s = t() }
	/tables configured on all switches/ { e = t() }
	END { if (s && e) printf "%.1f\n", (e - s) * 1000 }' "$1"
}

echo "== machine"
echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "nproc: $(nproc)"
grep -m1 'model name' /proc/cpuinfo || true
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "opensm: $(opensm --version 2>/dev/null | sed -n 's/^\(OpenSM .*\)/\1/p' | head -1)"
echo "smd: $smd"

"$smctl" topo gen fat-tree --hosts 2048 --radix 64 --planes 8 --split --format ibnd -o "$work/p8"
"$smctl" topo gen fat-tree --hosts 2048 --radix 64 --format ibsim -o "$work/ft2048.net"
dumps=""
for i in 0 1 2 3 4 5 6 7; do dumps="$dumps -t $work/p8.$i"; done
# LFTS_OUT=1: the dry-run as a user runs it, writing the dump_lfts file (issue 17)
[ -n "${LFTS_OUT:-}" ] && dumps="$dumps --lfts-out $work/lfts.out"
echo "smd command: smd --dry-run$dumps -R ${SMD_ENGINE:-ftree} -q"
echo "opensm command (under ibsim -s -n ft2048.net -N 2144 -S 96 -P 8288, umad2sim):"
echo "  opensm --once -R ftree -D 0x07 -f LOG"

ibsim_start "$work/ft2048.net" -N 2144 -S 96 -P 8288 || exit 2

: >"$work/smd.ms"
: >"$work/osm.ms"
: >"$work/smd.cpu"
r=1
while [ "$r" -le "$osm_runs" ]; do
	log="$IBSIM_DIR/osm-$r.log"
	ibsim_run opensm --once -R ftree -D 0x07 -f "$log" >"$IBSIM_DIR/osm-$r.out" 2>&1 || true
	ms=$(phase_ms "$log")
	if [ -z "$ms" ]; then
		echo "OpenSM run $r: no routing phase in its log:"
		tail -5 "$log" || true
		exit 2
	fi
	echo "$ms" >>"$work/osm.ms"
	batch=""
	i=1
	while [ "$i" -le "$runs" ]; do
		t0=$(date +%s%N)
		# shellcheck disable=SC2086
		"$smd" --dry-run $dumps -R "${SMD_ENGINE:-ftree}" -q || { echo "smd --dry-run failed" >&2; exit 2; }
		t1=$(date +%s%N)
		ms1=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", (b - a) / 1e6 }')
		echo "$ms1" >>"$work/smd.ms"
		batch="$batch $ms1"
		i=$((i + 1))
	done
	# shellcheck disable=SC2086
	/usr/bin/time -f "%U %S %M" -o "$work/time.txt" "$smd" --dry-run $dumps -R "${SMD_ENGINE:-ftree}" -q
	cat "$work/time.txt" >>"$work/smd.cpu"
	echo "round $r: OpenSM ftree routing phase $ms ms; smd dry-run ms:$batch;" \
		"cpu user+sys, peak RSS: $(awk '{ printf "%.0f ms, %d KB", ($1 + $2) * 1000, $3 }' "$work/time.txt");" \
		"load $(cut -d' ' -f1 /proc/loadavg)"
	r=$((r + 1))
done
ibsim_stop || true  # its wait reports the TERM it sent

if [ -n "${LFTS_OUT:-}" ]; then
	# the floor: the same bytes written by dd to the same file system, and memory bandwidth (dd /dev/zero to /dev/null)
	bytes=$(wc -c <"$work/lfts.out")
	mb=$(( (bytes + 1048575) / 1048576 ))
	dd_ms() { t0=$(date +%s%N); dd "$@" 2>/dev/null; t1=$(date +%s%N); awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }'; }
	w=""; m=""
	for _i in 1 2 3 4 5; do
		w="$w $(dd_ms if=/dev/zero of="$work/dd.out" bs=1M count="$mb")"
		m="$m $(dd_ms if=/dev/zero of=/dev/null bs=1M count=4096)"
	done
	w_med=$(echo "$w" | tr ' ' '\n' | sed '/^$/d' | median)
	m_med=$(echo "$m" | tr ' ' '\n' | sed '/^$/d' | median)
	rm -f "$work/dd.out"
	echo "LFT file: $bytes bytes; floor: dd of $mb MiB to the same file system $w_med ms (median of 5);" \
		"memory bandwidth $(awk -v t="$m_med" 'BEGIN { printf "%.1f", 4096 / 1024 / (t / 1000) }') GiB/s" \
		"(dd /dev/zero to /dev/null), so $(awk -v t="$m_med" -v b="$bytes" 'BEGIN { printf "%.1f", b / (4096 * 1048576 / (t / 1000)) * 1000 }') ms for the bytes"
fi
smd_med=$(median <"$work/smd.ms")
osm_med=$(median <"$work/osm.ms")
osm_min=$(sort -n "$work/osm.ms" | head -1)
cpu_med=$(awk '{ print ($1 + $2) * 1000 }' "$work/smd.cpu" | median)
rss_max=$(awk '$3 > m { m = $3 } END { print m }' "$work/smd.cpu")
echo
echo "== result"
echo "smd dry-run, 8 planes x 2,048 hosts: median $smd_med ms wall of $(wc -l <"$work/smd.ms") runs" \
	"(min $(sort -n "$work/smd.ms" | head -1), max $(sort -n "$work/smd.ms" | tail -1));" \
	"CPU median $cpu_med ms; peak RSS max $rss_max KB"
echo "OpenSM ftree routing phase, 1 plane x 2,048 hosts: median $osm_med ms of $osm_runs runs" \
	"(min $osm_min, max $(sort -n "$work/osm.ms" | tail -1))"
awk -v a="$smd_med" -v b="$osm_med" -v c="$osm_min" 'BEGIN {
	printf "ratio smd / OpenSM: %.2f (against OpenSM'\''s fastest run: %.2f)\n", a / b, a / c }'
if awk -v a="$smd_med" -v b="$osm_med" 'BEGIN { exit !(a < b) }'; then
	echo "target met: the 8-plane dry-run takes less wall time than OpenSM's routing of one plane"
	exit 0
fi
echo "target NOT met"
exit 1
