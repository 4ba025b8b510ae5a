#!/bin/sh
# SPDX-License-Identifier: MIT
# smd --once against ibsim, read back with tools we did not write
# (infiniband-diags under umad2sim):
#   - iblinkinfo: every linked port ACTIVE;
#   - ibnetdiscover: every switch/CA port LID equals smd's guid2lid file;
#   - dump_lfts: every switch has an entry for every LID;
#   - ibtracert SLID DLID for every pair of CA port LIDs: routed, no loop;
#   - a second smd --once keeps every LID and writes no LFT block and no PortInfo;
#   - LMC 2; after OpenSM, smd keeps OpenSM's LIDs (from the fabric, or from
#     OpenSM's own guid2lid file with --guid2lid);
#   - a bad --guid2lid file is refused with FILE:LINE and exit 1.
# Fabrics: a generated radix-8 2-level fat tree (SM on its first CA), and
# ibsim's net.2sw2path4hca2port example (parallel switch links, 2-port CAs)
# with the SM on each of its 2-port CAs.
# (Not covered: the SM on a switch's port 0. umad2sim shows a switch as a CA
# with 0 ports and only port 0, which the umad transport does not pick.)
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
. "$top_srcdir/tests/lib-ibsim.sh"
need_tools "ibsim-utils, infiniband-diags" ibsim ibnetdiscover iblinkinfo ibtracert dump_lfts
scratch once
umad2sim_supp

# normalise a GUID: lower-case hex without 0x and leading zeros
norm_guid() { echo "$1" | tr 'A-F' 'a-f' | sed 's/^0x//; s/^0*//'; }

