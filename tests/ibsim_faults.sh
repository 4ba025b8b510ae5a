#!/bin/sh
# SPDX-License-Identifier: MIT
# smd --once brings a fabric up under ibsim while ibsim drops MADs
# (console command `Error "node" RATE` on every switch: each MAD reaching one
# of its ports is dropped with RATE% chance, ibsim/sim_mad.c):
#   - exit 0, every CA found, every link port ACTIVE, retries > 0 in the JSON
#     summary (which also carries the per-kind "rejected" counters);
#   - with the errors cleared, tools we did not write agree: iblinkinfo shows
#     every linked port ACTIVE, ibtracert routes CA pairs (first CA to and
#     from every other, and a ring);
#   - a second smd --once, under the errors again, keeps every LID.
# Also: the mock backend's --once JSON carries the "rejected" object.
# Fabric: a generated radix-8 2-level fat tree, 16 hosts (small: make check).
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-ibsim.sh"

top_builddir=$(cd "$top_builddir" && pwd)
. "$top_srcdir/tests/lib-daemon.sh"
RATE=${RATE:-10}
need_tools "ibsim-utils, infiniband-diags" ibsim iblinkinfo ibtracert
_ibsim_find_umad2sim || exit 1
export UMAD2SIM
scratch faults
umad2sim_supp

"$smctl" topo gen fat-tree --hosts 16 --radix 8 --levels 2 --format ibsim -o "$work/ft.net" >/dev/null ||
	{ echo "FAIL: topo gen"; exit 1; }
"$smd" --once --backend mock --topology "$work/ft.net" --state-dir "$work/mock-state" -q --json \
	>"$work/mock.json" 2>"$work/mock.err" || { cat "$work/mock.err"; bad "smd --once on the mock"; }
grep -q '"rejected":{"truncated":0,' "$work/mock.json" || { cat "$work/mock.json"; bad "no rejected counters in the JSON"; }

# ibsim with its console: error rates are set there
IBSIM_CONSOLE=1 scratch_ibsim "$work/ft.net" || { echo "FAIL: ibsim did not start"; exit 1; }
SIM_HOST=$(sed -n 's/^Ca[[:space:]]*[0-9]*[[:space:]]*"\([^"]*\)".*/\1/p' "$work/ft.net" | head -1)
export SIM_HOST
switches=$(sed -n 's/^Switch[[:space:]]*[0-9]*[[:space:]]*"\([^"]*\)".*/\1/p' "$work/ft.net")

set_errors() { # RATE
	for s in $switches; do ibsim_console "Error \"$s\" $1"; done
	# the console is read between MADs: give it a moment, then check it took
	sleep 0.5
}

set_errors "$RATE"
ibsim_run "$smd" --once --json -q --state-dir "$work/state" >"$work/s1.json" 2>"$work/s1.err"
rc=$?
cat "$work/s1.json"
[ $rc = 0 ] || { cat "$work/s1.err"; bad "smd --once under ${RATE}% errors exited $rc"; }
[ "$(json_num "$work/s1.json" cas)" = 16 ] || bad "not every CA found"
[ "$(json_num "$work/s1.json" active_ports)" = "$(json_num "$work/s1.json" link_ports)" ] ||
	bad "not every link port ACTIVE"
retried=$(json_num "$work/s1.json" retried)
[ "${retried:-0}" -gt 0 ] || bad "no retries: the errors did not take (ibsim.log: $(tail -3 "$IBSIM_DIR/ibsim.log"))"
echo "under ${RATE}% errors: $(json_num "$work/s1.json" sent) SMPs sent, $retried retried, $(json_num "$work/s1.json" lost) lost, $(json_num "$work/s1.json" sweeps) sweeps"

# second run under the same errors: every LID kept
ibsim_run "$smd" --once --json -q --state-dir "$work/state" >"$work/s2.json" 2>"$work/s2.err" ||
	{ cat "$work/s2.err"; bad "second smd --once under errors failed"; }
grep -q '"lid_assign":{[^}]*"new":0,"moved":0' "$work/s2.json" || { cat "$work/s2.json"; bad "LIDs changed on the second run"; }

# the errors stop: read the fabric back with infiniband-diags
set_errors 0
ibsim_diag iblinkinfo >"$work/links.txt" 2>&1 || bad "iblinkinfo failed"
nlinks=$(grep -c 'LinkUp' "$work/links.txt")
nact=$(grep 'LinkUp' "$work/links.txt" | grep -c 'Active')
[ "$nlinks" -gt 0 ] && [ "$nlinks" = "$nact" ] || { cat "$work/links.txt"; bad "iblinkinfo: $nact of $nlinks linked ports Active"; }
lids=$(grep -o '"lids":[0-9]*' "$work/s1.json" >/dev/null && ibsim_run ibnetdiscover 2>/dev/null |
	sed -n 's/^\[[0-9]*\](.*# lid \([0-9]*\) .*/\1/p' | sort -un)
# first CA to every other, and every CA to the next one (a ring): 2N-1 traces, not N^2
n=0
first= prev=
for b in $lids; do
	if [ -z "$first" ]; then first=$b; prev=$b; continue; fi
	ibsim_diag ibtracert "$first" "$b" >/dev/null 2>&1 || bad "ibtracert $first $b"
	[ "$prev" != "$first" ] && { ibsim_diag ibtracert "$prev" "$b" >/dev/null 2>&1 || bad "ibtracert $prev $b"; }
	ibsim_diag ibtracert "$b" "$first" >/dev/null 2>&1 || bad "ibtracert $b $first"
	n=$((n + 2))
	prev=$b
done
[ "$n" -ge 30 ] || bad "only $n CA pairs traced"
echo "ibtracert: $n CA pairs routed"
[ $fail = 0 ] && echo "PASS: smd --once under ibsim ${RATE}% MAD errors"
exit $fail
