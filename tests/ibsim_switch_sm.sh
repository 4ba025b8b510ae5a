#!/bin/sh
# The SM attached at a switch (its management port 0), as when ibsim's default
# node is a switch: smd --once under umad2sim with no SIM_HOST brings the
# fabric up, every linked port Active (read back with iblinkinfo from a CA),
# and the SM's LID is the switch's.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-ibsim.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/smd-swsm.XXXXXX")
# umad2sim over-reads its own receive buffer; under ASan, ignore reports raised inside it only
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}suppressions=$top_srcdir/tests/data/mad/asan-umad2sim.supp"
export ASAN_OPTIONS
fail=0
"$top_builddir/smd/smctl" topo gen fat-tree --hosts 16 --radix 8 --format ibsim -o "$work/net" >/dev/null || exit 1
head -20 "$work/net" | grep -q '^Switch' || { echo "FAIL: the net file does not start with a switch"; exit 1; }
ibsim_start "$work/net" || { echo "FAIL: ibsim did not start"; rm -rf "$work"; exit 1; }
trap 'ibsim_cleanup; rm -rf "$work"' EXIT
unset SIM_HOST
ibsim_run "$top_builddir/smd/smd" --once --state-dir "$work/state" >"$work/out" 2>"$work/err" ||
	{ echo "FAIL: smd --once at a switch"; cat "$work/err"; fail=1; }
grep -q "64/64 link ports ACTIVE" "$work/out" || { echo "FAIL: not every link port ACTIVE"; cat "$work/out"; fail=1; }
# the SM's LID is the LID of the switch it runs on (the first node), whatever it is (hosts are numbered first)
sw=$(grep -m1 '^Switch' "$work/net" | cut -d'"' -f2 | sed 's/^S-/0x/')
swlid=$(awk -v g="$sw" '$1 == g { print $2 }' "$work/state/guid2lid")
grep -q "SM LID $((${swlid:-0}))$" "$work/out" || { echo "FAIL: SM LID is not the first switch's ($sw: ${swlid:-none})"; grep fabric: "$work/out"; fail=1; }
ca=$(grep -m1 '^Ca' "$work/net" | cut -d'"' -f2)
SIM_HOST=$ca ibsim_run iblinkinfo >"$work/links" 2>/dev/null || { echo "FAIL: iblinkinfo"; fail=1; }
down=$(grep '==(' "$work/links" | grep -v '"" ( )' | grep -vc 'Active/')
[ "$down" = 0 ] || { echo "FAIL: $down linked ports not Active"; fail=1; }
[ $fail = 0 ] && echo "PASS: SM on a switch port 0"
exit $fail
