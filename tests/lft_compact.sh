#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/lft_compact.sh: the dry-run's compact LFT file (--lfts-format compact)
# and smctl's offline LFT commands (issue 17):
#  - the compact file and the dump_lfts file of one dry-run hold the same
#    tables (smctl lft --diff: exit 0), and each converts into the other
#    through `smctl lft --file F --format ...` with nothing lost;
#  - one changed entry is found and named (exit 1); a switch only in one file too;
#  - a damaged compact file is refused with FILE:LINE; bad usage is exit 2.
set -u

: "${top_srcdir:?run from make check}"
: "${top_builddir:?run from make check}"
. "$top_srcdir/tests/lib-daemon.sh"
scratch lftc
smd="$top_builddir/smd/smd"
smctl="$top_builddir/smd/smctl"

"$smctl" topo gen fat-tree --hosts 128 --radix 16 --planes 2 --split --format ibnd -o "$work/p" >/dev/null ||
	{ bad "topo gen"; exit 1; }
"$smd" --dry-run -t "$work/p.0" -t "$work/p.1" -R ftree -q --lfts-out "$work/all.txt" || bad "dry-run (dump)"
"$smd" --dry-run -t "$work/p.0" -t "$work/p.1" -R ftree -q --lfts-out "$work/all.lftc" --lfts-format compact ||
	bad "dry-run (compact)"
head -1 "$work/all.lftc" | grep -qx "# smd-lfts 2" || bad "compact file without its format line"
[ "$(wc -c <"$work/all.lftc")" -lt "$(($(wc -c <"$work/all.txt") / 10))" ] || bad "compact file not compact"

"$smctl" lft --diff "$work/all.txt" "$work/all.lftc" >"$work/d1" || bad "dump and compact differ: $(tail -3 "$work/d1")"
grep -q "^[1-9][0-9]* switches compared, 0 differ in 0 entries; 0 only in" "$work/d1" || bad "diff summary: $(cat "$work/d1")"
# round trips
"$smctl" lft --file "$work/all.lftc" --format dump >"$work/rt.txt" || bad "compact -> dump"
"$smctl" lft --diff "$work/rt.txt" "$work/all.txt" >/dev/null || bad "compact -> dump lost entries"
"$smctl" lft --file "$work/all.txt" --format compact >"$work/rt.lftc" || bad "dump -> compact"
grep -v '^#' "$work/rt.lftc" >"$work/a"
grep -v '^#' "$work/all.lftc" >"$work/b"
cmp -s "$work/a" "$work/b" || bad "dump -> compact is not the dry-run's compact file"
# one switch by GUID
g=$(sed -n 's/^switch \(0x[0-9a-f]*\) .*/\1/p' "$work/all.lftc" | sed -n 3p)
"$smctl" lft --file "$work/all.lftc" "$g" >"$work/one" || bad "lft --file GUID"
[ "$(grep -c '^Unicast lids' "$work/one")" = 1 ] && grep -q "guid $g" "$work/one" || bad "lft --file GUID: $(head -2 "$work/one")"
"$smctl" --json lft --file "$work/all.lftc" "$g" | python3 -c 'import json,sys; r=json.load(sys.stdin); assert len(r["switches"]) == 1 and r["switches"][0]["entries"] > 0' ||
	bad "lft --file --json"

# version 1 (every block that routes, each table on its own) still reads: the file expanded
awk 'function flush(  b) { if (have) for (b = 0; b < nb; b++) if ((b in t) && t[b] !~ /^(ff)+$/) print b " " t[b]; have = 0 }
	NR == 1 { print "# smd-lfts 1"; next }
	/^#/ { flush(); print; next }
	$1 == "switch" { flush(); print; have = 1; next }
	{ t[$1] = $2; if ($1 + 1 > nb) nb = $1 + 1 }
	END { flush() }' "$work/all.lftc" >"$work/v1.lftc"
"$smctl" lft --diff "$work/v1.lftc" "$work/all.lftc" >"$work/d2" || bad "version 1 differs: $(tail -3 "$work/d2")"
# version 2 leaves out the blocks equal to the switch before's
[ "$(wc -c <"$work/all.lftc")" -lt "$(($(wc -c <"$work/v1.lftc") * 3 / 4))" ] || bad "version 2 not smaller than version 1"
# a block listed twice, and version 2's explicit block of ff's where the switch before routed
sed -n '1,/^switch/p' "$work/all.lftc" >"$work/dup.lftc"
sed -n '/^switch/,$p' "$work/all.lftc" | sed -n '2p;2p' >>"$work/dup.lftc"
# one entry changed in the dump form: the third switch's LID 1
awk -v g="$g" '/^Unicast lids/ { s = index($0, "guid " g " ") > 0 } s && $1 == "0x0001" { $2 = "063" } { print }' \
	"$work/all.txt" >"$work/changed.lftc"
