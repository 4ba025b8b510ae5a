#!/bin/sh
# SPDX-License-Identifier: MIT
# Multicast (issue 14): MFT compute and programming on the mock; BENCHMARKS.md "Multicast".
#
# usage: bench/mft.sh [RUNS]     (from a build directory; default 3 runs per shape)
# env:   GROUPS (1000) BUILD (.)
#
# bench/mft_bench on a 2,048-host plane, 2 levels (radix 64: 32 leaves, 32 spines, 96 switches)
# and 3 levels (radix 32: 512 switches), GROUPS synthetic groups (group 0 every host, the others
# one host in eight, their first member send-only): the trees alone (best of 5), a cold bring-up
# with and without them (MFT blocks, SMPs, wall and virtual fabric time), a second bring-up with
# the state, one group joining and one member leaving through the MFT-only pass.
set -u
RUNS=${1:-3}
GROUPS=${GROUPS:-1000}
BUILD=${BUILD:-$(pwd)}
MB=$BUILD/bench/mft_bench
[ -x "$MB" ] || { echo "mft.sh: $MB missing (make check builds it)" >&2; exit 1; }
echo "# machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(uname -r); load: $(cut -d' ' -f1-3 /proc/loadavg)"
for shape in "64 2" "32 3"; do
	set -- $shape
	r=1
	while [ $r -le "$RUNS" ]; do
		echo "== radix $1, $2 levels, $GROUPS groups, run $r"
		"$MB" --hosts 2048 --radix "$1" --levels "$2" --groups "$GROUPS" || exit 1
		r=$((r + 1))
	done
done
