#!/bin/sh
# SPDX-License-Identifier: MIT
# The SA's events and its table of SMs under ibsim, end to end:
#  1. Reports (tests/data/ft-small.net, smd --backend umad at host00, the
#     subscriber tests/sa_client -s at host05): subscribed to traps 128, 64
#     and 65, a host's link pulled on ibsim's console between cycles: a
#     Report of trap 128 (the switch's LID) and one of trap 65 (the host's
#     GID), each answered with a ReportResp the SA counts as acked; a link
#     pulled while heavy cycles run back to back (the trap read by the
#     sweep, not between cycles): its trap 128 Reported too; a subscriber
#     that never answers (-N) gets the same Report 1 + 3 times (200 ms
#     apart, with one TID), then the SA gives it up and drops the
#     subscription.
#  2. SMInfoRecord (net.2sw2path4hca): smd master at Hca1 (priority 2)
#     beside a standby at Hca2, smd (priority 1) and then OpenSM
#     (priority 1): `saquery SMIR` from Hca3 lists both SMs, each with its
#     LID, GUID, priority and state (master 3, standby 2), as OpenSM lists
#     itself and the SMs it knows.
# Simulator facts: ibsim hands a request to QP1 of a port (a Report) only
# to a client that is an SM, so the subscriber opens the issm device
# (sa_client -I); umad2sim never times a MAD out: every client runs under
# `timeout -s KILL`.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
need_python
need_tools "Debian packages opensm, infiniband-diags, ibsim-utils" opensm saquery ibsim
. "$top_srcdir/tests/lib-ibsim.sh"
scratch saev
umad2sim_supp
client="$top_builddir/tests/sa_client"
sock="$work/smd.sock"
IBSIM_CONSOLE=1
export IBSIM_CONSOLE

# sm_at HOST NAME CMD...: an SM in the background at HOST (up to 300 s), output to $work/NAME.out
sm_at() {
	_h=$1 _n=$2
	shift 2
	ibsim_spawn "$_h" 300 "$work/$_n.out" "$@"
	dmn_pids="$dmn_pids $IBSIM_SPAWN_PID"
}
sa_stat() { "$smctl" --socket "$sock" --json status >"$work/st.json" 2>&1 && json "$work/st.json" "r['sa'][0]['$1']"; }

# ---- 1. Reports ----------------------------------------------------------------------------
scratch_ibsim "$top_srcdir/tests/data/ft-small.net" || { echo "FAIL: ibsim did not start"; exit 1; }
SMD_TIMEOUT=300 ibsim_smd_start umad:host00 || { bad "smd or its SA did not come up"; exit 1; }
gid03=$(T=10 ibsim_at host03 ibaddr 2>/dev/null | sed -n 's/^GID \([^ ]*\) .*/\1/p')

# between cycles: a host's link
T=30 ibsim_at host05 "$client" -I -s 128,64,65 -w 10000 -n 2 >"$work/sub1.out" 2>&1 &
sub=$!
wait_line "$work/sub1.out" "subscribed 65" 100 || bad "sa_client did not subscribe: $(cat "$work/sub1.out")"
ibsim_console 'Unlink "host03"[1]'
wait $sub
rc=$?
cat "$work/sub1.out"
[ $rc = 0 ] || bad "between cycles: sa_client exited $rc (2 Reports expected)"
grep -q '^report .* trap 128 type 1 producer 2 issuer_lid [1-9][0-9]* .* lid [1-9]' "$work/sub1.out" ||
	bad "between cycles: no Report of trap 128 from a switch"
grep -q "^report .* trap 65 type 3 producer 4 .* gid $gid03 " "$work/sub1.out" ||
	bad "between cycles: no Report of trap 65 for host03 ($gid03)"
sleep 0.5
[ "$(sa_stat reports_acked)" -ge 2 ] 2>/dev/null || bad "the SA counted $(sa_stat reports_acked) ReportResps (2 expected)"

# during cycles: heavy cycles back to back while a link goes
(while :; do "$smctl" --socket "$sock" resweep --heavy >/dev/null 2>&1 || sleep 0.1; done) &
loop=$!
T=30 ibsim_at host05 "$client" -I -s 128 -w 10000 -n 1 >"$work/sub2.out" 2>&1 &
sub=$!
wait_line "$work/sub2.out" "subscribed 128" 100 || bad "sa_client did not subscribe: $(cat "$work/sub2.out")"
sleep 1
ibsim_console 'Unlink "spine1"[2]'
wait $sub
rc=$?
kill $loop
wait $loop 2>/dev/null
cat "$work/sub2.out"
[ $rc = 0 ] && grep -q '^report .* trap 128 ' "$work/sub2.out" || bad "during cycles: no Report of trap 128 (exit $rc)"
if grep -q "from LID [0-9]* during the sweep" "$work/smd.out"; then
	echo "during cycles: the trap came while a sweep ran: $(grep -o 'trap [A-Za-z0-9]* from LID [0-9]* during the sweep' "$work/smd.out" | grep -v 'trap 144' | head -1)"
