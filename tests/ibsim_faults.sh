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
SMD=$top_builddir/smd/smd
SMCTL=$top_builddir/smd/smctl
RATE=${RATE:-10}
for t in ibsim iblinkinfo ibtracert; do
	command -v $t >/dev/null 2>&1 || { echo "FAIL: $t not installed (ibsim-utils, infiniband-diags)"; exit 1; }
done
_ibsim_find_umad2sim || exit 1
export UMAD2SIM

WORK=$(mktemp -d "${TMPDIR:-/tmp}/smd-faults.XXXXXX") || exit 1
fail=0
bad() { echo "FAIL: $*"; fail=1; }
json_num() { grep -o "\"$2\":[0-9]*" "$1" | head -1 | sed 's/.*://'; }

# umad2sim copies out of its own receive buffer beyond its end on every recv (see ibsim_once.sh)
printf 'interceptor_via_lib:libumad2sim.so\n' >"$WORK/asan.supp"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}suppressions=$WORK/asan.supp"
export ASAN_OPTIONS

# mock backend: the summary JSON has the rejected counters
"$SMCTL" topo gen fat-tree --hosts 16 --radix 8 --levels 2 --format ibsim -o "$WORK/ft.net" >/dev/null ||
	{ echo "FAIL: topo gen"; exit 1; }
"$SMD" --once --backend mock --topology "$WORK/ft.net" --state-dir "$WORK/mock-state" -q --json \
	>"$WORK/mock.json" 2>"$WORK/mock.err" || { cat "$WORK/mock.err"; bad "smd --once on the mock"; }
grep -q '"rejected":{"truncated":0,' "$WORK/mock.json" || { cat "$WORK/mock.json"; bad "no rejected counters in the JSON"; }

# ibsim with a console (lib-ibsim starts it without one): this test starts it
# and hands the PID and folder to lib-ibsim, whose ibsim_run/ibsim_stop work as usual.
IBSIM_DIR=$WORK/ib
mkdir -p "$IBSIM_DIR"
IBSIM_SOCKNAME="smd-faults-$$-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
export IBSIM_DIR IBSIM_SOCKNAME
cleanup() {
	exec 3>&- 2>/dev/null
	if [ -n "${IBSIM_PID:-}" ]; then
		kill "$IBSIM_PID" 2>/dev/null
		wait "$IBSIM_PID" 2>/dev/null
	fi
	[ -n "${KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkfifo "$IBSIM_DIR/console" || exit 1
(cd "$IBSIM_DIR" && exec ibsim -s "$WORK/ft.net" <console >ibsim.log 2>&1) &
IBSIM_PID=$!
exec 3>"$IBSIM_DIR/console"
i=0
until grep -q " @$IBSIM_SOCKNAME:ctl@*\$" /proc/net/unix 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt 300 ] && { cat "$IBSIM_DIR/ibsim.log"; echo "FAIL: ibsim did not start"; exit 1; }
	kill -0 "$IBSIM_PID" 2>/dev/null || { cat "$IBSIM_DIR/ibsim.log"; echo "FAIL: ibsim died"; exit 1; }
	sleep 0.1
done
SIM_HOST=$(sed -n 's/^Ca[[:space:]]*[0-9]*[[:space:]]*"\([^"]*\)".*/\1/p' "$WORK/ft.net" | head -1)
export SIM_HOST
switches=$(sed -n 's/^Switch[[:space:]]*[0-9]*[[:space:]]*"\([^"]*\)".*/\1/p' "$WORK/ft.net")

set_errors() { # RATE
	for s in $switches; do echo "Error \"$s\" $1" >&3; done
	# the console is read between MADs: give it a moment, then check it took
	sleep 0.5
}

set_errors "$RATE"
ibsim_run "$SMD" --once --json -q --state-dir "$WORK/state" >"$WORK/s1.json" 2>"$WORK/s1.err"
rc=$?
cat "$WORK/s1.json"
[ $rc = 0 ] || { cat "$WORK/s1.err"; bad "smd --once under ${RATE}% errors exited $rc"; }
[ "$(json_num "$WORK/s1.json" cas)" = 16 ] || bad "not every CA found"
[ "$(json_num "$WORK/s1.json" active_ports)" = "$(json_num "$WORK/s1.json" link_ports)" ] ||
	bad "not every link port ACTIVE"
retried=$(json_num "$WORK/s1.json" retried)
[ "${retried:-0}" -gt 0 ] || bad "no retries: the errors did not take (ibsim.log: $(tail -3 "$IBSIM_DIR/ibsim.log"))"
echo "under ${RATE}% errors: $(json_num "$WORK/s1.json" sent) SMPs sent, $retried retried, $(json_num "$WORK/s1.json" lost) lost, $(json_num "$WORK/s1.json" sweeps) sweeps"

# second run under the same errors: every LID kept
ibsim_run "$SMD" --once --json -q --state-dir "$WORK/state" >"$WORK/s2.json" 2>"$WORK/s2.err" ||
	{ cat "$WORK/s2.err"; bad "second smd --once under errors failed"; }
grep -q '"lid_assign":{[^}]*"new":0,"moved":0' "$WORK/s2.json" || { cat "$WORK/s2.json"; bad "LIDs changed on the second run"; }

# the errors stop: read the fabric back with infiniband-diags
set_errors 0
ibsim_run iblinkinfo >"$WORK/links.txt" 2>&1 || bad "iblinkinfo failed"
nlinks=$(grep -c 'LinkUp' "$WORK/links.txt")
nact=$(grep 'LinkUp' "$WORK/links.txt" | grep -c 'Active')
[ "$nlinks" -gt 0 ] && [ "$nlinks" = "$nact" ] || { cat "$WORK/links.txt"; bad "iblinkinfo: $nact of $nlinks linked ports Active"; }
lids=$(grep -o '"lids":[0-9]*' "$WORK/s1.json" >/dev/null && ibsim_run ibnetdiscover 2>/dev/null |
	sed -n 's/^\[[0-9]*\](.*# lid \([0-9]*\) .*/\1/p' | sort -un)
# first CA to every other, and every CA to the next one (a ring): 2N-1 traces, not N^2
n=0
first= prev=
for b in $lids; do
	if [ -z "$first" ]; then first=$b; prev=$b; continue; fi
	ibsim_run ibtracert "$first" "$b" >/dev/null 2>&1 || bad "ibtracert $first $b"
	[ "$prev" != "$first" ] && { ibsim_run ibtracert "$prev" "$b" >/dev/null 2>&1 || bad "ibtracert $prev $b"; }
	ibsim_run ibtracert "$b" "$first" >/dev/null 2>&1 || bad "ibtracert $b $first"
	n=$((n + 2))
	prev=$b
done
[ "$n" -ge 30 ] || bad "only $n CA pairs traced"
echo "ibtracert: $n CA pairs routed"
[ $fail = 0 ] && echo "PASS: smd --once under ibsim ${RATE}% MAD errors"
exit $fail
