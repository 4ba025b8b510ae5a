#!/bin/sh
# SPDX-License-Identifier: MIT
# OpenSM's own SA test, osmtest (Debian package opensm), against OpenSM and
# against smd on tests/data/ft-small.net under ibsim; the SM at host00,
# osmtest at host05, every flow under `timeout -s KILL` (umad2sim never
# times a request out: an unanswered query would hang osmtest forever).
#
# Flows run: -f c (inventory: every node, port and path record), -f v -d1
# ("v": validate the SA against that inventory, path records not compared),
# -f v ("v-full": with path records), -f q (VLArb and SL2VL tables),
# -f f -s1..-s4 (stress: single-MAD PortInfo, multi-MAD mixed, PathRecord
# RMPP by port GUID pair, PathRecord single). OpenSM runs with -d1
# (single-threaded dispatch): its multi-threaded SA drops
# SubnAdmSet(SMInfoRecord) and -f v then hangs. smd runs with OpenSM's
# guid2lid (same LIDs), once with --backend umad (umad2sim) and once with
# --plane ibsim:host00, and must pass every flow OpenSM passes; "v-osm"
# also validates smd's SA against the inventory OpenSM's SA gave (same
# fabric, same LIDs, path records not compared: the routes differ).
# What umad2sim lets through: its receiver thread reads each MAD into a
# buffer of sizeof(struct sim_request) (288 bytes) that also holds the
# 64-byte umad header, so a client gets the first 224 bytes of a MAD and
# 32 bytes of whatever follows on the heap. A GetTable answer reaches
# osmtest as its first RMPP segment, counted as (256 - 56) / record size
# records, the last of them cut at byte 224: the inventory holds one
# NodeRecord (112 bytes) and three PathRecords, the third half garbage.
# So "v-full" fails for any SM here (it compares that third PathRecord;
# OpenSM fails it too: "Unexpected path"), and the stress flows need a CA
# in the first NodeRecord (smd answers tables in LID order, hosts first).
# Not run, and why: -f s (service registration/lease) and -f m (multicast)
# fail against OpenSM under ibsim too (a ServiceRecord is 176 bytes: its
# answer is cut); -f e is not implemented in this osmtest; -f a waits for
# a timeout umad2sim never gives (hangs by design); -f t needs an external
# trap source. Services, events and multicast are covered by the SA's own
# tests and saquery (sa_ibsim.sh).
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
need_python
need_tools "Debian packages opensm, infiniband-diags, ibsim-utils" osmtest opensm saquery ibsim
. "$top_srcdir/tests/lib-ibsim.sh"
scratch osmtest
umad2sim_supp
net="$top_srcdir/tests/data/ft-small.net"
SMHOST=host00
CLHOST=host05
FLOWS="c v v-full q s1 s2 s3 s4"
# flows smd must pass (the others are recorded: a flow OpenSM passes and smd does not yet is
# reported as NOT YET with osmtest's first error, for the SA's owners)
SMD_MUST="c v q s1 s2 s3 s4"
# in the sanitized build umad2sim is preloaded ahead of ASan's runtime: as lib-ibsim.sh's ibsim_run
asan_opts="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
sock="$work/smd.sock"

# bg CMD...: CMD as an ibsim client at $SMHOST in the background; $! is its timeout's PID
bg() {
	(cd "$IBSIM_DIR" && SIM_HOST=$SMHOST LD_PRELOAD=$UMAD2SIM IBSIM_SOCKNAME=$IBSIM_SOCKNAME \
		OSM_TMP_DIR=$IBSIM_DIR OSM_CACHE_DIR=$IBSIM_DIR ASAN_OPTIONS=$asan_opts exec timeout 600 "$@") &
}
# ot NAME SECONDS ARGS...: osmtest ARGS at $CLHOST, killed after SECONDS; 0 when it says PASS
ot() {
	_n=$1 _t=$2
	shift 2
	(cd "$IBSIM_DIR" && SIM_HOST=$CLHOST LD_PRELOAD=$UMAD2SIM IBSIM_SOCKNAME=$IBSIM_SOCKNAME \
		ASAN_OPTIONS=$asan_opts exec timeout -s KILL "$_t" osmtest "$@") >"$work/$_n.out" 2>&1
	_rc=$?
	[ $_rc = 137 ] && echo "(killed after ${_t} s)" >>"$work/$_n.out"
	[ $_rc = 0 ] && grep -q 'PASS' "$work/$_n.out" && ! grep -q 'FAIL' "$work/$_n.out"
}
now() { date +%s.%N; }
# flows WHO INVENTORY: every flow; sets passed/failed and times (FLOW=SECONDS ...)
flows() {
	_who=$1 _inv=$2
	passed="" failed="" times=""
	for f in $FLOWS; do
		case $f in
		c) set -- -f c -i "$_inv"; t=60 ;;
		v) set -- -f v -d1 -i "$_inv"; t=120 ;;
		v-full) set -- -f v -i "$_inv"; t=120 ;;
		q) set -- -f q -i "$_inv"; t=60 ;;
		s*) set -- -f f -"$f" -i "$_inv"; t=120 ;;
		esac
		_t0=$(now)
		if ot "$_who.$f" $t "$@"; then passed="$passed $f"; else failed="$failed $f"; fi
		times="$times $f=$(awk -v a="$(now)" -v b="$_t0" 'BEGIN { printf "%.1f", a - b }')"
	done
}
sa_up() {
	(cd "$IBSIM_DIR" && SIM_HOST=$CLHOST LD_PRELOAD=$UMAD2SIM IBSIM_SOCKNAME=$IBSIM_SOCKNAME \
		ASAN_OPTIONS=$asan_opts exec timeout -s KILL 5 saquery -c) 2>/dev/null | grep -q 'Class version'
}
wait_sa() {
	_n=0
	until sa_up; do
		_n=$((_n + 1))
		[ $_n -lt 60 ] || return 1
		sleep 0.5
	done
}

