#!/bin/sh
# One process attaches at several nodes of one ibsim instance through ibsim's
# own client protocol (smd/mad/ibsim_client.c), and the node/port GUIDs it reads
# with a hand-built DR NodeInfo SMP match what infiniband-diags' smpquery
# (under umad2sim, attached at the same node) reports.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
UMAD2SIM=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
for t in ibsim smpquery; do
	command -v $t >/dev/null || { echo "FAIL: $t not installed (ibsim-utils, infiniband-diags)"; exit 1; }
done
probe="$top_builddir/tests/ibsim_probe"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/smd-ibsimc.XXXXXX")
export IBSIM_SOCKNAME="smd-ibsimc-$$"
net="$top_srcdir/tests/data/net.2sw2path4hca"
[ -f "$net" ] || net=/usr/share/doc/ibsim-utils/net-examples/net.2sw2path4hca
ibsim_pid=
cleanup() { [ -n "$ibsim_pid" ] && kill "$ibsim_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$scratch"; }
trap cleanup EXIT INT TERM
cd "$scratch" || exit 1
ibsim -s -n "$net" </dev/null >ibsim.log 2>&1 &
ibsim_pid=$!
fail=0
out=$("$probe" Hca1 Hca4 Switch2) || { echo "FAIL: probe failed"; cat ibsim.log; exit 1; }
echo "$out"
[ "$(echo "$out" | wc -l)" = 3 ] || { echo "FAIL: expected 3 lines"; fail=1; }
for node in Hca1 Hca4; do
	line=$(echo "$out" | grep "^$node ")
	guid=$(echo "$line" | awk '{print $2}')
	type=$(echo "$line" | awk '{print $4}')
	[ "$type" = 1 ] || { echo "FAIL: $node type $type, expected 1 (CA)"; fail=1; }
	ref=$(SIM_HOST=$node LD_PRELOAD=$UMAD2SIM smpquery -D nodeinfo 0 2>/dev/null | sed -n 's/^Guid:\.*//p')
	[ -n "$ref" ] || { echo "FAIL: smpquery gave nothing for $node"; fail=1; continue; }
	[ "$(printf '%d' "$ref" 2>/dev/null || echo "$ref")" = "$(printf '%d' "$guid" 2>/dev/null || echo "$guid")" ] ||
		{ echo "FAIL: $node guid $guid, smpquery says $ref"; fail=1; }
done
echo "$out" | grep -q "^Switch2 .* 2 " || { echo "FAIL: Switch2 is not a switch"; fail=1; }
# an unknown node is refused with a clear message, not a hang or crash
if "$probe" NoSuchNode 2>err.txt; then echo "FAIL: unknown node accepted"; fail=1; fi
grep -q "refused" err.txt || { echo "FAIL: no clear refusal:"; cat err.txt; fail=1; }
[ $fail = 0 ] && echo "PASS: ibsim client protocol"
exit $fail
