#!/bin/sh
# Multi-plane benchmarks (issue 5). Run from a build directory:
#   sh ../bench/planes.sh [RUNS]
# 1. mock bring-up, 1 plane vs 8 planes of 2,048 hosts, virtual time (pure CPU)
#    and with a per-MAD latency model (5, 20, 100 us held back in real time);
# 2. one plane whose wire dies mid-sweep: when the healthy planes are up;
# 3. dry-run of the 8 plane dumps, engines ftree and planes (routing time from
#    the report), against OpenSM's ftree routing phase for one 2,048-host
#    plane measured by bench/routing.sh (see BENCHMARKS.md).
set -eu
runs=${1:-5}
b=$(pwd)
w=$(mktemp -d "${TMPDIR:-/tmp}/smd-bench-planes.XXXXXX")
trap 'rm -rf "$w"' EXIT
echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), load $(cut -d' ' -f1-3 /proc/loadavg)"
"$b/smd/smctl" topo gen fat-tree --hosts 2048 --radix 64 --planes 8 --split --format ibnd -o "$w/p8" >/dev/null
make -s bench/planes_bench >/dev/null
for lat in 0 5 20 100; do
	"$b/bench/planes_bench" "$w/p8" 8 "$lat" "$runs"
done
"$b/bench/planes_bench" "$w/p8" 8 20 1 3
for e in ftree planes; do
	for i in $(seq "$runs"); do
		"$b/smd/smd" --dry-run -t "$w/p8.0" -t "$w/p8.1" -t "$w/p8.2" -t "$w/p8.3" -t "$w/p8.4" \
			-t "$w/p8.5" -t "$w/p8.6" -t "$w/p8.7" -R "$e" --json 2>/dev/null --report - |
			python3 -c 'import json,sys; d=json.load(sys.stdin); s=d["seconds"]; print("%.1f %.1f %.1f" % (s["load"]*1e3, s["route"]*1e3, (s["total"]-s["metrics"])*1e3))'
	done | sort -n -k2 | awk -v e="$e" -v n="$runs" '{ a[NR]=$0 } END { split(a[int((n+1)/2)], m, " ");
		printf "dry-run 8 x 2,048 hosts, -R %s: load %s ms, routing+validation %s ms, whole run without metrics %s ms (median of %d)\n", e, m[1], m[2], m[3], n }'
done
