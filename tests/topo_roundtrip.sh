#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/topo_roundtrip.sh: topology dumps against the real tools.
#
# For each net (ibsim's shipped examples and our small fat tree fixture):
#  1. start ibsim on it, run opensm --once (assigns LIDs), run ibnetdiscover;
#  2. our ibsim-format reader, given the net file itself, must build the
#     fabric ibsim built (every field but LIDs, which OpenSM assigned);
#  3. smctl topo convert the dump to ibnd format: reading that back must give
#     every model field of the dump (canonical dumps compared with cmp), and
#     converting again must reproduce the file byte for byte;
#  4. convert the dump to ibsim format, start a second ibsim on that, run
#     opensm and ibnetdiscover again: same topology, GUIDs, descriptions,
#     ids and link rates as the first dump (LIDs are OpenSM's business);
#  5. ibsim also reads our ibnd output directly (it reads ibnetdiscover text),
#     and so do ibhosts/ibswitches/ibrouters (infiniband-diags) in step 3.
# Plus smctl topo info/convert exit codes and messages on bad input.
set -u

: "${top_srcdir:=..}" "${top_builddir:=..}"
. "$top_srcdir/tests/lib-daemon.sh"
. "$top_srcdir/tests/lib-ibsim.sh"

TT="$top_builddir/tests/test_topo"
DOC=/usr/share/doc/ibsim-utils/net-examples
scratch topo-rt

canon()
{
	_f=$1
	_o=$2
	shift 2
	"$TT" --canon "$@" "$_f" >"$_o" || bad "cannot load $_f"
}

same()
{
	if ! cmp -s "$1" "$2"; then
		bad "$3"
		diff "$1" "$2" | head -20 >&2
	fi
}

# discover NETFILE OUT: ibsim + opensm --once + ibnetdiscover
discover()
{
	scratch_ibsim "$1" || { bad "ibsim refused $1"; return 1; }
	ibsim_opensm_once || bad "opensm --once on $1"
	ibsim_run ibnetdiscover >"$2" 2>"$work/ibnd.err" || { bad "ibnetdiscover on $1"; cat "$work/ibnd.err" >&2; }
	ibsim_stop
	[ -s "$2" ]
}

roundtrip()
{
	name=$1
	net=$2
	d=$work/$name
	mkdir -p "$d"
	echo "== $name ($net)"
	discover "$net" "$d/d0.ibnd" || return

	# 2: our ibsim reader vs what ibsim simulated
	canon "$d/d0.ibnd" "$d/c0.linked" --no-lids --linked
	canon "$net" "$d/cnet.linked" --no-lids --linked --from ibsim
	same "$d/cnet.linked" "$d/c0.linked" "$name: ibsim-format reader differs from ibsim's fabric"

	# 3: ibnd -> model -> ibnd, lossless
	"$smctl" topo convert "$d/d0.ibnd" -o "$d/d1.ibnd" --format ibnd || bad "$name: convert to ibnd"
	"$smctl" topo convert "$d/d1.ibnd" -o "$d/d2.ibnd" || bad "$name: convert again"
	canon "$d/d0.ibnd" "$d/c0.all"
	canon "$d/d1.ibnd" "$d/c1.all"
	same "$d/c0.all" "$d/c1.all" "$name: ibnd round trip lost something"
	same "$d/d1.ibnd" "$d/d2.ibnd" "$name: ibnd writer not stable"
	# infiniband-diags' own readers of ibnetdiscover text see the same fabric
	for tool in ibhosts ibswitches ibrouters; do
		"$tool" "$d/d0.ibnd" >"$d/$tool.0" 2>&1
		"$tool" "$d/d1.ibnd" >"$d/$tool.1" 2>&1
		same "$d/$tool.0" "$d/$tool.1" "$name: $tool reads our dump differently"
	done
	[ -s "$d/ibswitches.1" ] || bad "$name: ibswitches found no switch in our dump"
	n0=$(grep -c '^\(Switch\|Ca\|Rt\)	' "$d/d0.ibnd")
	"$smctl" --json topo info "$d/d1.ibnd" >"$d/info.json" || bad "$name: topo info"
	grep -q "\"planes\":\[{\"plane\":0,\"name\":\"plane0\",\"file\":\"[^\"]*\",\"nodes\":$n0," "$d/info.json" ||
		bad "$name: topo info --json does not report $n0 nodes: $(cat "$d/info.json")"

	# 4: ibnd -> ibsim net -> second ibsim -> ibnetdiscover: same fabric
	"$smctl" topo convert "$d/d0.ibnd" -o "$d/s.net" --format ibsim || bad "$name: convert to ibsim"
	discover "$d/s.net" "$d/d3.ibnd" || return
	canon "$d/d0.ibnd" "$d/c0.nolids" --no-lids
	canon "$d/d3.ibnd" "$d/c3.nolids" --no-lids
	same "$d/c0.nolids" "$d/c3.nolids" "$name: ibsim round trip changed the fabric"
	canon "$d/s.net" "$d/cs.linked" --no-lids --linked
	same "$d/c0.linked" "$d/cs.linked" "$name: our ibsim file does not read back as the dump"

	# 5: ibsim reads our ibnd writer's output as a net file
	discover "$d/d1.ibnd" "$d/d4.ibnd" || return
	canon "$d/d4.ibnd" "$d/c4.nolids" --no-lids
	same "$d/c0.nolids" "$d/c4.nolids" "$name: ibsim read our ibnd output differently"
}

