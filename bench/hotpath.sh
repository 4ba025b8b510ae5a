#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/hotpath.sh [BUILD_DIR]: hot-path pinning benchmarks (results: bench/hotpath.md).
# Needs bench/hotpath_bench built (make check builds it). Each line of output
# is one scenario: fabric from the generator, plain ftree routes, a profile of
# random permutations, pinned by sm_hotpath_pin(); loads checked with our
# evaluator and sm_metrics_max_load(), LFTs with sm_validate().
set -eu
B=${1:-build}
HB="$B/bench/hotpath_bench"
[ -x "$HB" ] || { echo "hotpath.sh: $HB not built (make check)" >&2; exit 1; }

run() {
	label=$1
	shift
	out=$("$HB" "$@") || { echo "FAIL: $label ($*)"; echo "$out"; exit 1; }
	echo "## $label: hotpath_bench $*"
	echo "$out" | grep -E '^(fabric|profile|plane[0-9]+:|total)' | sed -e 's/^/    /'
}

for s in 1 2 3 4 5; do
	run "one random permutation, 2048 hosts (seed $s)" --seed $s --repeat 3
done
run "one random permutation, greedy only (no colouring)" --seed 1 --method greedy --repeat 3
for w in equal random linear; do
	for s in 1 2 3; do
		run "8 random permutations, weights $w (seed $s)" --perms 8 --weights $w --seed $s --repeat 3
	done
done
run "10,240 flows (5 permutations, random weights) on one 2048-host plane" --perms 5 --weights random --repeat 5
run "same profile, 8 planes (16,384 endpoints): flows split over planes" --perms 5 --weights random --planes 8 --repeat 3
run "3-level tree, 8192 hosts (radix 32), one permutation" --levels 3 --radix 32 --hosts 8192 --repeat 1
run "3-level tree, 8192 hosts (radix 32), 4 permutations random weights" --levels 3 --radix 32 --hosts 8192 --perms 4 --weights random --repeat 1
run "3% switch links removed (seeded), one permutation" --remove-links 0.03 --repeat 1
run "3% switch links removed (seeded), 8 permutations random weights" --remove-links 0.03 --perms 8 --weights random --repeat 1
run "10% switch links removed (seeded), 8 permutations random weights" --remove-links 0.10 --perms 8 --weights random --repeat 1

# End to end: generator dump -> profile file -> smd --dry-run --profile (the loader as smd uses it).
if [ -x "$B/smd/smd" ] && [ -x "$B/smd/smctl" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	"$B/smd/smctl" topo gen fat-tree --hosts 2048 --radix 64 -o "$tmp/ft.ibnd" >/dev/null
	"$HB" --seed 1 --repeat 1 --write-profile "$tmp/perm.txt" >/dev/null
	for eng in hotpath ftree; do
		echo "## smd --dry-run -t ft.ibnd -R $eng --profile perm.txt (2048 hosts, one permutation, seed 1)"
		if "$B/smd/smd" --dry-run -t "$tmp/ft.ibnd" -R $eng --profile "$tmp/perm.txt" --report - >"$tmp/out" 2>&1; then
			grep -E 'routing:|engine notes|profile:|validation:' "$tmp/out" | sed -e 's/^/    /'
		else
			sed -e 's/^/    /' "$tmp/out" | tail -2
		fi
	done
fi
