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
. "$top_srcdir/tests/lib-daemon.sh"
. "$top_srcdir/tests/lib-ibsim.sh"
need_tools "ibsim-utils, infiniband-diags" ibsim ibnetdiscover ibtracert
scratch route
umad2sim_supp

# trace_all NAME: ibtracert between every pair of CA port LIDs of the running fabric
trace_all() {
	ibsim_run ibnetdiscover >"$work/$1.topo" 2>/dev/null || { bad "$1: ibnetdiscover failed"; return; }
	lids=$(awk '/^\[[0-9]+\]\(/ { l = $0; if (sub(/.*# lid /, "", l)) { sub(/ .*/, "", l); print l } }' \
		"$work/$1.topo" | sort -n)
	ok=0
	for s in $lids; do
		for d in $lids; do
			[ "$s" = "$d" ] && continue
			if ibsim_diag ibtracert "$s" "$d" >"$work/tr.txt" 2>&1 && grep -q "^To ca .* lid $d-" "$work/tr.txt"; then
				ok=$((ok + 1))
			else
				bad "$1: ibtracert $s $d:"; cat "$work/tr.txt"
			fi
		done
	done
	[ "$ok" -gt 0 ] || bad "$1: no CA pair traced"
	echo "$1: $ok CA pairs traced"
}

# 1. ring of 5 switches, one CA each (CAs first: ibsim attaches clients at the first node)
i=0
while [ $i -lt 5 ]; do printf 'Hca\t1 "H%d"\n[1]\t"S%d"[1]\n\n' $i $i; i=$((i + 1)); done >"$work/ring5.net"
i=0
while [ $i -lt 5 ]; do
	printf 'Switch\t8 "S%d"\n[1]\t"H%d"[1]\n[2]\t"S%d"[3]\n[3]\t"S%d"[2]\n\n' \
		$i $i $(((i + 1) % 5)) $(((i + 4) % 5))
	i=$((i + 1))
done >>"$work/ring5.net"

if scratch_ibsim "$work/ring5.net"; then
	if ibsim_run "$smd" --once -R minhop --state-dir "$work/st0" >"$work/m.out" 2>"$work/m.err"; then
		bad "ring: -R minhop was accepted despite its credit loop"
	else
		grep -q "minhop passed over.*credit loop" "$work/m.err" ||
			{ bad "ring: no credit-loop reason for refusing minhop:"; cat "$work/m.err"; }
	fi
	if ibsim_run "$smd" --once -R minhop,updn --state-dir "$work/st1" >"$work/r.out" 2>"$work/r.err"; then
		grep -q "minhop passed over.*credit loop" "$work/r.err" ||
			{ bad "ring: minhop not passed over for its credit loop:"; cat "$work/r.err"; }
		grep -q "routing: updn" "$work/r.out" "$work/r.err" ||
			{ bad "ring: updn did not route:"; cat "$work/r.out" "$work/r.err"; }
		trace_all ring
	else
		bad "ring: smd --once -R minhop,updn failed:"; cat "$work/r.err"
	fi
	ibsim_stop
else
	bad "ring: ibsim did not start"
fi

# 2. the ecmp plugin on a fat tree
printf 'plugin_dir: %s/plugins\n' "$top_builddir" >"$work/smd.yaml"
if "$smctl" topo gen fat-tree --hosts 16 --radix 8 --format ibsim -o "$work/ft16.net" 2>"$work/gen.err"; then
	SIM_HOST=$(sed -n 's/^Ca[[:space:]]*[0-9]*[[:space:]]*"\([^"]*\)".*/\1/p' "$work/ft16.net" | head -1)
	export SIM_HOST
	if scratch_ibsim "$work/ft16.net"; then
		if ibsim_run "$smd" --once -c "$work/smd.yaml" -R ecmp --state-dir "$work/st2" \
			>"$work/e.out" 2>"$work/e.err"; then
			grep -q "routing: ecmp" "$work/e.out" "$work/e.err" ||
				{ bad "fat tree: ecmp did not route:"; cat "$work/e.out" "$work/e.err"; }
			trace_all ft16-ecmp
		else
			bad "fat tree: smd --once -R ecmp failed:"; cat "$work/e.err"
		fi
		# 3. an unknown engine: refused, nothing programmed
		if ibsim_run "$smd" --once -c "$work/smd.yaml" -R nosuch --state-dir "$work/st3" \
			>"$work/u.out" 2>"$work/u.err"; then
			bad "unknown engine accepted"
		else
			grep -q "unknown engine 'nosuch'" "$work/u.err" || { bad "unknown engine: unclear message:"; cat "$work/u.err"; }
		fi
		ibsim_stop
	else
		bad "fat tree: ibsim did not start"
	fi
	unset SIM_HOST
else
	bad "smctl topo gen failed: $(cat "$work/gen.err")"
fi

[ $fail = 0 ] && echo "PASS: engine chain and plugin under ibsim"
exit $fail