# "guid lid" lines from ibnetdiscover: switch port-0 LIDs and CA port LIDs
ibnd_lids() {
	awk '
	/^switchguid=/ { g = $0; sub(/.*\(/, "", g); sub(/\).*/, "", g); sw = g; next }
	/^Switch/ && / port 0 lid / { l = $0; sub(/.* port 0 lid /, "", l); sub(/ .*/, "", l); print sw, l; next }
	/^\[[0-9]+\]\(/ { g = $0; sub(/^\[[0-9]+\]\(/, "", g); sub(/\).*/, "", g);
		l = $0; if (sub(/.*# lid /, "", l)) { sub(/ .*/, "", l); print g, l } }
	' "$1" | while read -r g l; do echo "$(norm_guid "$g") $l"; done | sort -u
}

# "guid lid" lines from a guid2lid file
g2l_lids() {
	while read -r g a b; do
		case $g in ''|\#*) continue ;; esac
		echo "$(norm_guid "$g") $(printf '%d' "$a")"
	done <"$1" | sort -u
}

run_case() {
	name=$1 net=$2
	dir=$work/$name
	mkdir -p "$dir"
	echo "== $name: $(basename "$net") ${SIM_HOST:+(SM at $SIM_HOST)}"
	scratch_ibsim "$net" || { bad "$name: ibsim did not start"; return; }
	lmc=${LMC:-0}
	args="--lmc $lmc"

	# migration: OpenSM brought the fabric up before; smd must keep its LIDs,
	# taken from the fabric (OPENSM_FIRST=fabric) or from OpenSM's guid2lid (=file)
	if [ -n "${OPENSM_FIRST:-}" ]; then
		ibsim_opensm_once -R minhop --lmc "$lmc" || { bad "$name: opensm --once failed"; ibsim_stop; return; }
		ibsim_run ibnetdiscover >"$dir/topo.osm" 2>/dev/null || bad "$name: ibnetdiscover after OpenSM failed"
		ibnd_lids "$dir/topo.osm" >"$dir/lids.osm"
		if [ "$OPENSM_FIRST" = file ]; then
			cp "$IBSIM_DIR/guid2lid" "$dir/opensm.guid2lid"
			echo "$name: OpenSM's guid2lid has $(grep -c '^0x' "$dir/opensm.guid2lid") entries"
			args="$args --guid2lid $dir/opensm.guid2lid"
		fi
	fi

	if ! ibsim_run "$smd" --once --state-dir "$dir/state" $args --json >"$dir/run1.json" 2>"$dir/run1.err"; then
		bad "$name: smd --once failed"; cat "$dir/run1.err"; ibsim_stop; return
	fi
	cat "$dir/run1.json"
	links=$(json_num "$dir/run1.json" link_ports)
	active=$(json_num "$dir/run1.json" active_ports)
	[ -n "$links" ] && [ "$links" -gt 0 ] && [ "$links" = "$active" ] ||
		bad "$name: smd reports $active of $links link ports ACTIVE"

	# every linked port ACTIVE, as iblinkinfo reads it
	ibsim_run iblinkinfo >"$dir/links.txt" 2>/dev/null || bad "$name: iblinkinfo failed"
	nlinked=$(grep -c 'LinkUp)==>' "$dir/links.txt")
	nbad=$(grep 'LinkUp)==>' "$dir/links.txt" | grep -vc 'Active/')
	[ "$nlinked" -gt 0 ] || bad "$name: iblinkinfo shows no link"
	[ "$nbad" = 0 ] || { bad "$name: $nbad linked ports not Active"; grep 'LinkUp)==>' "$dir/links.txt" | grep -v 'Active/' | head; }

	# LIDs seen by ibnetdiscover == smd's guid2lid file
	ibsim_run ibnetdiscover >"$dir/topo.txt" 2>/dev/null || bad "$name: ibnetdiscover failed"
	ibnd_lids "$dir/topo.txt" >"$dir/lids.ibnd"
	g2l_lids "$dir/state/guid2lid" >"$dir/lids.smd"
	nl=$(wc -l <"$dir/lids.ibnd")
	[ "$nl" -gt 0 ] || bad "$name: no LIDs parsed from ibnetdiscover"
	nports=$(( $(json_num "$dir/run1.json" new) + $(json_num "$dir/run1.json" from_file) + $(json_num "$dir/run1.json" from_fabric) ))
	[ "$nl" = "$nports" ] || bad "$name: ibnetdiscover shows $nl LID-bearing ports, smd assigned $nports"
	diff "$dir/lids.smd" "$dir/lids.ibnd" >"$dir/lids.diff" || { bad "$name: LIDs differ (guid2lid vs ibnetdiscover)"; cat "$dir/lids.diff"; }
	nbadlmc=$(grep '^\[[0-9]*\](' "$dir/topo.txt" | grep -vc "# lid [0-9]* lmc $lmc ")
	[ "$nbadlmc" = 0 ] || bad "$name: $nbadlmc CA ports without LMC $lmc"
	if [ -n "${OPENSM_FIRST:-}" ]; then
		diff "$dir/lids.osm" "$dir/lids.ibnd" >/dev/null || bad "$name: smd moved LIDs OpenSM had assigned"
		for k in new moved; do
			[ "$(json_num "$dir/run1.json" $k)" = 0 ] || bad "$name: after OpenSM: $k = $(json_num "$dir/run1.json" $k)"
		done
		src=from_fabric
		[ "$OPENSM_FIRST" = file ] && src=from_file
		[ "$(json_num "$dir/run1.json" $src)" = "$nl" ] || bad "$name: only $(json_num "$dir/run1.json" $src) of $nl LIDs kept $src"
		echo "$name: after OpenSM: $(json_num "$dir/run1.json" lft_blocks_written) LFT blocks rewritten, $(json_num "$dir/run1.json" lft_blocks_read) read"
	fi

	# every switch forwards every CA port LID (switch-to-switch LIDs are the
	# engine's business: ftree leaves spine-to-spine LIDs out; counted only)
	ibsim_run dump_lfts >"$dir/lfts.txt" 2>"$dir/lfts.err" || bad "$name: dump_lfts failed"
	nsw=$(grep -c '^Unicast lids' "$dir/lfts.txt")
	[ "$nsw" = "$(json_num "$dir/run1.json" switches)" ] || bad "$name: dump_lfts shows $nsw switches"
	# every LID of every CA port's LMC range
	awk -v span=$((1 << lmc)) '/^\[[0-9]+\]\(/ { l = $0; if (sub(/.*# lid /, "", l)) { sub(/ .*/, "", l);
		for (i = 0; i < span; i++) print l + i } }' "$dir/topo.txt" >"$dir/ca.lids"
	nca=$(wc -l <"$dir/ca.lids")
	awk 'function hex(h,  i, v, c) { v = 0; h = tolower(substr(h, 3));
			for (i = 1; i <= length(h); i++) { c = index("0123456789abcdef", substr(h, i, 1)) - 1; v = v * 16 + c } return v }
		NR == FNR { ca[$1] = 1; next }
		/^Unicast lids/ { if (n++) print cnt; cnt = 0; next }
		/^0x[0-9a-fA-F]+ [0-9]+ / { if (hex($1) in ca) cnt++ }
		END { if (n) print cnt }' "$dir/ca.lids" "$dir/lfts.txt" | sort | uniq -c >"$dir/lfts.ca"
	[ "$(awk '{ print $2 }' "$dir/lfts.ca")" = "$nca" ] ||
		{ bad "$name: not every switch has an entry for all $nca CA LIDs:"; cat "$dir/lfts.ca"; }
	echo "$name: LFT entries per switch: $(grep 'valid lids dumped' "$dir/lfts.txt" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"

	# every pair of CA port LIDs is routed hop by hop
	ca_lids=$(awk '/^\[[0-9]+\]\(/ { l = $0; if (sub(/.*# lid /, "", l)) { sub(/ .*/, "", l); print l } }' "$dir/topo.txt" | sort -n)
	pairs=0
	for s in $ca_lids; do
		for d in $ca_lids; do
			[ "$s" = "$d" ] && continue
			pairs=$((pairs + 1))
			if ! ibsim_run ibtracert "$s" "$d" >"$dir/tr.txt" 2>&1; then
				bad "$name: ibtracert $s $d failed"; cat "$dir/tr.txt"; continue
			fi
			grep -q "^To ca .* lid $d-" "$dir/tr.txt" || { bad "$name: ibtracert $s $d does not reach $d"; cat "$dir/tr.txt"; }
		done
	done
	echo "$name: $pairs CA pairs traced"
	[ "$pairs" -gt 0 ] || bad "$name: no CA pair to trace"

	# a second run keeps everything and writes nothing
	cp "$dir/state/guid2lid" "$dir/guid2lid.1"
	if ! ibsim_run "$smd" --once --state-dir "$dir/state" --lmc "$lmc" --json >"$dir/run2.json" 2>"$dir/run2.err"; then
		bad "$name: second smd --once failed"; cat "$dir/run2.err"
	else
		cat "$dir/run2.json"
		for k in lft_blocks_written new moved portinfo_lid_sets portinfo_state_sets switchinfo_sets; do
			v=$(json_num "$dir/run2.json" $k)
			[ "$v" = 0 ] || bad "$name: second run: $k = $v (expected 0)"
		done
		[ "$(json_num "$dir/run2.json" from_file)" = "$nl" ] || bad "$name: second run kept $(json_num "$dir/run2.json" from_file) of $nl LIDs from the file"
		cmp -s "$dir/state/guid2lid" "$dir/guid2lid.1" || bad "$name: guid2lid changed on the second run"
		ibsim_run ibnetdiscover >"$dir/topo2.txt" 2>/dev/null
		ibnd_lids "$dir/topo2.txt" | diff "$dir/lids.ibnd" - >/dev/null || bad "$name: LIDs moved on the second run"
	fi
	ibsim_stop
}

# the node id of the first CA of a net file (ibsim attaches clients there with SIM_HOST)
first_ca() { sed -n 's/^Ca[[:space:]]*[0-9]*[[:space:]]*"\([^"]*\)".*/\1/p' "$1" | head -1; }

# 1. generated radix-8 2-level fat tree, 16 hosts (4 leaves, 4 spines)
if "$smctl" topo gen fat-tree --hosts 16 --radix 8 --format ibsim -o "$work/ft16.net" 2>"$work/gen.err"; then
	SIM_HOST=$(first_ca "$work/ft16.net")
	export SIM_HOST
	run_case ft16 "$work/ft16.net"
	unset SIM_HOST
else
	bad "smctl topo gen failed: $(cat "$work/gen.err")"
fi

# 2. ibsim's example with parallel links and 2-port CAs; the SM on each CA
ex=/usr/share/doc/ibsim-utils/net-examples/net.2sw2path4hca2port
[ -f "$top_srcdir/tests/data/net.2sw2path4hca2port" ] && ex=$top_srcdir/tests/data/net.2sw2path4hca2port
if [ -f "$ex" ]; then
	for SIM_HOST in Hca1 Hca2; do
		export SIM_HOST
		run_case "example-$SIM_HOST" "$ex"
	done
	# LMC 2: 4 LIDs per CA port, aligned
	SIM_HOST=Hca1 LMC=2
	export SIM_HOST LMC
	run_case example-lmc2 "$ex"
	unset LMC
	# migrating from OpenSM: LIDs kept from the fabric, then from OpenSM's guid2lid
	for OPENSM_FIRST in fabric file; do
		export OPENSM_FIRST
		run_case "after-opensm-$OPENSM_FIRST" "$ex"
	done
	unset SIM_HOST OPENSM_FIRST
else
	bad "$ex missing (ibsim-utils)"
fi

# 3. an untrusted guid2lid file is refused with FILE:LINE
printf '0x0000000000100001 0x0002 0x0002\nnot a line\n' >"$work/bad.g2l"
SIM_HOST=Hca1
export SIM_HOST
scratch_ibsim "$ex" || bad "ibsim did not start"
if ibsim_run "$smd" --once --state-dir "$work/bad-state" --guid2lid "$work/bad.g2l" >"$work/bad.out" 2>"$work/bad.err"; then
	bad "a bad guid2lid file was accepted"
else
	grep -q "bad.g2l:2:" "$work/bad.err" || { bad "no FILE:LINE in the error:"; cat "$work/bad.err"; }
fi
ibsim_stop

[ $fail = 0 ] && echo "PASS: smd --once under ibsim"
exit $fail
