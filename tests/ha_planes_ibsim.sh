#!/bin/sh
# SPDX-License-Identifier: MIT
# Master and standby per plane (issue 15): each plane is its own subnet with
# its own election, so one smd attached to two planes of one ibsim instance
# is master of plane 0 and standby of plane 1, where OpenSM (priority 10)
# is master:
#  - smd sweeps and programs plane 0 (sweeps go on, sminfo on plane 0 names
#    smd) while it polls OpenSM on plane 1 and writes nothing there;
#  - status says plane 0 up, plane 1 standby with OpenSM as its master; the
#    metrics give each plane's state;
#  - kill -9 OpenSM: smd takes plane 1 over (sminfo on plane 1 names smd as
#    master, every plane-1 CA points at it), plane 0 stays as it was.
set -u

: "${top_srcdir:?run from make check}"
: "${top_builddir:?run from make check}"
. "$top_srcdir/tests/lib-daemon.sh"
need_python
umad_setup
scratch ha-planes
IBSIM_RUN_TIMEOUT=120
export IBSIM_RUN_TIMEOUT

net="$work/net"
"$smctl" topo gen fat-tree --hosts 16 --radix 8 --planes 2 --format ibsim -o "$net" >/dev/null ||
	{ echo "FAIL: generator"; exit 1; }
host() { grep "mlx5_$1\"" "$net" | sed -n "$2p" | sed 's/.*"\(H-[0-9a-f]*\)".*/\1/'; }
a0=$(host 0 1); a1=$(host 1 1)   # smd's NICs
b1=$(host 1 2)                   # OpenSM's, plane 1
c0=$(host 0 3); c1=$(host 1 3)   # where sminfo and smpquery look from
ibsim_start "$net" || { echo "FAIL: cannot start ibsim"; exit 1; }
scratch_trap