run_rc() { "$@" >"$work/out" 2>"$work/err"; echo $?; }
[ "$(run_rc "$smctl" lft --diff "$work/all.lftc" "$work/changed.lftc")" = 1 ] || bad "a changed entry: not exit 1"
grep -q "^switch $g" "$work/out" && grep -q "^  0x0001 [0-9]* -> 063$" "$work/out" &&
	grep -q "1 differ in 1 entries" "$work/out" || bad "the changed entry is not named: $(cat "$work/out")"
"$smctl" --json lft --diff "$work/all.lftc" "$work/changed.lftc" |
	python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["entries_differ"] == 1 and not r["same"] and r["switches"][0]["entries"][0]["b"] == 63' ||
	bad "lft --diff --json"
# a switch only in one file (plane 1 left out)
"$smd" --dry-run -t "$work/p.0" -R ftree -q --lfts-out "$work/p0.lftc" --lfts-format compact || bad "dry-run plane 0"
[ "$(run_rc "$smctl" lft --diff "$work/p0.lftc" "$work/all.lftc")" = 1 ] || bad "missing switches: not exit 1"
grep -q "0 differ in 0 entries; 0 only in $work/p0.lftc, [1-9][0-9]* only in" "$work/out" || bad "only-in counts: $(cat "$work/out")"

# damaged files: FILE:LINE, exit 1; usage: exit 2
sed '4s/^0 ff/0 fz/' "$work/all.lftc" >"$work/bad1.lftc"
[ "$(run_rc "$smctl" lft --file "$work/bad1.lftc")" = 1 ] && grep -q "bad1.lftc:4: bad block" "$work/err" ||
	bad "damaged block: $(cat "$work/err")"
printf '# smd-lfts 3\n' >"$work/bad2.lftc"
[ "$(run_rc "$smctl" lft --file "$work/bad2.lftc")" = 1 ] && grep -q "bad2.lftc:1: compact LFT format version" "$work/err" ||
	bad "unknown version: $(cat "$work/err")"
[ "$(run_rc "$smctl" lft --file "$work/dup.lftc")" = 1 ] && grep -q "dup.lftc:[0-9]*: bad block: block listed twice" "$work/err" ||
	bad "block listed twice: $(cat "$work/err")"
printf '# smd-lfts 2\nswitch 0x1 lid 1 top 0x3f desc a\n0 01%0126d\nswitch 0x2 lid 2 top 0x3f desc b\n0 %0128d\n' 0 0 \
	>"$work/ff.lftc"
sed -i '5s/0/f/g; 5s/^f /0 /' "$work/ff.lftc"
"$smctl" --json lft --file "$work/ff.lftc" | python3 -c 'import json,sys; r=json.load(sys.stdin); assert [s["entries"] for s in r["switches"]] == [64, 0], r' ||
	bad "version 2: an all-ff block does not clear the switch before's"
printf '# smd-lfts 1\n0 01\n' >"$work/bad3.lftc"
[ "$(run_rc "$smctl" lft --file "$work/bad3.lftc")" = 1 ] && grep -q "bad3.lftc:2: LFT block before any 'switch' line" "$work/err" ||
	bad "block before switch: $(cat "$work/err")"
printf '# smd-lfts 1\nswitch 0x1 lid 1 top 0x3f desc x\n0 %0130d\n' 0 >"$work/bad4.lftc"
[ "$(run_rc "$smctl" lft --file "$work/bad4.lftc")" = 1 ] && grep -q "bad4.lftc:3: bad block: more than 64 entries" "$work/err" ||
	bad "oversized block: $(cat "$work/err")"
[ "$(run_rc "$smctl" lft --file "$work/all.lftc" --format xml)" = 2 ] || bad "bad --format: not exit 2"
[ "$(run_rc "$smctl" lft --diff "$work/all.lftc")" = 2 ] || bad "--diff with one file: not exit 2"
[ "$(run_rc "$smd" --dry-run -t "$work/p.0" -q --lfts-out "$work/x" --lfts-format xml)" = 2 ] || bad "dry-run bad --lfts-format: not exit 2"

if [ "$fail" -ne 0 ]; then
	echo "$failures failure(s)" >&2
	exit 1
fi
echo "lft_compact.sh: all checks passed"
exit 0
