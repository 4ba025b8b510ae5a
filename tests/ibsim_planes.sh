#!/bin/sh
# Multi-plane against ibsim: one smd process attaches at one NIC per plane of a
# single ibsim instance (ibsim's own client protocol), brings 2 and then 4
# planes up, and every plane is read back with infiniband-diags under umad2sim
# (SIM_HOST per plane): every link Active, switch/CA counts, the NIC of each
# host holding the same LID in every plane, CA-to-CA routes traced hop by hop,
# and a second run that keeps every LID and writes no LFT block.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-ibsim.sh"
smd="$top_builddir/smd/smd"
smctl="$top_builddir/smd/smctl"
fail=0
bad() { echo "FAIL: $*"; fail=1; }

run_planes() {
	P=$1
	work=$(mktemp -d "${TMPDIR:-/tmp}/smd-planes.XXXXXX")
	net="$work/net"
	"$smctl" topo gen fat-tree --hosts 16 --radix 8 --planes "$P" --format ibsim -o "$net" >/dev/null ||
		{ bad "generator"; return; }
	ibsim_start "$net" || { bad "ibsim did not start"; rm -rf "$work"; return; }
	args=""
	p=0
	while [ $p -lt "$P" ]; do
		node=$(grep "mlx5_$p\"" "$net" | head -1 | sed 's/.*"\(H-[0-9a-f]*\)".*/\1/')
		eval "node_$p=$node"
		args="$args --plane ibsim:$node"
		p=$((p + 1))
	done
	# shellcheck disable=SC2086
	"$smd" --once $args --state-dir "$work/state" -R planes,minhop --json >"$work/run1.json" 2>"$work/run1.err"
	rc=$?
	[ $rc = 0 ] || { bad "$P planes: smd --once exited $rc"; cat "$work/run1.err"; }
	up=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["up"])' "$work/run1.json" 2>/dev/null)
	[ "$up" = "$P" ] || bad "$P planes: $up planes up"
	p=0
	while [ $p -lt "$P" ]; do
		eval "node=\$node_$p"
		SIM_HOST=$node ibsim_run ibnetdiscover >"$work/disc.$p" 2>/dev/null || bad "plane $p: ibnetdiscover failed"
		sw=$(grep -c '^Switch' "$work/disc.$p")
		ca=$(grep -c '^Ca' "$work/disc.$p")
		[ "$sw" = 8 ] && [ "$ca" = 16 ] || bad "plane $p: discovered $sw switches and $ca CAs (want 8 and 16)"
		# a plane's dump must not see any other plane's nodes
		grep -q "mlx5_[^$p]\"" "$work/disc.$p" && bad "plane $p: sees NICs of another plane"
		SIM_HOST=$node ibsim_run iblinkinfo >"$work/links.$p" 2>/dev/null || bad "plane $p: iblinkinfo failed"
		# connected ports only (an unused spine port is Down/Polling with no peer: '"" ( )')
		links=$(grep '==(' "$work/links.$p" | grep -vc '"" ( )')
		active=$(grep '==(' "$work/links.$p" | grep -v '"" ( )' | grep -c 'Active/')
		[ "$links" -gt 0 ] && [ "$links" = "$active" ] || bad "plane $p: $active of $links links Active"
		# host -> LID of this plane (the port line after each Ca block header)
		awk '/^Ca/ { match($0, /# "[^ ]+/); h = substr($0, RSTART + 3, RLENGTH - 3); next }
		     h != "" && /^\[1\]/ { match($0, /# lid [0-9]+/); print h, substr($0, RSTART + 6, RLENGTH - 6); h = "" }' \
			"$work/disc.$p" | sort >"$work/lids.$p"
		[ "$(wc -l <"$work/lids.$p")" = 16 ] || bad "plane $p: $(wc -l <"$work/lids.$p") host LIDs read back"
		[ $p = 0 ] || cmp -s "$work/lids.0" "$work/lids.$p" || { bad "plane $p: host LIDs differ from plane 0"; diff "$work/lids.0" "$work/lids.$p" | head -5; }
		# trace a few CA pairs hop by hop
		for pair in "1 16" "16 1" "3 12" "9 5"; do
			set -- $pair
			s=$(sed -n "${1}p" "$work/lids.$p" | awk '{print $2}')
			d=$(sed -n "${2}p" "$work/lids.$p" | awk '{print $2}')
			SIM_HOST=$node ibsim_run ibtracert "$s" "$d" >"$work/trace" 2>&1 || { bad "plane $p: ibtracert $s $d failed"; cat "$work/trace"; }
			grep -q "^To ca" "$work/trace" || bad "plane $p: trace $s -> $d does not reach a CA"
		done
		p=$((p + 1))
	done
	# second run: same LIDs (from the plane-lids table), no LFT block rewritten
	# shellcheck disable=SC2086
	"$smd" --once $args --state-dir "$work/state" -R planes,minhop --json >"$work/run2.json" 2>"$work/run2.err" ||
		{ bad "$P planes: second smd --once failed"; cat "$work/run2.err"; }
	blocks=$(python3 -c 'import json,sys; print(sum(p["lft_blocks_written"] for p in json.load(open(sys.argv[1]))["planes"]))' "$work/run2.json" 2>/dev/null)
	[ "$blocks" = 0 ] || bad "$P planes: second run wrote $blocks LFT blocks"
	fresh=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["plane_lids"]["fresh"])' "$work/run2.json" 2>/dev/null)
	[ "$fresh" = 0 ] || bad "$P planes: second run gave $fresh fresh LIDs"
	eval "node=\$node_0"
	SIM_HOST=$node ibsim_run ibnetdiscover 2>/dev/null | awk '/^Ca/ { match($0, /# "[^ ]+/); h = substr($0, RSTART + 3, RLENGTH - 3); next }
	     h != "" && /^\[1\]/ { match($0, /# lid [0-9]+/); print h, substr($0, RSTART + 6, RLENGTH - 6); h = "" }' | sort >"$work/lids.again"
	cmp -s "$work/lids.0" "$work/lids.again" || bad "$P planes: LIDs changed on the second run"
	[ $fail = 0 ] && echo "ok: $P planes from one smd process"
	ibsim_stop
	rm -rf "$work"
}

run_planes 2
run_planes 4
[ $fail = 0 ] && echo "PASS: multi-plane ibsim"
exit $fail