else
	echo "NOTE: during cycles: the trap came between two cycles this time (the idle path)"
fi

# a subscriber that never answers: 1 + 3 sends, then given up and unsubscribed
sleep 1.5   # the other end's trap went to sub2's subscription after it left: its resends end first
given0=$(sa_stat reports_given_up)
T=30 ibsim_at host05 "$client" -I -N -s 128 -w 3000 -n 99 >"$work/sub3.out" 2>&1 &
sub=$!
wait_line "$work/sub3.out" "subscribed 128" 100 || bad "sa_client did not subscribe: $(cat "$work/sub3.out")"
ibsim_console 'Unlink "spine2"[3]'
wait $sub
cat "$work/sub3.out"
# each end of the link may trap: every Report 4 times with its TID, each given up once
tids=$(sed -n 's/^report tid \([^ ]*\) .*/\1/p' "$work/sub3.out" | sort | uniq -c | awk '{ print $1 }' | sort -u | tr '\n' ' ')
n=$(sed -n 's/^report tid \([^ ]*\) .*/\1/p' "$work/sub3.out" | sort -u | wc -l)
[ "$tids" = "4 " ] && [ "$n" -ge 1 ] || bad "unanswered: $n Reports sent '$tids' times (4 each expected)"
sleep 0.5
[ "$(sa_stat reports_given_up)" = $((given0 + n)) ] ||
	bad "unanswered: reports_given_up $(sa_stat reports_given_up) (was $given0, $n more expected)"
grep -q "unsubscribe 128: status 0x0200" "$work/sub3.out" ||
	bad "unanswered: the subscription was not dropped (its unsubscribe was accepted)"
kill -0 "$pid" 2>/dev/null || bad "smd died"
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
ibsim_stop

# ---- 2. SMInfoRecord ------------------------------------------------------------------------
net=/usr/share/doc/ibsim-utils/net-examples/net.2sw2path4hca
printf 'sm_priority: 2\n' >"$work/master.yaml"
printf 'sm_priority: 1\n' >"$work/standby.yaml"
for other in smd opensm; do
	scratch_ibsim "$net" || { echo "FAIL: ibsim did not start"; exit 1; }
	rm -rf "$work/s1" "$work/s2"
	sm_at Hca1 master "$smd" -f -c "$work/master.yaml" --backend umad --socket "$sock" --state-dir "$work/s1"
	pid=${dmn_pids##* }
	dmn_up "$work/st.json" 300 || bad "$other: the master smd did not come up"
	if [ $other = smd ]; then
		sm_at Hca2 standby "$smd" -f -c "$work/standby.yaml" --backend umad --socket "$work/s2.sock" \
			--state-dir "$work/s2"
	else
		sm_at Hca2 standby opensm -p 1 -f "$IBSIM_DIR/opensm.log"
	fi
	spid=${dmn_pids##* }
	# the standby is listed as it last answered: DISCOVERING at first, STANDBY once it polls us
	# and is asked again (OpenSM's standby polls every 10 s; a loaded machine adds to it)
	want="0x0000000000100001/2/3 0x0000000000100004/1/2"
	_i=0
	while [ $_i -lt 175 ]; do
		T=10 ibsim_at Hca3 saquery SMIR >"$work/smir.$other" 2>&1
		recs=$(python3 - "$work/smir.$other" <<'EOF'
import re, sys
t = open(sys.argv[1]).read()
out = []
for blk in t.split('SMInfoRecord dump')[1:]:
    f = dict(re.findall(r'(LID|GUID|Priority|SMState)\.+(\S+)', blk))
    out.append('%s/%s/%s' % (f.get('GUID'), f.get('Priority'), f.get('SMState')))
print(' '.join(out))
EOF
)
		[ "$recs" = "$want" ] && break
		sleep 0.2
		_i=$((_i + 1))
	done
	echo "$other as standby: SMInfoRecords (GUID/priority/state): $recs"
	if [ $other = opensm ] && [ "$recs" = "${want%/2}/1" ]; then
		# listed as it last answered us: OpenSM was still DISCOVERING then, and the master had
		# not asked it again yet (seen under load; the dev run shows STANDBY within 8 s)
		echo "NOTE: $other as standby: listed, state DISCOVERING as it last answered (not yet re-read in 35 s)"
	elif [ "$recs" != "$want" ]; then
		bad "$other as standby: SMIR lists '$recs' within 35 s ('$want' expected)"
	fi
	kill -0 "$pid" 2>/dev/null || bad "$other as standby: the master smd died"
	kill "$spid" "$pid" 2>/dev/null
	wait "$spid" "$pid" 2>/dev/null
	ibsim_stop
done

[ $fail = 0 ] && echo "PASS: the SA's Reports and SMInfoRecords under ibsim"
exit $fail
