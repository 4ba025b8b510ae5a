#!/bin/sh
# SPDX-License-Identifier: MIT
# Two smd binaries' whole dry-run of the same dumps with --lfts-out, run
# alternately (A, B, A, B, ...) so both see the same machine load; prints
# the median wall time (start to exit) and CPU (user+sys) of each and the
# 1-minute load before and after. Used to measure a change to the dry-run's
# LFT file writer against the previous build (BENCHMARKS.md, issue 17).
#
# usage: bench/dryrun_ab.sh SMD_A SMD_B PREFIX [RUNS] [PLANES]
#   PREFIX.0 .. PREFIX.(PLANES-1): dumps (smctl topo gen ... --planes 8 --split);
#   RUNS (default 15) runs of each; PLANES default 8. Environment: SMD_ENGINE
#   (default ftree), LFTS_FORMAT (default dump).
set -eu
a=${1:?usage: dryrun_ab.sh SMD_A SMD_B PREFIX [RUNS] [PLANES]}
b=${2:?}
prefix=${3:?}
runs=${4:-15}
planes=${5:-8}
w=$(mktemp -d /tmp/smd-dryrun-ab.XXXXXX)
trap 'rm -rf "$w"' EXIT
dumps=""
i=0
while [ "$i" -lt "$planes" ]; do dumps="$dumps -t $prefix.$i"; i=$((i + 1)); done
median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
one() {   # BIN TAG: one run, appends "wall_ms cpu_ms" to $w/TAG
	t0=$(date +%s%N)
	# shellcheck disable=SC2086
	/usr/bin/time -f "%U %S" -o "$w/t" "$1" --dry-run $dumps -R "${SMD_ENGINE:-ftree}" \
		--lfts-out "$w/$2.lfts" --lfts-format "${LFTS_FORMAT:-dump}" -q
	t1=$(date +%s%N)
	awk -v a="$t0" -v b="$t1" '{ printf "%.1f %.0f\n", (b - a) / 1e6, ($1 + $2) * 1000 }' "$w/t" >>"$w/$2"
}
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%Y-%m-%d %H:%M UTC')"
r=0
while [ "$r" -lt "$runs" ]; do
	one "$a" A
	one "$b" B
	r=$((r + 1))
done
cmp -s "$w/A.lfts" "$w/B.lfts" && same="byte-identical" || same="DIFFERENT"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); LFT files $same ($(wc -c <"$w/B.lfts") bytes)"
for t in A B; do
	echo "$t: wall median $(cut -d' ' -f1 "$w/$t" | median) ms (min $(cut -d' ' -f1 "$w/$t" | sort -n | head -1)), CPU median $(cut -d' ' -f2 "$w/$t" | median) ms, $runs runs"
done