now() { date +%s.%N; }
elapsed() { python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$(now)"; }
sminfo_on() { SIM_HOST=$1 ibsim_run sminfo 2>&1 | head -1; }
st() { "$smctl" --socket "$sock" --json status >"$work/st.json" 2>/dev/null; }

# --- OpenSM master of plane 1 --------------------------------------------------
SIM_HOST=$b1 ibsim_run opensm -p 10 -f "$IBSIM_DIR/opensm.log" >/dev/null 2>&1 &
osm_wrap=$!
i=0
while [ $i -lt 300 ]; do
	sminfo_on "$c1" | grep -q "state 3 SMINFO_MASTER" && break
	sleep 0.2
	i=$((i + 1))
done
osm_line=$(sminfo_on "$c1"); echo "plane 1 before smd: $osm_line"
echo "$osm_line" | grep -q "priority 10 state 3" || bad "OpenSM did not become master of plane 1"
osm_guid=$(echo "$osm_line" | sed -n 's/.*sm guid \(0x[0-9a-f]*\),.*/\1/p')

# --- smd on both planes --------------------------------------------------------
printf 'sweep_interval: 0\nsm_poll_interval_ms: 200\nsm_poll_retries: 3\n' >"$work/smd.yaml"
sock="$work/smd.sock"
"$smd" -f -c "$work/smd.yaml" --plane "ibsim:$a0" --plane "ibsim:$a1" --socket "$sock" \
	--state-dir "$work/state" >"$work/smd.out" 2>"$work/smd.err" &
pid=$!
dmn_pids="$pid"
i=0
while [ $i -lt 300 ]; do
	st && [ "$(json "$work/st.json" 'r["sweeps"] >= 1 and r["sm"][1]["role"] == "standby"')" = True ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
	i=$((i + 1))
done
[ "$(json "$work/st.json" 'r["sweeps"] >= 1')" = True ] ||
	{ cat "$work/smd.err"; bad "smd ran no cycle while standby of plane 1 (plane 0 is its own subnet)"; }
[ "$(json "$work/st.json" '(r["sm"][0]["role"], r["sm"][1]["role"], r["sm"][1]["master_guid"])')" = \
	"('master', 'standby', '$(printf '0x%016x' "$osm_guid")')" ] ||
	bad "roles: $(json "$work/st.json" 'r["sm"]')"
"$smctl" --socket "$sock" --json planes >"$work/planes.json" || bad "no planes reply"
[ "$(json "$work/planes.json" '(r["planes"][0]["state"], r["planes"][1]["state"])')" = "('up', 'standby')" ] ||
	bad "planes: $(json "$work/planes.json" '[(p["index"], p["state"]) for p in r["planes"]]')"
[ "$(json "$work/st.json" 'r["state"]')" = up ] || bad "state with a standby plane: $(json "$work/st.json" 'r["state"]')"
"$smctl" --socket "$sock" metrics >"$work/metrics" || bad "no metrics"
grep -q '^smd_sm_state{plane="plane0",state="master"} 1$' "$work/metrics" &&
	grep -q '^smd_sm_state{plane="plane1",state="standby"} 1$' "$work/metrics" ||
	bad "metrics: $(grep smd_sm_state "$work/metrics" | grep ' 1$')"
p0=$(sminfo_on "$c0"); echo "plane 0: $p0"
echo "$p0" | grep -q "state 3 SMINFO_MASTER" || bad "plane 0 has no master: $p0"
echo "$p0" | grep -q "$osm_guid" && bad "OpenSM is master of plane 0 too"
# plane 0 keeps sweeping while plane 1 stands by
s1=$(json "$work/st.json" 'r["sweeps"]')
"$smctl" --socket "$sock" resweep --heavy >"$work/resweep" 2>&1 || bad "resweep refused while plane 1 is standby: $(cat "$work/resweep")"
st
[ "$(json "$work/st.json" "r['sweeps'] > $s1")" = True ] || bad "no sweep after resweep (sweeps $s1)"
# nothing written to plane 1: OpenSM is still its master, and smd says standby
[ "$(json "$work/st.json" 'r["sm"][1]["role"]')" = standby ] || bad "plane 1 not standby after a sweep"
echo "$(sminfo_on "$c1")" | grep -q "$osm_guid" || bad "plane 1's master changed while OpenSM runs"

# --- kill -9 OpenSM: smd takes plane 1 over -------------------------------------
# OpenSM's own PID, down from the wrapper through /proc (no procps in a minimal root)
child() { cat /proc/"$1"/task/*/children 2>/dev/null | tr ' ' '\n' | sed '/^$/d' | head -1; }
osm=$(child "$osm_wrap")
while [ -n "$osm" ] && [ "$(cat /proc/"$osm"/comm 2>/dev/null)" != opensm ]; do
	osm=$(child "$osm")
done
[ -n "$osm" ] || bad "cannot find OpenSM's PID"
t0=$(now)
kill -9 "$osm" 2>/dev/null
i=0
while [ $i -lt 300 ]; do
	st && [ "$(json "$work/st.json" 'r["sm"][1]["role"] == "master" and r["planes_up"] == 2')" = True ] && break
	sleep 0.05
	i=$((i + 1))
done
echo "plane 1 taken over in $(elapsed "$t0") s"
[ "$(json "$work/st.json" 'r["sm"][1]["role"] == "master" and r["planes_up"] == 2')" = True ] ||
	{ tail -20 "$work/smd.err"; bad "no takeover of plane 1: $(json "$work/st.json" '(r["sm"], r["planes_up"])')"; }
p1=$(sminfo_on "$c1"); echo "plane 1 after: $p1"
echo "$p1" | grep -q "state 3 SMINFO_MASTER" && ! echo "$p1" | grep -q "$osm_guid" || bad "plane 1: $p1"
smlid=$(echo "$p1" | sed -n 's/^sminfo: sm lid \([0-9]*\) .*/\1/p')
got=$(SIM_HOST=$c1 ibsim_run smpquery -D portinfo 0 2>/dev/null | sed -n 's/^SMLid:\.*//p')
[ "$got" = "$smlid" ] || bad "a plane-1 CA points at SM LID $got, not $smlid"
[ "$(json "$work/st.json" 'r["sm"][0]["role"]')" = master ] || bad "plane 0 lost its master"

kill -TERM "$pid" 2>/dev/null
wait "$pid"
rc=$?
pid=""
dmn_pids=""
[ "$rc" = 0 ] || bad "smd exited $rc"
kill "$osm_wrap" 2>/dev/null
wait "$osm_wrap" 2>/dev/null
sanitizer_check "" "$work/smd.err"
if [ "$fail" -ne 0 ]; then
	echo "--- smd log"; tail -30 "$work/smd.err"
	echo "$failures failure(s)" >&2
	exit 1
fi
echo "PASS: per-plane master/standby under ibsim"
exit 0
