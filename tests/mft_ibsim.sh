#!/bin/sh
# SPDX-License-Identifier: MIT
# Multicast forwarding tables under a real peer (ibsim), read back with tools
# we did not write (dump_mfts, ibnetdiscover under umad2sim):
#   1. a radix-8 2-level fat tree (32 hosts): tests/mft_probe sweeps, makes 16
#      groups of what it found (group 0: every CA; the others about one host in
#      eight, their first member send-only) and programs them with the MFT-only
#      pass; a bring-up with the state then writes and reads no MFT block, one
#      with a fresh state reads them back and writes none;
#   2. dump_mfts + ibnetdiscover: flooding every member of every group through
#      the MFTs read back reaches every receiver, nothing else, with no loop.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
. "$top_srcdir/tests/lib-ibsim.sh"
need_tools "ibsim-utils, infiniband-diags" ibsim ibnetdiscover dump_mfts
scratch mft
umad2sim_supp
probe="$top_builddir/tests/mft_probe"

"$smctl" topo gen fat-tree --hosts 32 --radix 8 --format ibsim -o "$work/ft32.net" >/dev/null 2>"$work/gen.err" ||
	{ bad "smctl topo gen failed: $(cat "$work/gen.err")"; exit 1; }
if scratch_ibsim "$work/ft32.net"; then
	if ibsim_run "$probe" program ibsim 16 "$work/groups.txt" >"$work/p.out" 2>"$work/p.err"; then
		cat "$work/p.out"
		# "STEP groups G written W read R" (groups with fewer than two members get no tree)
		awk '$1 == "pass" && $3 > 8 && $5 > 0 { ok = 1 } END { exit !ok }' "$work/p.out" ||
			bad "the MFT-only pass programmed nothing: $(cat "$work/p.out")"
		awk '$1 == "again" && $5 == 0 && $7 == 0 { ok = 1 } END { exit !ok }' "$work/p.out" ||
			bad "a second bring-up wrote or read MFT blocks: $(grep again "$work/p.out")"
		awk '$1 == "fresh" && $5 == 0 && $7 > 0 { ok = 1 } END { exit !ok }' "$work/p.out" ||
			bad "a bring-up without state did not read back, or wrote: $(grep fresh "$work/p.out")"
		ibsim_run ibnetdiscover >"$work/topo.ibnd" 2>"$work/ibnd.err" || bad "ibnetdiscover failed"
		ibsim_run dump_mfts >"$work/mfts.txt" 2>"$work/dump.err" || bad "dump_mfts failed: $(cat "$work/dump.err")"
		n=$(grep -c '^0xc' "$work/mfts.txt")
		echo "dump_mfts: $n MLID rows"
		[ "$n" -gt 0 ] || bad "dump_mfts shows no multicast entry"
		"$probe" check "$work/topo.ibnd" "$work/mfts.txt" "$work/groups.txt" >"$work/c.out" 2>&1 ||
			bad "the MFTs read back do not carry every group: $(cat "$work/c.out")"
		cat "$work/c.out"
	else
		bad "mft_probe program failed: $(cat "$work/p.err")"
	fi
	ibsim_stop
fi

[ $fail = 0 ] && echo "PASS: MFTs under ibsim"
exit $fail
