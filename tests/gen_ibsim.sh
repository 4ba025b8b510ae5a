#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/gen_ibsim.sh: fabrics written by `smctl topo gen` are discovered by a
# tool we did not write. Each generated ibsim net file is run in ibsim and
# real ibnetdiscover (under umad2sim) must see exactly the switches, CAs,
# links and names the generator says it built; with two planes in one net
# file, discovery from a NIC of each plane must see only that plane.
set -u

: "${top_srcdir:?run from make check}" "${top_builddir:?run from make check}"
SMCTL="$top_builddir/smd/smctl"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/smd-gen-ibsim.XXXXXX") || exit 99

. "$top_srcdir/tests/lib-ibsim.sh"

cleanup() { ibsim_cleanup; rm -rf "$TMP"; }
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

fail() { echo "FAIL: $*" >&2; exit 1; }

# json_field JSON NAME: a number from the generator's --json summary
json_field() { printf '%s\n' "$1" | sed -n "s/.*\"$2\":\\([0-9]*\\).*/\\1/p"; }

# discover OUT [SIM_HOST]: ibnetdiscover from the first node, or from SIM_HOST
discover()
{
	if [ -n "${2:-}" ]; then
		SIM_HOST=$2
		export SIM_HOST
	else
		unset SIM_HOST
	fi
	ibsim_run ibnetdiscover >"$1" 2>"$1.err"
	rc=$?
	unset SIM_HOST
	[ $rc = 0 ] || { cat "$1.err" >&2; fail "ibnetdiscover failed ($rc)"; }
}

