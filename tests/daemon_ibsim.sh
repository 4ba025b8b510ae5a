#!/bin/sh
# SPDX-License-Identifier: MIT
# smd -f as systemd runs it, on an ibsim fabric (16 hosts, 8 switches), with
# a stand-in notification socket (tests/notify_recv) and WATCHDOG_USEC set:
#  - READY=1 after the first sweep, with STATUS= "up: 1/1 planes up, ...";
#    log lines carry journald's "<N>" prefix when stderr is JOURNAL_STREAM's
#    stream, and not when JOURNAL_STREAM names another one;
#    WATCHDOG=1 pings at about half of WATCHDOG_USEC;
#  - `smctl status --json` answers (state up, 8 switches, 16 CAs);
#  - a link pulled on ibsim's console (Unlink) is repaired: the daemon
#    reroutes on its own (trap 128), and leaf 0's LFT read back with
#    ibroute (infiniband-diags, through umad2sim) no longer sends anything
#    out of the pulled port while every host LID is still routed;
#    ibtracert from a host of leaf 0 to a host of leaf 3 still arrives;
#  - SIGHUP with a broken file: RELOADING=1 + MONOTONIC_USEC=, the error
#    logged with FILE:LINE, READY=1 again, the daemon carries on (status);
#    SIGHUP with a valid file that changes the engine: the next sweep
#    routes with the new engine;
#  - kill -9 during a sweep, restart on the same state dir: every LID
#    (ibnetdiscover -p) is unchanged and the restarted daemon writes no LFT
#    block; kill -9 again and restart ibsim itself (a fresh, unconfigured
#    fabric): the LIDs come back from the state file alone;
#  - a sweep that stalls longer than sweep_stall_limit (ibsim SIGSTOPped)
#    stops the WATCHDOG=1 pings (SMD-0524) until it ends (SMD-0525);
#  - SIGTERM: STOPPING=1, exit 0;
#  - a plane that cannot come up at start (unknown ibsim node): READY=1 all
#    the same (systemd must not kill the process that will bring the fabric
#    up), with STATUS=down: ...; smctl status says down.
# Only the PIDs started here are signalled; everything is removed on exit.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
nrecv="$top_builddir/tests/notify_recv"
need_python
. "$top_srcdir/tests/lib-ibsim.sh"
scratch dibsim
# wait_for SECONDS COMMAND...: poll every 0.1 s until COMMAND succeeds
wait_for() {
	_n=$(($1 * 10))
	shift
	while [ "$_n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		_n=$((_n - 1))
	done
	return 1
}
count() { grep -c "^$1" "$work/notify.log" 2>/dev/null; }
has_ge() { [ "$(count "$1")" -ge "$2" ]; }

sock="$work/smd.sock"
conf="$work/smd.yaml"
diag=H-0002c92000000002      # diagnostics attach here
smnode=H-0002c92000000000    # smd attaches here (a host of leaf 0)
leaf0=S-0002c91000000000

"$smctl" topo gen fat-tree --radix 8 --hosts 16 --format ibsim -o "$work/ft.net" >/dev/null ||
	{ echo "FAIL: generator"; exit 1; }
IBSIM_CONSOLE=1 scratch_ibsim "$work/ft.net" || { echo "FAIL: ibsim did not start"; exit 1; }

# start_smd: notify receiver + smd -f with NOTIFY_SOCKET and WATCHDOG_USEC (1 s)
start_smd() {
	rm -f "$work/notify" "$work/notify.log"
	"$nrecv" "$work/notify" "$work/notify.log" 60 &
	npid=$!
	dmn_pids="$dmn_pids $npid"
	wait_for 5 test -S "$work/notify" || { echo "FAIL: notify_recv did not bind"; exit 1; }
	touch "$work/smd.err"
	# JOURNAL_STREAM: journald's stream for stderr (DEV:INODE); "stderr" = smd.err itself
	js=${JOURNAL:-}
	[ "$js" = stderr ] && js=$(stat -c '%d:%i' "$work/smd.err")
	JOURNAL_STREAM=$js NOTIFY_SOCKET="$work/notify" WATCHDOG_USEC=1000000 \
		"$smd" -f -c "$conf" --plane "ibsim:$smnode" --socket "$sock" --state-dir "$work/state" \
		>>"$work/smd.out" 2>>"$work/smd.err" &
	pid=$!
	dmn_pids="$dmn_pids $pid"
	wait_for 30 has_ge READY=1 1 || { cat "$work/smd.err"; echo "FAIL: no READY=1"; exit 1; }
}

# lids FILE: every port GUID -> LID, from ibnetdiscover -p (sorted)
lids() {
	SIM_HOST=$diag ibsim_run ibnetdiscover -p >"$work/ibnd.p" 2>"$work/ibnd.err" ||
		{ cat "$work/ibnd.err"; return 1; }
	awk '$1 == "CA" || $1 == "SW" { print $4, $2; if ($7 == "SW" || $7 == "CA") print $10, $8 }' \
		"$work/ibnd.p" | sort -u >"$1"
	[ -s "$1" ]
}

cat >"$conf" <<EOF
routing_engine: ftree
sweep_interval: 0
mad:
  timeout_ms: 50
  retries: 1
EOF

# ---- READY, STATUS, WATCHDOG, status --json; "<N>" prefixes for journald ----
JOURNAL=stderr start_smd
grep -q "^<5>SMD-0508: smd " "$work/smd.err" || bad "no <5> journald prefix with JOURNAL_STREAM = stderr: $(head -3 "$work/smd.err")"
grep -q "^STATUS=up: 1/1 planes up, 8 switches, 16 CAs" "$work/notify.log" ||
	bad "READY=1 without an 'up' STATUS=: $(cat "$work/notify.log")"
# READY=1 and its STATUS= arrive in one datagram
awk '/^-- /{d++} /^READY=1/{r=d} /^STATUS=/{if (d == r) ok=1} END {exit !ok}' "$work/notify.log" ||
	bad "READY=1 and STATUS= not in one message"
"$smctl" --socket "$sock" --json status >"$work/st.json" || bad "smctl status --json failed"
[ "$(json "$work/st.json" '(r["state"], r["switches"], r["cas"], r["engine"])')" = "('up', 8, 16, 'ftree')" ] ||
	bad "status: $(cat "$work/st.json")"
# pings every 0.5 s: 4 within at most 10 s (generous: the machine is shared)
wait_for 10 has_ge WATCHDOG=1 4 || bad "WATCHDOG=1: $(count WATCHDOG=1) pings"
# the gaps between pings: none shorter than 0.4 s or longer than 1 s (the period)
gaps=$(awk '/^-- /{t=$2} /^WATCHDOG=1/{if (p) print t - p; p=t}' "$work/notify.log" | sort -n | sed -n '1p;$p' | tr '\n' ' ')
echo "watchdog: $(count WATCHDOG=1) pings, shortest/longest gap (ms): $gaps"
set -- $gaps
[ "${1:-0}" -ge 400 ] && [ "${2:-9999}" -lt 1000 ] || bad "watchdog gaps $gaps ms (want 400-999)"

# ---- a pulled link is repaired ----
lids "$work/lids0" || bad "ibnetdiscover failed"
l0lid=$(awk -v g=0x0002c91000000000 '$1 == g { print $2 }' "$work/lids0")
[ -n "$l0lid" ] || bad "leaf 0 has no LID: $(cat "$work/lids0")"
SIM_HOST=$diag ibsim_run ibroute "$l0lid" >"$work/lft0" 2>&1 || bad "ibroute $l0lid: $(cat "$work/lft0")"
# entries "0x0005 005 : (Channel Adapter portguid ...)": DLID, port
n5=$(awk '/^0x[0-9a-f]+ [0-9]+ :/ && $2 + 0 == 5' "$work/lft0" | wc -l)
[ "$n5" -gt 0 ] || bad "leaf 0 sends nothing out of port 5 before the unlink: $(cat "$work/lft0")"
"$smctl" --socket "$sock" --json status >"$work/st.json"
n0=$(json "$work/st.json" 'r["sweeps"]')
ibsim_console "Unlink \"$leaf0\"[5]"
rerouted() {
	"$smctl" --socket "$sock" --json status >"$work/st.json" 2>/dev/null &&
		[ "$(json "$work/st.json" "r['sweeps'] > $n0 and r['state'] != 'sweeping'")" = True ]
}
wait_for 20 rerouted || bad "no sweep after the unlink: $(cat "$work/st.json")"
[ "$(json "$work/st.json" "(r['last_reason'], r['lft_blocks_written'] > 0)")" = "('trap', True)" ] ||
	bad "the sweep after the unlink: $(cat "$work/st.json")"
SIM_HOST=$diag ibsim_run ibroute "$l0lid" >"$work/lft1" 2>&1 || bad "ibroute after: $(cat "$work/lft1")"
n5b=$(awk '/^0x[0-9a-f]+ [0-9]+ :/ && $2 + 0 == 5' "$work/lft1" | wc -l)
nca=$(grep -c "Channel Adapter" "$work/lft1")
echo "leaf 0 (LID $l0lid): $n5 LIDs via port 5 before the unlink, $n5b after; $nca CA LIDs routed"
[ "$n5b" = 0 ] || bad "leaf 0 still routes $n5b LIDs out of the pulled port 5"
[ "$nca" = 16 ] || bad "leaf 0 routes $nca CA LIDs after the unlink (want 16)"
# a path from leaf 0 to leaf 3, hop by hop
src=$(awk '$1 == "0x0002c92000000001" { print $2 }' "$work/lids0")
dst=$(awk '$1 == "0x0002c9200000001f" { print $2 }' "$work/lids0")
SIM_HOST=$diag ibsim_run ibtracert "$src" "$dst" >"$work/trace" 2>&1 || bad "ibtracert $src $dst: $(cat "$work/trace")"
grep -q "To ca.*host00015" "$work/trace" || bad "ibtracert does not reach host00015: $(cat "$work/trace")"
# the hop that leaves leaf 0 ("[OUT] -> switch ... p0-spine...") must not use port 5
awk '/p0-leaf00000/ { getline; print }' "$work/trace" >"$work/hop"
grep -q "^\[[0-9]*\] -> .*p0-spine" "$work/hop" || bad "no hop from leaf 0 to a spine: $(cat "$work/trace")"
grep -q "^\[5\]" "$work/hop" && bad "the path leaves leaf 0 by the pulled port 5: $(cat "$work/trace")"
echo "ibtracert $src -> $dst:"
cat "$work/trace"

# ---- SIGHUP: a broken file is refused, the daemon carries on ----
printf 'routing_engine: ftree\nsweep_interval: 0\nbogus_key: 1\n' >"$conf"
r0=$(count RELOADING=1)
kill -HUP "$pid"
wait_for 10 has_ge RELOADING=1 $((r0 + 1)) || bad "no RELOADING=1 after SIGHUP"
wait_for 10 has_ge READY=1 2 || bad "no READY=1 after the refused reload"
grep -A1 "^RELOADING=1" "$work/notify.log" | grep -q "^MONOTONIC_USEC=[0-9][0-9]*$" ||
	bad "RELOADING=1 without MONOTONIC_USEC: $(cat "$work/notify.log")"
# MONOTONIC_USEC is CLOCK_MONOTONIC in us: within a minute of the receiver's ms clock
python3 - "$work/notify.log" <<'PY' || bad "MONOTONIC_USEC is not CLOCK_MONOTONIC"
import sys
t = None
for line in open(sys.argv[1]):
    if line.startswith('-- '):
        t = int(line[3:])
    elif line.startswith('MONOTONIC_USEC='):
        us = int(line.split('=')[1])
        sys.exit(0 if abs(us / 1000 - t) < 60000 else 1)
sys.exit(1)
PY
grep -q "smd.yaml:3: .*bogus_key" "$work/smd.err" || bad "the broken file's error lacks FILE:LINE: key: $(tail -5 "$work/smd.err")"
grep -q "SMD-0512" "$work/smd.err" || bad "no SMD-0512 for the refused reload"
grep -q "^STATUS=reload failed" "$work/notify.log" || bad "no STATUS= for the refused reload"
"$smctl" --socket "$sock" --json sweep >"$work/sw.json" || bad "sweep after the refused reload failed"
[ "$(json "$work/sw.json" '(r["result"], r["lft_blocks_written"])')" = "('up', 0)" ] ||
	bad "after the refused reload: $(cat "$work/sw.json")"
# a valid file that changes the engine: the next sweep routes with minhop
printf 'routing_engine: minhop\nsweep_interval: 0\nmad:\n  timeout_ms: 50\n  retries: 1\n' >"$conf"
kill -HUP "$pid"
wait_for 10 has_ge READY=1 3 || bad "no READY=1 after the good reload"
grep -q "configuration reloaded" "$work/smd.err" || bad "good reload not logged"
"$smctl" --socket "$sock" --json sweep >/dev/null || bad "sweep after the engine change failed"
"$smctl" --socket "$sock" --json status >"$work/st.json"
[ "$(json "$work/st.json" '(r["state"], r["engine"], r["chain"])')" = "('up', 'minhop', 'minhop')" ] ||
	bad "engine change not applied: $(cat "$work/st.json")"
echo "engine change ftree -> minhop: $(json "$work/st.json" 'r["lft_blocks_written"]') LFT blocks rewritten"

# ---- kill -9 mid-run, restart: every LID kept ----
lids "$work/lids1" || bad "ibnetdiscover failed"
cmp -s "$work/lids0" "$work/lids1" || bad "LIDs changed while running: $(diff "$work/lids0" "$work/lids1")"
"$smctl" --socket "$sock" sweep >/dev/null 2>&1 &
spid=$!
sleep 0.05
kill -KILL "$pid"
wait "$pid" 2>/dev/null
wait "$spid" 2>/dev/null
kill "$npid" 2>/dev/null
wait "$npid" 2>/dev/null
# ibsim cannot see that its client died (its protocol is datagrams, and a
# killed client never detaches), so the node keeps a dead SM and refuses a
# new one: the restarted smd attaches at another host of leaf 0. (With umad
# the kernel releases the port when the process dies.)
smnode=H-0002c92000000004
start_smd
"$smctl" --socket "$sock" --json status >"$work/st.json" || bad "status after restart"
[ "$(json "$work/st.json" '(r["state"], r["lft_blocks_written"])')" = "('up', 0)" ] ||
	bad "restart after kill -9 on a configured fabric: $(cat "$work/st.json")"
lids "$work/lids2" || bad "ibnetdiscover failed"
cmp -s "$work/lids0" "$work/lids2" || bad "LIDs changed by kill -9 + restart: $(diff "$work/lids0" "$work/lids2")"
# kill -9 again, and a fresh simulator (every LID 0): only the state file knows the LIDs
kill -KILL "$pid"
wait "$pid" 2>/dev/null
kill "$npid" 2>/dev/null
wait "$npid" 2>/dev/null
ibsim_stop
IBSIM_CONSOLE=1 scratch_ibsim "$work/ft.net" || { echo "FAIL: ibsim did not restart"; exit 1; }
smnode=H-0002c92000000000
lids "$work/lidsz" && [ "$(awk '$2 != 0' "$work/lidsz" | wc -l)" = 0 ] || bad "the fresh ibsim has LIDs: $(cat "$work/lidsz")"
start_smd
lids "$work/lids3" || bad "ibnetdiscover failed"
cmp -s "$work/lids0" "$work/lids3" || bad "LIDs not restored from the state file: $(diff "$work/lids0" "$work/lids3")"
echo "LIDs: $(wc -l <"$work/lids0") ports; same after kill -9 + restart, and after a fresh fabric + restart"

# ---- a wedged sweep stops the watchdog pings, which resume when it ends ----
# sweep_stall_limit: 1 s (set by a reload); ibsim stopped (SIGSTOP): every SMP
# of the requested sweep waits out its 3 s timeout, so the cycle stalls
printf 'routing_engine: minhop\nsweep_interval: 0\nsweep_stall_limit: 1\nmad:\n  timeout_ms: 3000\n  retries: 1\n' >"$conf"
r0=$(count READY=1)
kill -HUP "$pid"
wait_for 10 has_ge READY=1 $((r0 + 1)) || bad "no READY=1 after the stall-limit reload"
kill -STOP "$IBSIM_PID"
"$smctl" --socket "$sock" sweep >/dev/null 2>&1 &
swpid=$!
wait_for 15 grep -q "SMD-0524" "$work/smd.err" || bad "no SMD-0524 while the sweep is stalled"
w0=$(count WATCHDOG=1)
sleep 2
w1=$(count WATCHDOG=1)
kill -CONT "$IBSIM_PID"
[ "$w1" = "$w0" ] || bad "watchdog pings went on during a stalled sweep ($w0 -> $w1)"
wait_for 30 grep -q "SMD-0525" "$work/smd.err" || bad "no SMD-0525 after the stalled sweep ended"
wait_for 10 has_ge WATCHDOG=1 $((w1 + 2)) || bad "watchdog pings did not resume after the stall"
wait "$swpid" 2>/dev/null
echo "stalled sweep: no WATCHDOG=1 for 2 s while stalled (SMD-0524; $w0 pings before), $(( $(count WATCHDOG=1) - w1 )) since it ended (SMD-0525)"

# ---- SIGTERM: STOPPING=1, exit 0 ----
kill -TERM "$pid"
wait "$pid"
rc=$?
[ $rc = 0 ] || bad "exit $rc after SIGTERM"
wait "$npid"
[ $? = 0 ] || bad "notify receiver saw no STOPPING=1: $(tail -5 "$work/notify.log")"
[ -e "$sock" ] && bad "socket left behind"
if grep -q "runtime error\|Sanitizer" "$work/smd.err"; then
	bad "sanitizer report"
	grep -A5 "runtime error\|Sanitizer" "$work/smd.err" | head -30
fi
# ---- a plane that is down at start: READY=1 all the same, STATUS= says down ----
smnode=H-no-such-node
JOURNAL=1:2 start_smd   # a JOURNAL_STREAM that is not stderr: plain lines
tail -3 "$work/smd.err" | grep -q "^smd: notice SMD-0508: " ||
	bad "JOURNAL_STREAM naming another stream still gets <N> prefixes: $(tail -3 "$work/smd.err")"
grep -q "^STATUS=down: 0/1 planes up" "$work/notify.log" ||
	bad "a fabric down at start: no STATUS=down with READY=1: $(cat "$work/notify.log")"
"$smctl" --socket "$sock" --json status >"$work/st.json"
[ "$(json "$work/st.json" 'r["state"]')" = down ] || bad "down at start: $(cat "$work/st.json")"
kill -TERM "$pid"
wait "$pid" || bad "exit $? after SIGTERM (down at start)"
wait "$npid" || bad "no STOPPING=1 (down at start)"
echo "down at start: READY=1 with $(grep '^STATUS=down' "$work/notify.log" | head -1)"

[ $fail = 0 ] || { echo "--- smd log"; tail -40 "$work/smd.err"; }
[ $fail = 0 ] && echo "daemon_ibsim: all checks passed"
exit $fail