# ---- smctl exit codes and messages ----
"$smctl" topo info >/dev/null 2>&1
[ $? -eq 2 ] || bad "topo info without DUMP should exit 2"
"$smctl" topo convert "$top_srcdir/tests/data/net4.ibnd" --format xml -o "$work/x" >/dev/null 2>&1
[ $? -eq 2 ] || bad "convert --format xml should exit 2"
"$smctl" topo frob >/dev/null 2>&1
[ $? -eq 2 ] || bad "unknown topo subcommand should exit 2"
printf 'vendid=0x0\ndevid=0x0\ncaguid=0x10\nCa\t1 "H-0000000000000010"\t\t# "x"\n[2](11) \t"S-1"[1]\t\t# lid 1 lmc 0 "s" lid 2 4xSDR\n' >"$work/bad.ibnd"
"$smctl" topo info "$work/bad.ibnd" >/dev/null 2>"$work/err"
[ $? -eq 1 ] || bad "bad dump should exit 1"
grep -q "bad.ibnd:5: port 2 out of range 1..1" "$work/err" || bad "message lacks FILE:LINE: $(cat "$work/err")"
"$smctl" topo convert "$work/bad.ibnd" -o "$work/out.ibnd" >/dev/null 2>&1
[ $? -eq 1 ] || bad "convert of a bad dump should exit 1"
[ ! -e "$work/out.ibnd" ] || bad "failed convert left an output file"
"$smctl" topo info "$work/nonexistent" >/dev/null 2>"$work/err"
[ $? -eq 1 ] || bad "missing dump should exit 1"
grep -q "nonexistent:0: cannot open" "$work/err" || bad "missing-file message: $(cat "$work/err")"
"$smctl" topo info - <"$top_srcdir/tests/data/net4.ibnd" >"$work/info" || bad "topo info - (stdin)"
grep -q "nodes 6 (switches 2, CAs 4, routers 0)" "$work/info" || bad "stdin info: $(cat "$work/info")"
# several dumps, one plane each
"$smctl" topo info --plane 2 "$top_srcdir/tests/data/net4.ibnd" "$top_srcdir/tests/data/ft-small.ibnd" >"$work/info" ||
	bad "topo info with two planes"
grep -q '^plane 3 "plane3": .*ft-small.ibnd' "$work/info" || bad "second dump not in plane 3: $(cat "$work/info")"
grep -q '^total: nodes 30 ' "$work/info" || bad "two-plane total: $(cat "$work/info")"

# a hand-written dump imitating real hardware (rates, LMC, a router, quotes)
"$smctl" topo convert "$top_srcdir/tests/data/handmade.ibnd" -o "$work/hm.ibnd" || bad "convert handmade"
for tool in ibhosts ibswitches ibrouters; do
	"$tool" "$top_srcdir/tests/data/handmade.ibnd" >"$work/$tool.0" 2>&1
	"$tool" "$work/hm.ibnd" >"$work/$tool.1" 2>&1
	same "$work/$tool.0" "$work/$tool.1" "handmade: $tool reads our dump differently"
done
grep -q "^Rt" "$work/ibrouters.1" || bad "ibrouters found no router in our dump"

# ---- round trips through the real tools ----
roundtrip net "$DOC/net"
roundtrip net.2sw2path4hca2port "$DOC/net.2sw2path4hca2port"
roundtrip ft-small "$top_srcdir/tests/data/ft-small.net"

if [ "$failures" -ne 0 ]; then
	echo "$failures check(s) failed" >&2
	exit 1
fi
echo "all topology round trips passed"
exit 0
