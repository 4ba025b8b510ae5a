#!/bin/sh
# SPDX-License-Identifier: MIT
# Port configuration under ibsim, read back with tools we did not write:
# after smd --once, smpquery portinfo of the SM's node shows OperationalVLs
# VL0-7 (ibsim's VLCap, max_op_vls 5), smpquery sl2vl
# OpenSM's default table masked for VL0-7.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
. "$top_srcdir/tests/lib-ibsim.sh"
need_tools "ibsim-utils, infiniband-diags" ibsim smpquery
smd=$top_builddir/smd/smd
fail=0
bad() { echo "FAIL: $*"; fail=1; }
scratch portcfg
scratch_ibsim "$top_srcdir/tests/data/ft-small.net" || { echo "SKIP: ibsim did not start"; exit 77; }
ibsim_run "$smd" --once --state-dir "$work/state" --json >"$work/run1.json" 2>"$work/run1.err" ||
	{ bad "smd --once failed"; cat "$work/run1.err"; }
lid=$(ibsim_run smpquery portinfo -D 0 2>/dev/null | sed -n 's/^Lid:\.*\([0-9]*\)$/\1/p')
ibsim_run smpquery portinfo "$lid" >"$work/pi.txt" 2>&1 || bad "smpquery portinfo $lid failed"
grep -q "^OperVLs:\.*VL0-7$" "$work/pi.txt" || { bad "OperationalVLs not VL0-7"; cat "$work/pi.txt"; }
ibsim_run smpquery sl2vl "$lid" >"$work/sl2vl.txt" 2>&1 || bad "smpquery sl2vl failed"
grep -q "| 0| 1| 2| 3| 4| 5| 6| 7| 0| 1| 2| 3| 4| 5| 6| 7|" "$work/sl2vl.txt" ||
	{ bad "SL2VL is not OpenSM's default for VL0-7"; cat "$work/sl2vl.txt"; }
ibsim_stop
[ $fail = 0 ] && echo "PASS: port configuration under ibsim"
exit $fail
