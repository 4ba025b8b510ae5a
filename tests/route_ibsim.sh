#!/bin/sh
# SPDX-License-Identifier: MIT
# The engine chain and plugins against a real peer (ibsim), read back with
# tools we did not write (infiniband-diags under umad2sim):
#   1. a ring of 5 switches: `smd --once -R minhop,updn` must pass minhop
#      over for its credit loop and program updn's tables; ibtracert routes
#      every CA pair; `-R minhop` alone is refused (exit 1, reason given);
#   2. a radix-8 2-level fat tree routed by the ecmp example plugin
#      (plugin_dir from a config file): ibtracert routes every CA pair;
#   3. an unknown engine is refused before anything is programmed.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-ibsim.sh"

SMD=$top_builddir/smd/smd
SMCTL=$top_builddir/smd/smctl
for t in ibsim ibnetdiscover ibtracert; do
	command -v $t >/dev/null 2>&1 || { echo "FAIL: $t not installed (ibsim-utils, infiniband-diags)"; exit 1; }
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/smd-route.XXXXXX") || exit 1
cleanup() { ibsim_cleanup; [ -n "${KEEP:-}" ] || rm -rf "$WORK"; }
trap cleanup EXIT
trap 'cleanup; trap - EXIT; exit 130' INT TERM HUP
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# umad2sim over-reads its own buffer (see tests/ibsim_once.sh); not ours
printf 'interceptor_via_lib:libumad2sim.so\n' >"$WORK/asan.supp"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}suppressions=$WORK/asan.supp"
export ASAN_OPTIONS

# trace_all NAME: ibtracert between every pair of CA port LIDs of the running fabric
trace_all() {
	ibsim_run ibnetdiscover >"$WORK/$1.topo" 2>/dev/null || { fail "$1: ibnetdiscover failed"; return; }
	lids=$(awk '/^\[[0-9]+\]\(/ { l = $0; if (sub(/.*# lid /, "", l)) { sub(/ .*/, "", l); print l } }' \
		"$WORK/$1.topo" | sort -n)
	ok=0
	for s in $lids; do
		for d in $lids; do
			[ "$s" = "$d" ] && continue
			if ibsim_run ibtracert "$s" "$d" >"$WORK/tr.txt" 2>&1 && grep -q "^To ca .* lid $d-" "$WORK/tr.txt"; then
				ok=$((ok + 1))
			else
				fail "$1: ibtracert $s $d:"; cat "$WORK/tr.txt"
			fi
		done
	done
	[ "$ok" -gt 0 ] || fail "$1: no CA pair traced"
	echo "$1: $ok CA pairs traced"
}

# 1. ring of 5 switches, one CA each (CAs first: ibsim attaches clients at the first node)
i=0
while [ $i -lt 5 ]; do printf 'Hca\t1 "H%d"\n[1]\t"S%d"[1]\n\n' $i $i; i=$((i + 1)); done >"$WORK/ring5.net"
i=0
while [ $i -lt 5 ]; do
	printf 'Switch\t8 "S%d"\n[1]\t"H%d"[1]\n[2]\t"S%d"[3]\n[3]\t"S%d"[2]\n\n' \
		$i $i $(((i + 1) % 5)) $(((i + 4) % 5))
	i=$((i + 1))
done >>"$WORK/ring5.net"

if ibsim_start "$WORK/ring5.net"; then
	if ibsim_run "$SMD" --once -R minhop --state-dir "$WORK/st0" >"$WORK/m.out" 2>"$WORK/m.err"; then
		fail "ring: -R minhop was accepted despite its credit loop"
	else
		grep -q "minhop passed over.*credit loop" "$WORK/m.err" ||
			{ fail "ring: no credit-loop reason for refusing minhop:"; cat "$WORK/m.err"; }
	fi
	if ibsim_run "$SMD" --once -R minhop,updn --state-dir "$WORK/st1" >"$WORK/r.out" 2>"$WORK/r.err"; then
		grep -q "minhop passed over.*credit loop" "$WORK/r.err" ||
			{ fail "ring: minhop not passed over for its credit loop:"; cat "$WORK/r.err"; }
		grep -q "routing: updn" "$WORK/r.out" "$WORK/r.err" ||
			{ fail "ring: updn did not route:"; cat "$WORK/r.out" "$WORK/r.err"; }
		trace_all ring
	else
		fail "ring: smd --once -R minhop,updn failed:"; cat "$WORK/r.err"
	fi
	ibsim_stop
else
	fail "ring: ibsim did not start"
fi

# 2. the ecmp plugin on a fat tree
printf 'plugin_dir: %s/plugins\n' "$top_builddir" >"$WORK/smd.yaml"
if "$SMCTL" topo gen fat-tree --hosts 16 --radix 8 --format ibsim -o "$WORK/ft16.net" 2>"$WORK/gen.err"; then
	SIM_HOST=$(sed -n 's/^Ca[[:space:]]*[0-9]*[[:space:]]*"\([^"]*\)".*/\1/p' "$WORK/ft16.net" | head -1)
	export SIM_HOST
	if ibsim_start "$WORK/ft16.net"; then
		if ibsim_run "$SMD" --once -c "$WORK/smd.yaml" -R ecmp --state-dir "$WORK/st2" \
			>"$WORK/e.out" 2>"$WORK/e.err"; then
			grep -q "routing: ecmp" "$WORK/e.out" "$WORK/e.err" ||
				{ fail "fat tree: ecmp did not route:"; cat "$WORK/e.out" "$WORK/e.err"; }
			trace_all ft16-ecmp
		else
			fail "fat tree: smd --once -R ecmp failed:"; cat "$WORK/e.err"
		fi
		# 3. an unknown engine: refused, nothing programmed
		if ibsim_run "$SMD" --once -c "$WORK/smd.yaml" -R nosuch --state-dir "$WORK/st3" \
			>"$WORK/u.out" 2>"$WORK/u.err"; then
			fail "unknown engine accepted"
		else
			grep -q "unknown engine 'nosuch'" "$WORK/u.err" || { fail "unknown engine: unclear message:"; cat "$WORK/u.err"; }
		fi
		ibsim_stop
	else
		fail "fat tree: ibsim did not start"
	fi
	unset SIM_HOST
else
	fail "smctl topo gen failed: $(cat "$WORK/gen.err")"
fi

[ $failed = 0 ] && echo "PASS: engine chain and plugin under ibsim"
exit $failed