# count_* DUMP: switches, CAs, and port lines of switch blocks (a switch-switch
# link shows twice, a host link once)
count_sw() { grep -c '^Switch' "$1"; }
count_ca() { grep -c '^Ca' "$1"; }
count_swports()
{
	awk '/^Switch/ { sw = 1; next } /^(Ca|Rt)/ { sw = 0; next } /^$/ { next }
	     sw && /^\[/ { n++ } END { print n + 0 }' "$1"
}

# switch_links DUMP: "switch-id port peer-id[peer-port]" for every linked switch
# port, sorted: the wiring by node GUID, the same for our writer and for
# ibnetdiscover (port GUIDs, LIDs and rates are left out)
switch_links()
{
	awk '/^Switch/ { match($0, /"[^"]*"/); id = substr($0, RSTART + 1, RLENGTH - 2); sw = 1; next }
	     /^(Ca|Rt)/ { sw = 0; next }
	     sw && /^\[/ { match($0, /^\[[0-9]+\]/); p = substr($0, 2, RLENGTH - 2)
	                   rest = substr($0, RLENGTH + 1)
	                   if (match(rest, /"[^"]*"\[[0-9]+\]/)) print id, p, substr(rest, RSTART, RLENGTH) }' \
		"$1" | LC_ALL=C sort
}

# same_wiring NAME GENERATED_IBND: the discovered wiring is the generated one
same_wiring()
{
	switch_links "$2" >"$TMP/$1.want"
	switch_links "$TMP/$1.ibnd" >"$TMP/$1.got"
	[ -s "$TMP/$1.want" ] || fail "$1: no switch links parsed from $2"
	if ! cmp -s "$TMP/$1.want" "$TMP/$1.got"; then
		diff "$TMP/$1.want" "$TMP/$1.got" | head -20 >&2
		fail "$1: discovered wiring differs from the generated dump"
	fi
	echo "$1: discovered wiring = generated wiring ($(wc -l <"$TMP/$1.got") switch port lines)"
}

# check NAME NET EXPECT_SW EXPECT_CA EXPECT_SWLINKS [SIM_HOST]
check()
{
	name=$1 net=$2 esw=$3 eca=$4 eswl=$5 at=${6:-}
	ibsim_start "$net" || fail "$name: ibsim did not start"
	trap cleanup EXIT # ibsim_start installs its own
	discover "$TMP/$name.ibnd" "$at"
	ibsim_stop
	sw=$(count_sw "$TMP/$name.ibnd")
	ca=$(count_ca "$TMP/$name.ibnd")
	ports=$(count_swports "$TMP/$name.ibnd")
	echo "$name: ibnetdiscover sees $sw switches, $ca CAs, $ports switch port lines" \
		"(want $esw, $eca, $((2 * eswl + eca)))"
	[ "$sw" = "$esw" ] || fail "$name: $sw switches discovered, generator built $esw"
	[ "$ca" = "$eca" ] || fail "$name: $ca CAs discovered, generator built $eca"
	[ "$ports" = $((2 * eswl + eca)) ] ||
		fail "$name: $ports linked switch ports discovered, want $((2 * eswl + eca))"
}

gen()
{
	out=$1
	shift
	"$SMCTL" --json topo gen fat-tree "$@" --format ibsim -o "$out" ||
		fail "smctl topo gen fat-tree $* failed"
}

# 0. the command line: usage errors exit 2, bad values 1, nothing left behind
expect_rc()
{
	want=$1
	shift
	"$SMCTL" topo gen "$@" >"$TMP/cli.out" 2>"$TMP/cli.err"
	rc=$?
	[ $rc = "$want" ] || { cat "$TMP/cli.err" >&2; fail "smctl topo gen $*: exit $rc, want $want"; }
	[ $rc = 0 ] || [ -s "$TMP/cli.err" ] || fail "smctl topo gen $*: no message"
}
expect_rc 2
expect_rc 2 mesh -o "$TMP/x"
expect_rc 2 fat-tree --radix 8
expect_rc 2 fat-tree --bogus -o "$TMP/x"
expect_rc 2 fat-tree --radix
expect_rc 2 fat-tree --planes 2 -o "$TMP/x"
expect_rc 2 fat-tree --format xml -o "$TMP/x"
expect_rc 1 fat-tree --radix 0 -o "$TMP/x"
expect_rc 1 fat-tree --radix 300 -o "$TMP/x"
expect_rc 1 fat-tree --radix abc -o "$TMP/x"
expect_rc 1 fat-tree --hosts 1000000000 -o "$TMP/x"
expect_rc 1 fat-tree --hosts -5 -o "$TMP/x"
expect_rc 1 fat-tree --remove-links 1.5 -o "$TMP/x"
expect_rc 1 fat-tree --radix 8 --remove-links 1 -o "$TMP/x"
expect_rc 1 fat-tree --radix 8 --remove-switches 4 -o "$TMP/x"
expect_rc 1 fat-tree --oversub 1:0 -o "$TMP/x"
expect_rc 1 fat-tree --planes 17 --format ibsim -o "$TMP/x"
expect_rc 1 fat-tree --radix 64 --levels 3 -o "$TMP/x"
expect_rc 1 fat-tree --radix 8 -o "$TMP/no/such/dir/x"
[ ! -e "$TMP/x" ] || fail "a refused generation left $TMP/x"
mkdir "$TMP/w.1" # plane 1 cannot be written: plane 0's file must not stay
expect_rc 1 fat-tree --radix 8 --planes 2 --split -o "$TMP/w"
[ ! -e "$TMP/w.0" ] || fail "a failed --split left $TMP/w.0"
# --split, determinism per seed
expect_rc 0 fat-tree --radix 8 --planes 3 --split --remove-links 0.2 --seed 4 -o "$TMP/s"
for p in 0 1 2; do [ -s "$TMP/s.$p" ] || fail "--split did not write $TMP/s.$p"; done
[ ! -e "$TMP/s.3" ] && [ ! -e "$TMP/s" ] || fail "--split wrote more than 3 files"
expect_rc 0 fat-tree --radix 8 --planes 3 --split --remove-links 0.2 --seed 4 -o "$TMP/t"
expect_rc 0 fat-tree --radix 8 --planes 3 --split --remove-links 0.2 --seed 5 -o "$TMP/u"
for p in 0 1 2; do
	cmp -s "$TMP/s.$p" "$TMP/t.$p" || fail "same seed, different plane $p"
done
cmp -s "$TMP/s.0" "$TMP/u.0" && cmp -s "$TMP/s.1" "$TMP/u.1" && cmp -s "$TMP/s.2" "$TMP/u.2" &&
	fail "seeds 4 and 5 gave the same fabric"

# 1. full 2-level radix-8 tree: 8 leaves + 4 spines, 32 hosts, 32 switch links
js=$(gen "$TMP/ft8.net" --radix 8) || exit 1
echo "generator: $js"
[ "$(json_field "$js" switches)" = 12 ] || fail "radix 8 summary: switches"
[ "$(json_field "$js" cas)" = 32 ] || fail "radix 8 summary: cas"
check ft8 "$TMP/ft8.net" 12 32 32
"$SMCTL" topo gen fat-tree --radix 8 -o "$TMP/ft8.topo" >/dev/null || fail "ibnd generation"
same_wiring ft8 "$TMP/ft8.topo"
grep -q '"host00005 mlx5_0"' "$TMP/ft8.ibnd" || fail "ft8: host names not discovered"
grep -q '"p0-spine00003"' "$TMP/ft8.ibnd" || fail "ft8: switch names not discovered"

# 2. partial tree with seeded link removal: 13 hosts -> 4 leaves, 4 spines,
#    16 switch links less round(0.1 * 16) = 2
js=$(gen "$TMP/part.net" --radix 8 --hosts 13 --remove-links 0.1 --seed 5) || exit 1
echo "generator: $js"
[ "$(json_field "$js" switch_links)" = 14 ] || fail "partial summary: switch_links"
check part "$TMP/part.net" "$(json_field "$js" switches)" "$(json_field "$js" cas)" \
	"$(json_field "$js" switch_links)"
"$SMCTL" topo gen fat-tree --radix 8 --hosts 13 --remove-links 0.1 --seed 5 -o "$TMP/part.topo" \
	>/dev/null || fail "ibnd generation"
same_wiring part "$TMP/part.topo"

# 3. 3 levels at radix 4: 16 hosts, 8 leaves + 8 aggs + 4 cores, 32 switch links,
#    one spine-level switch removed
js=$(gen "$TMP/l3.net" --radix 4 --levels 3 --remove-switches 1 --seed 2) || exit 1
echo "generator: $js"
[ "$(json_field "$js" switches)" = 19 ] || fail "3-level summary: switches"
check l3 "$TMP/l3.net" 19 16 "$(json_field "$js" switch_links)"
"$SMCTL" topo gen fat-tree --radix 4 --levels 3 --remove-switches 1 --seed 2 -o "$TMP/l3.topo" \
	>/dev/null || fail "ibnd generation"
same_wiring l3 "$TMP/l3.topo"

# 4. two planes in one net file; plane 1 loses 2 of its 16 switch links and
#    3 of its 16 NICs: discovery from a NIC of each plane sees only that plane
MP="--radix 8 --hosts 16 --planes 2 --remove-links 0.1 --remove-nics 3 --fault-plane 1 --seed 9"
# shellcheck disable=SC2086 # MP is a list of options
js=$(gen "$TMP/mp.net" $MP) || exit 1
echo "generator: $js"
[ "$(json_field "$js" switches)" = 16 ] || fail "2-plane summary: switches"
[ "$(json_field "$js" switch_links)" = 30 ] || fail "2-plane summary: switch_links"
[ "$(json_field "$js" cas)" = 29 ] || fail "2-plane summary: cas"
# shellcheck disable=SC2086
"$SMCTL" topo gen fat-tree $MP --split -o "$TMP/mp.topo" >/dev/null || fail "ibnd generation"
# attach at the last NIC plane 1 still has; its host has a NIC in plane 0 too
mphost=$(awk -F'"' '/^(Hca|Ca)/ && / mlx5_1"/ { h = $4 } END { sub(/ mlx5_1$/, "", h); print h }' \
	"$TMP/mp.net")
[ -n "$mphost" ] || fail "no plane-1 NIC in the net file"
for p in 0 1; do
	other=$((1 - p))
	nics=$((16 - 3 * p))
	id=$(awk -F'"' -v d="$mphost mlx5_$p" \
		'/^(Hca|Ca)/ && index($0, "\"" d "\"") { print $2; exit }' "$TMP/mp.net")
	[ -n "$id" ] || fail "no NIC '$mphost mlx5_$p' in the net file"
	check "plane$p" "$TMP/mp.net" 8 "$nics" $((16 - 2 * p)) "$id"
	same_wiring "plane$p" "$TMP/mp.topo.$p"
	if grep -q "mlx5_$other\"" "$TMP/plane$p.ibnd"; then
		fail "plane $p discovery saw plane $other NICs"
	fi
	if grep -q "\"p$other-" "$TMP/plane$p.ibnd"; then
		fail "plane $p discovery saw plane $other switches"
	fi
	[ "$(grep -c "^Ca.*mlx5_$p\"" "$TMP/plane$p.ibnd")" = "$nics" ] || fail "plane $p NICs missing"
done
# the two NICs of a host share their system image GUID, as discovered
sysimg_of()
{
	awk -v d="\"$2\"" '/^sysimgguid=/ { s = $0 } /^Ca/ && index($0, d) { print s; exit }' "$1"
}
sysimg0=$(sysimg_of "$TMP/plane0.ibnd" "$mphost mlx5_0")
sysimg1=$(sysimg_of "$TMP/plane1.ibnd" "$mphost mlx5_1")
echo "$mphost system image: plane 0 $sysimg0, plane 1 $sysimg1"
[ -n "$sysimg0" ] && [ "$sysimg0" = "$sysimg1" ] || fail "NICs of $mphost do not share a sysimg GUID"
echo "PASS"
exit 0