# ---- OpenSM, the reference -----------------------------------------------------------
scratch_ibsim "$net" || { echo "FAIL: ibsim did not start"; exit 1; }
bg opensm -d1 -f "$IBSIM_DIR/opensm.log" >"$work/opensm.out" 2>&1
osm=$!
dmn_pids="$dmn_pids $osm"
wait_sa || bad "OpenSM's SA did not answer within 30 s"
cp "$IBSIM_DIR/guid2lid" "$work/guid2lid" || { echo "FAIL: no guid2lid from OpenSM"; exit 1; }
flows osm "$work/osm.inv"
osm_passed=$passed
echo "OpenSM: osmtest flows passed:$passed${failed:+; failed:$failed}; seconds:$times"
case " $failed " in
*" c "*|*" q "*|*" s1 "*) bad "OpenSM (the reference) failed osmtest flows:$failed (c, v, q and the stress modes pass here)" ;;
*" v "*)
	# seen once in a clean-clone CI rehearsal (session 5): OpenSM's own -f v failed; smd must pass
	# v all the same (SMD_MUST), so the reference's miss is noted, not held against smd
	echo "NOTE: OpenSM (the reference) failed -f v this time: $(grep -m1 -i 'err\|fail' "$work/osm.v.out" 2>/dev/null)" ;;
*) ;;
esac
kill "$osm" 2>/dev/null
wait "$osm" 2>/dev/null
ibsim_stop

# ---- smd --------------------------------------------------------------------------------
for be in umad ibsim; do
	scratch_ibsim "$net" || { echo "FAIL: ibsim did not start"; exit 1; }
	rm -rf "$work/state"
	if [ $be = umad ]; then
		bg "$smd" -f --backend umad --socket "$sock" --state-dir "$work/state" --guid2lid "$work/guid2lid" \
			>"$work/smd.$be.out" 2>&1
	else
		IBSIM_SOCKNAME=$IBSIM_SOCKNAME timeout 600 "$smd" -f --plane "ibsim:$SMHOST" --socket "$sock" \
			--state-dir "$work/state" --guid2lid "$work/guid2lid" >"$work/smd.$be.out" 2>&1 &
	fi
	pid=$!
	if ! dmn_up "$work/st.json" 300 || ! wait_sa; then
		bad "$be: smd or its SA did not come up"
		cat "$work/smd.$be.out"
		ibsim_stop
		continue
	fi
	flows "smd-$be" "$work/smd-$be.inv"
	if ot "smd-$be.v-osm" 120 -f v -d1 -i "$work/osm.inv"; then passed="$passed v-osm"; else failed="$failed v-osm"; fi
	echo "smd ($be): osmtest flows passed:$passed${failed:+; failed:$failed}; seconds:$times"
	for f in $failed; do
		case " $osm_passed " in
		*" $f "*) ;;
		*) continue ;;
		esac
		case " $SMD_MUST " in
		*" $f "*) bad "smd ($be): osmtest flow $f fails (OpenSM passes it)" ;;
		*) echo "NOT YET: smd ($be): osmtest flow $f (OpenSM passes it):" \
			"$(grep -E 'ERR [0-9A-F]{4}' "$work/smd-$be.$f.out" | grep -v Expecting | head -1 | cut -d'>' -f2- |
			   cut -c1-160)$(grep -o 'killed after .*' "$work/smd-$be.$f.out")" ;;
		esac
	done
	kill -0 "$pid" 2>/dev/null || bad "smd ($be) died during osmtest"
	"$smctl" --socket "$sock" --json status >"$work/$be.st.json" 2>&1
	echo "smd ($be): SA answered $(json "$work/$be.st.json" "r['sa'][0]['answered']") requests:" \
		"$(json "$work/$be.st.json" "r['sa'][0]['by_status']")"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	pid=""
	ibsim_stop
done

[ $fail = 0 ] && echo "PASS: osmtest flows against smd as against OpenSM"
exit $fail
