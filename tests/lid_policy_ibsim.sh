#!/bin/sh
# One LID policy in every mode (issue 16), under ibsim: a fabric simulator
# restarted cold before each run, so only the state directory carries LIDs
# from one run to the next. `smd --once` (umad under umad2sim) and `smd -f
# --backend ibsim` number a cold fabric alike, each keeps what the other
# numbered, in either order, and each keeps its own across a restart; the
# LIDs compared are STATE_DIR/guid2lid (every port) and what ibnetdiscover
# reads from the fabric. LIDs a daemon inherited (switches included) survive
# a fabric reset and a restart. Only the PIDs started here are signalled.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
. "$top_srcdir/tests/lib-ibsim.sh"
need_python
need_tools "ibsim-utils, infiniband-diags" ibsim ibnetdiscover
umad2sim_supp
scratch lidpolib
sock="$work/sock"

"$smctl" topo gen fat-tree --radix 8 --hosts 12 --format ibsim -o "$work/ft.net" >/dev/null ||
	{ echo "FAIL: generator"; exit 1; }

# fabric NAME: "PORTGUID LID" of every LID port, as ibnetdiscover reads them
fabric() {
	ibsim_run ibnetdiscover -p >"$work/$1.ibnd" 2>/dev/null || bad "$1: ibnetdiscover failed"
	python3 - "$work/$1.ibnd" <<'EOF' | sort -u >"$work/$1.fab"
import re, sys
for line in open(sys.argv[1]):
	# "SW  2 19 0x...guid 4x ..." (switch port, LID of port 0) / "CA  1  1 0x...guid ..."
	m = re.match(r'(SW|CA)\s+(\d+)\s+\d+\s+(0x[0-9a-f]+)', line)
	if m:
		print('0x%016x %d' % (int(m.group(3), 16), int(m.group(2))))
EOF
}
g2l() { python3 -c 'import sys
for l in open(sys.argv[1]):
	f = l.split()
	if len(f) != 3 or f[0].startswith("#"):
		continue
	print("0x%016x %d" % (int(f[0], 16), int(f[1], 0)))' "$2/guid2lid" | sort -u >"$work/$1.g2l"; }

cold() {
	ibsim_stop
	scratch_ibsim "$work/ft.net" || { echo "FAIL: ibsim did not start"; exit 1; }
}

# once NAME DIR [ARGS] / dmn NAME DIR: one run on a cold fabric; NAME.g2l its table, NAME.fab the fabric's LIDs
once() {
	_n=$1 _d=$2
	shift 2
	cold
	ibsim_run "$smd" --once -q --state-dir "$_d" "$@" >"$work/$_n.out" 2>"$work/$_n.err" ||
		{ bad "$_n: smd --once failed"; cat "$work/$_n.err"; }
	g2l "$_n" "$_d"
	fabric "$_n"
}
dmn() {
	cold
	rm -f "$sock"
	if dmn_start "$1" --backend ibsim --state-dir "$2" --socket "$sock"; then
		fabric "$1"
		dmn_stop || bad "$1: the daemon did not exit 0"
	else
		bad "$1: the daemon did not come up"
	fi
	g2l "$1" "$2"
}
# the fabric's LIDs are the table's
agree() {
	join "$work/$1.g2l" "$work/$1.fab" | awk '$2 != $3' >"$work/disagree"
	[ -s "$work/$1.fab" ] && [ ! -s "$work/disagree" ] || { bad "$1: the fabric's LIDs are not the table's"; head -5 "$work/disagree"; }
}

# cross FIRST SECOND TAG: FIRST, SECOND, SECOND again, FIRST again on one state dir: the same LIDs
cross() {
	$1 "${3}1" "$work/$3"
	agree "${3}1"
	$2 "${3}2" "$work/$3"
	agree "${3}2"
	same_lines "$work/${3}1.g2l" "$work/${3}2.g2l" "$1 then $2"
	$2 "${3}3" "$work/$3"
	same_lines "$work/${3}1.g2l" "$work/${3}3.g2l" "$2 restart after $1"
	$1 "${3}4" "$work/$3"
	same_lines "$work/${3}1.g2l" "$work/${3}4.g2l" "$1 after $2"
}
cross once dmn a
cross dmn once b
same_lines "$work/a1.g2l" "$work/b1.g2l" "cold numbering (once vs daemon)"

# switch LIDs survive a fabric reset and a restart (issue 18: 11 of them changed): the fabric first
# holds another SM's LIDs (--once --guid2lid of shifted LIDs), a first daemon inherits them, the
# simulator restarts cold (every LID 0), a second daemon numbers it again: every LID as before.
# (A reset under a running daemon: tests/test_lidmgr.c test_switch_lids_stick.)
awk '/^0x/ { n++; printf "%s 0x%04x 0x%04x\n", $1, n + 199, n + 199 }' "$work/a/guid2lid" >"$work/foreign.g2l"
once f0 "$work/f0" --guid2lid "$work/foreign.g2l"
rm -f "$sock"
if dmn_start r1 --backend ibsim --state-dir "$work/r" --socket "$sock"; then
	fabric r1
	same_lines "$work/f0.fab" "$work/r1.fab" "the daemon kept the LIDs the fabric held"
	dmn_stop || bad "r1: the daemon did not exit 0"
else
	bad "r1: the daemon did not come up"
fi
dmn r3 "$work/r"
same_lines "$work/r1.fab" "$work/r3.fab" "a restart after a fabric reset"

sanitizer_check "" "$work"/*.err
[ "$fail" -eq 0 ] && echo "PASS: lid_policy_ibsim" || echo "FAIL: lid_policy_ibsim ($failures)"
exit "$fail"
