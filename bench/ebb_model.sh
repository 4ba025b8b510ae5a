#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 17, degraded 2-level trees: ftree's EBB and tables against model
# routings of the same tree (bench/ebb_model.c), per tree and as ratios to
# the EBB target (reference x bisection left x 0.98). BENCHMARKS.md
# "Session 8, ebb".
#
# usage: bench/ebb_model.sh BUILD_DIR [WORK_DIR]
# Environment: TREES (default 10) seeds per rate; RATES (default "5 10",
# percent of the switch links removed); PERMS (default 300) permutations
# for ebb_model.
# Trees: `smctl topo gen fat-tree --hosts 2048 --radix 64 --levels 2
# --remove-links R --seed S` (bench/degraded.sh's 2-level rows). Columns per
# tree: rate seed, ftree's EBB / reference / bisection left / EBB bound from
# `smd --dry-run -R ftree --report --json` (100 permutations, seed 0), then
# ebb on ebb_model's permutations of ftree's own tables (--lfts-out) and of
# the rotation, balanced and decoupled models.
set -eu

build=$(cd "${1:?usage: ebb_model.sh BUILD_DIR [WORK_DIR]}" && pwd)
work=${2:-$(mktemp -d /tmp/smd-ebb-model.XXXXXX)}
mkdir -p "$work"
trees=${TREES:-10}
rates=${RATES:-5 10}
perms=${PERMS:-300}
for p in smd/smd smd/smctl bench/ebb_model; do
	[ -x "$build/$p" ] || { echo "ebb_model.sh: build $build/$p first" >&2; exit 2; }
done
fields="python3 $(cd "$(dirname "$0")" && pwd)/report_fields.py"
echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rate seed  ftree ref bisection bound  | model ebb: ftree-tables rotation balanced decoupled"
out="$work/trees.txt"
: >"$out"
for rate in $rates; do
	seed=1
	while [ "$seed" -le "$trees" ]; do
		t="$work/t.ibnd"
		"$build/smd/smctl" topo gen fat-tree --hosts 2048 --radix 64 --levels 2 \
			--remove-links "$(awk -v r="$rate" 'BEGIN { printf "%.2f", r / 100 }')" --seed "$seed" -o "$t" >/dev/null
		"$build/smd/smd" --dry-run -t "$t" -R ftree --report "$work/r.json" --json --lfts-out "$work/t.lfts" -q
		rep=$($fields "$work/r.json" metrics.random_permutations.ebb reference.random_permutations.ebb \
			shape.bisection_left metrics.random_permutations.ebb_bound)
		mod=$("$build/bench/ebb_model" "$t" --lfts "$work/t.lfts" --perms "$perms" |
			awk '{ v[$1] = $3 } END { print v["lfts"], v["rotation"], v["balanced"], v["decoupled"] }')
		echo "$rate $seed $rep $mod" | tee -a "$out"
		seed=$((seed + 1))
	done
done
echo
echo "per rate: ratio to the links-left target (ref x shape.bisection_left x 0.98, stricter than the report's bisection), least-most (mean)"
echo "rate  ftree  bound  ftree-tables  rotation  balanced  decoupled"
awk '{
	t = $4 * $5 * 0.98; k = $1; n[k]++
	for (i = 0; i < 6; i++) {
		c = i == 0 ? 3 : i + 5; r = $c / t
		if (!((k, i) in lo) || r < lo[k, i]) lo[k, i] = r
		if (!((k, i) in hi) || r > hi[k, i]) hi[k, i] = r
		s[k, i] += r
	}
	if (!(k in seen)) { seen[k] = 1; order[++no] = k }
}
END {
	for (j = 1; j <= no; j++) {
		k = order[j]; printf "%3s%%", k
		for (i = 0; i < 6; i++) printf "  %.3f-%.3f (%.3f)", lo[k, i], hi[k, i], s[k, i] / n[k]
		printf "\n"
	}
}' "$out"
