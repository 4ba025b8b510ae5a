#!/bin/sh
# The daemon (smd -f) and its control socket, end to end on mock fabrics:
# one plane from --backend mock --topology, then two planes from
# `smctl topo gen --planes 2 --split`. Checks status/planes/sweep/version
# replies (parsed with python3), that a second cycle writes no LFT block and
# no PortInfo, that garbage, oversized, partial and too many clients are
# refused while the daemon keeps answering, that SIGHUP with a broken config
# is logged with FILE:LINE and changes nothing, that a good reload applies
# (periodic sweeps start), that sd_notify sends READY=1 with STATUS= after the
# first sweep, STATUS= per sweep and STOPPING=1 (to a stand-in NOTIFY_SOCKET),
# that plane health flags a plane with missing links and a plane that cannot
# be opened, and that SIGTERM stops it promptly with exit 0.
# Under ibsim (ibsim's client protocol, no umad2sim): the transport stays open
# across cycles, and a link unlinked on ibsim's console makes the switches
# trap (128); the idle daemon represses the traps and runs one cycle on its
# own that routes around the link; a following `smctl sweep` writes nothing.
# ibsim stopped: a sweep fails and says so; ibsim restarted: the next sweep
# reopens the port and configures the fresh fabric with the same LIDs.
# Only the PIDs started here are signalled; everything is removed on exit.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
need_python
scratch daemon
cleanup_hook() { exec 3>&- 2>/dev/null; }

# ask SOCKET BYTES...: send raw bytes (python escapes) on one connection, print the reply
ask_raw() {
	python3 - "$1" "$2" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode('latin-1').decode('unicode_escape').encode('latin-1'))
data = b''
while not data.endswith(b'\n'):
	try:
		d = s.recv(65536)
	except ConnectionResetError:
		break
	if not d:
		break
	data += d
print(data.decode('utf-8', 'replace').strip())
EOF
}

# stop: SIGTERM, must exit 0 within 3 s and remove its socket
stop() {
	kill -TERM "$pid"
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 30 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$pid" 2>/dev/null; then
		bad "$1: still running 3 s after SIGTERM"
		return
	fi
	wait "$pid"
	rc=$?
	[ $rc = 0 ] || bad "$1: exit $rc after SIGTERM"
	[ -e "$sock" ] && bad "$1: socket $sock left behind"
	grep -q "stopped" "$work/$1.err" || bad "$1: no 'stopped' in the log"
	# under --enable-sanitizers: any report fails the test
	sanitizer_check "$1" "$work/$1.err"
}

"$smctl" topo gen fat-tree --radix 8 --hosts 32 --no-lids -o "$work/ft" >/dev/null || { echo "FAIL: generator"; exit 1; }
"$smctl" topo gen fat-tree --radix 8 --hosts 16 --planes 2 --split --no-lids -o "$work/mp" >/dev/null ||
	{ echo "FAIL: generator (planes)"; exit 1; }
# the same planes with 2 of plane 1's 16 switch links removed
"$smctl" topo gen fat-tree --radix 8 --hosts 16 --planes 2 --split --no-lids --remove-links 0.1 --fault-plane 1 \
	-o "$work/mpf" >/dev/null || { echo "FAIL: generator (faulty plane)"; exit 1; }

# ---- usage and no daemon ----
sock="$work/none.sock"
"$smctl" --socket "$sock" status >/dev/null 2>"$work/nod.err"
[ $? = 1 ] || bad "smctl status without a daemon: want exit 1"
grep -q "$sock" "$work/nod.err" || bad "smctl without a daemon does not name the socket: $(cat "$work/nod.err")"
"$smctl" --socket "$sock" status --bogus >/dev/null 2>&1
[ $? = 2 ] || bad "smctl status --bogus: want exit 2"

# ---- one plane ----
sock="$work/smd.sock"
conf="$work/smd.yaml"
cat >"$conf" <<EOF
# daemon test
sweep_interval: 0
log_level: notice
EOF
# a stand-in for systemd's notification socket: records every datagram until STOPPING=1
python3 - "$work/notify" "$work/notify.log" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(60)
with open(sys.argv[2], 'w') as log:
	while True:
		try:
			m = s.recv(4096).decode()
		except socket.timeout:
			break
		log.write(m.replace('\n', '|') + '\n')
		log.flush()
		if 'STOPPING=1' in m:
			break
PY
npid=$!
dmn_pids="$dmn_pids $npid"
i=0
while [ ! -S "$work/notify" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
NOTIFY_SOCKET="$work/notify" dmn_start one --backend mock --topology "$work/ft" -c "$conf" --socket "$sock" \
	--state-dir "$work/state1" || { echo "FAIL: smd -f did not come up"; exit 1; }
unset NOTIFY_SOCKET
head -1 "$work/notify.log" | grep -q "^READY=1|STATUS=up: 1/1 planes up, 12 switches, 32 CAs, last sweep" ||
	bad "first notification is not READY=1 with STATUS: $(cat "$work/notify.log")"
mode=$(stat -c %a "$sock")
[ "$mode" = 660 ] || bad "socket mode $mode, want 660"
for k in state planes switches cas lids sweeps engine; do
	[ "$(json "$work/st.json" "'$k' in r")" = True ] || bad "status lacks '$k'"
done
[ "$(json "$work/st.json" '(r["ok"], r["version"], r["state"], r["planes"], r["planes_up"], r["switches"], r["cas"], r["lids"], r["sweeps"])')" = \
	"(True, 1, 'up', 1, 1, 12, 32, 44, 1)" ] || bad "status after the first sweep: $(cat "$work/st.json")"
[ "$(json "$work/st.json" 'r["lft_blocks_written"] > 0 and r["engine"] == "ftree" and r["last_reason"] == "start"')" = True ] ||
	bad "first sweep wrote no LFT block or engine is not ftree: $(cat "$work/st.json")"
[ -s "$work/state1/plane-lids" ] || bad "no plane-lids file in the state dir"
"$smctl" --socket "$sock" status >"$work/st.txt" || bad "smctl status (text) failed"
grep -q "^state *up" "$work/st.txt" || bad "text status: $(cat "$work/st.txt")"

"$smctl" --socket "$sock" --json sweep --heavy >"$work/sw.json" || bad "smctl sweep failed"
[ "$(json "$work/sw.json" '(r["ok"], r["sweeps"], r["result"], r["lft_blocks_written"], r["portinfo_sets"])')" = \
	"(True, 2, 'up', 0, 0)" ] || bad "second sweep is not idempotent: $(cat "$work/sw.json")"
"$smctl" --socket "$sock" --json status >"$work/st.json"
[ "$(json "$work/st.json" '(r["sweeps"], r["last_reason"])')" = "(2, 'request')" ] ||
	bad "sweeps did not reach 2 by request: $(cat "$work/st.json")"
"$smctl" --socket "$sock" sweep --heavy --no-wait --json >"$work/sw.json" || bad "sweep --no-wait failed"
[ "$(json "$work/sw.json" 'r["queued"]')" = True ] || bad "sweep --no-wait: $(cat "$work/sw.json")"
"$smctl" --socket "$sock" sweep --heavy >"$work/sw.txt" || bad "text sweep failed"
grep -q "0 LFT blocks and 0 PortInfo written" "$work/sw.txt" || bad "text sweep: $(cat "$work/sw.txt")"
"$smctl" --socket "$sock" --json version >"$work/v.json" || bad "version failed"
[ "$(json "$work/v.json" 'r["protocol"]')" = 1 ] || bad "version: $(cat "$work/v.json")"
"$smctl" --socket "$sock" --json planes >"$work/pl.json" || bad "planes failed"
[ "$(json "$work/pl.json" '[(p["state"], p["cas"], p["lft_blocks_written"]) for p in r["planes"]]')" = \
	"[('up', 32, 0)]" ] || bad "planes: $(cat "$work/pl.json")"

# ---- hostile clients ----
r=$(ask_raw "$sock" '\x00\xff\x01garbage\n')
case $r in *'"ok":false'*'bad JSON'*) ;; *) bad "garbage: '$r'" ;; esac
r=$(ask_raw "$sock" '{"cmd":"launch-missiles"}\n')
case $r in *'unknown command'*) ;; *) bad "unknown command: '$r'" ;; esac
r=$(ask_raw "$sock" '{"version":7,"cmd":"status"}\n')
case $r in *'unsupported protocol version'*) ;; *) bad "version 7: '$r'" ;; esac
big=$(python3 -c 'print("{\"cmd\":\"status\",\"x\":\"" + "a" * 9000 + "\"}")')
r=$(ask_raw "$sock" "$big")
case $r in *'longer than 4096'*) ;; *) bad "oversized: '$(echo "$r" | cut -c1-200)'" ;; esac
# a slow client holding a partial request, plus more clients than the limit, while status still answers
python3 - "$sock" "$smctl" >"$work/many.out" 2>&1 <<'EOF' || bad "many/slow clients: $(cat "$work/many.out")"
import socket, subprocess, sys, time
path, smctl = sys.argv[1], sys.argv[2]
conns = []
slow = socket.socket(socket.AF_UNIX); slow.connect(path); slow.sendall(b'{"cmd":"sta')
for i in range(40):
	s = socket.socket(socket.AF_UNIX); s.connect(path); conns.append(s)
time.sleep(0.3)
refused = 0
for s in conns:
	s.setblocking(False)
	try:
		d = s.recv(4096)
		if b'too many clients' in d:
			refused += 1
	except BlockingIOError:
		pass
if refused < 8:
	print("only %d connections refused" % refused); sys.exit(1)
for s in conns:
	s.close()
time.sleep(0.2)
t0 = time.time()
out = subprocess.run([smctl, '--socket', path, '--json', 'status'], capture_output=True, timeout=10)
if out.returncode != 0:
	print("status failed while a slow client holds a partial request", out.stderr); sys.exit(1)
print("status with a slow client: %.3f s" % (time.time() - t0))
slow.close()
EOF
kill -0 "$pid" 2>/dev/null || bad "the daemon died from hostile clients"

# ---- SIGHUP: broken config is refused with FILE:LINE, good config applies ----
cat >"$conf" <<EOF
# daemon test, broken
sweep_interval: 0
sweep_interval_typo: 3
EOF
kill -HUP "$pid"
i=0
while ! grep -q "smd.yaml:3" "$work/one.err" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
grep -q "smd.yaml:3" "$work/one.err" || bad "broken config on SIGHUP not logged with FILE:LINE: $(tail -3 "$work/one.err")"
grep -q "running configuration is kept" "$work/one.err" || bad "no 'kept' message after a bad reload"
"$smctl" --socket "$sock" --json status >"$work/st.json" || bad "no answer after a bad reload"
[ "$(json "$work/st.json" '(r["state"], r["sweep_interval"])')" = "('up', 0)" ] ||
	bad "status after a bad reload: $(cat "$work/st.json")"
n0=$(json "$work/st.json" 'r["sweeps"]')
cat >"$conf" <<EOF
sweep_interval: 1
EOF
kill -HUP "$pid"
i=0
while [ $i -lt 60 ]; do
	"$smctl" --socket "$sock" --json status >"$work/st.json" 2>/dev/null
	[ "$(json "$work/st.json" "r['sweeps'] >= $n0 + 2")" = True ] && break
	sleep 0.1
	i=$((i + 1))
done
[ "$(json "$work/st.json" "(r['sweeps'] >= $n0 + 2, r['sweep_interval'], r['last_reason'])")" = "(True, 1, 'interval')" ] ||
	bad "after reloading sweep_interval: 1 no periodic sweeps: $(cat "$work/st.json")"
grep -q "configuration reloaded" "$work/one.err" || bad "good reload not logged"

# a second daemon on the same socket refuses to start
"$smd" -f --backend mock --topology "$work/ft" --socket "$sock" --state-dir "$work/state1b" \
	>/dev/null 2>"$work/two.err" &
p2=$!
dmn_pids="$dmn_pids $p2"
wait "$p2"
[ $? = 1 ] || bad "a second smd on a live socket did not exit 1"
grep -q "another smd" "$work/two.err" || bad "second smd: $(cat "$work/two.err")"
"$smctl" --socket "$sock" status >/dev/null || bad "the first daemon lost its socket to the second"
stop one
wait "$npid"
grep -q "^STOPPING=1" "$work/notify.log" || bad "no STOPPING=1 notification: $(cat "$work/notify.log")"
[ "$(grep -c "^STATUS=" "$work/notify.log")" -ge 4 ] || bad "no STATUS= per sweep: $(cat "$work/notify.log")"

# ---- two planes ----
# no periodic sweeps from here on: the sweep counts checked below are exact
printf 'sweep_interval: 0\n' >"$work/quiet.conf"
sock="$work/mp.sock"
dmn_start two -c "$work/quiet.conf" --plane "mock:$work/mp.0" --plane "mock:$work/mp.1" --socket "$sock" --state-dir "$work/state2" ||
	{ echo "FAIL: 2-plane smd -f did not come up"; exit 1; }
[ "$(json "$work/st.json" '(r["state"], r["planes"], r["planes_up"], r["switches"], r["cas"])')" = \
	"('up', 2, 2, 16, 32)" ] || bad "2-plane status: $(cat "$work/st.json")"
"$smctl" --socket "$sock" --json sweep --heavy >"$work/sw.json" || bad "2-plane sweep failed"
[ "$(json "$work/sw.json" '(r["planes_up"], r["failed"], r["lft_blocks_written"], r["portinfo_sets"])')" = \
	"(2, 0, 0, 0)" ] || bad "2-plane second sweep: $(cat "$work/sw.json")"
"$smctl" --socket "$sock" --json planes >"$work/pl.json" || bad "2-plane planes failed"
[ "$(json "$work/pl.json" '[(p["index"], p["state"], p["cas"], p["cycles_up"]) for p in r["planes"]]')" = \
	"[(0, 'up', 16, 2), (1, 'up', 16, 2)]" ] || bad "2-plane planes: $(cat "$work/pl.json")"
[ "$(json "$work/pl.json" 'r["plane_lids"]["conflicts"]')" = 0 ] || bad "LID conflicts: $(cat "$work/pl.json")"
[ "$(json "$work/pl.json" '(r["health"]["planes"], r["health"]["hosts"], r["health"]["asymmetric"], [p["missing_links"] for p in r["health"]["per_plane"]])')" = \
	"(2, 16, False, [0, 0])" ] || bad "2-plane health: $(cat "$work/pl.json")"
"$smctl" --socket "$sock" planes | grep -q "mp.1" || bad "text planes lacks plane 1"
stop two

# ---- a plane with links missing and a plane that cannot be opened: degraded, asymmetric, answering ----
sock="$work/deg.sock"
dmn_start deg -c "$work/quiet.conf" --plane "mock:$work/mp.0" --plane "mock:$work/mpf.1" --plane "mock:$work/missing" --socket "$sock" \
	--state-dir "$work/state3" || { echo "FAIL: degraded smd -f did not come up"; exit 1; }
[ "$(json "$work/st.json" '(r["state"], r["planes_up"])')" = "('degraded', 2)" ] ||
	bad "degraded status: $(cat "$work/st.json")"
"$smctl" --socket "$sock" --json planes >"$work/pl.json"
[ "$(json "$work/pl.json" 'r["planes"][2]["state"] == "failed" and "missing" in r["planes"][2]["error"]')" = True ] ||
	bad "failed plane not reported: $(cat "$work/pl.json")"
[ "$(json "$work/pl.json" '(r["health"]["asymmetric"], [(p["nics"], p["missing_links"]) for p in r["health"]["per_plane"]])')" = \
	"(True, [(16, 0), (16, 2), (0, 16)])" ] || bad "asymmetric health: $(cat "$work/pl.json")"
"$smctl" --socket "$sock" planes | grep -q ASYMMETRIC || bad "text planes does not say ASYMMETRIC"
"$smctl" --socket "$sock" sweep --heavy >/dev/null 2>&1
[ $? = 1 ] || bad "a sweep with a failed plane should exit 1"
stop deg

# ---- under ibsim: the transport stays open across cycles; a link taken down is rerouted after its traps ----
command -v ibsim >/dev/null || { echo "FAIL: ibsim not found (Debian package ibsim-utils)"; exit 1; }
"$smctl" topo gen fat-tree --radix 8 --hosts 16 --format ibsim -o "$work/ft.net" >/dev/null ||
	{ echo "FAIL: generator (ibsim)"; exit 1; }
mkdir "$work/ib"
mkfifo "$work/ib/console"
IBSIM_SOCKNAME="smd-daemon-$$-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
export IBSIM_SOCKNAME
# ibsim_up LOG: start ibsim with its console on fd 3, wait until clients can attach
ibsim_up() {
	(cd "$work/ib" && exec ibsim -s "$work/ft.net" <console >"$1" 2>&1) &
	ibpid=$!
	dmn_pids="$dmn_pids $ibpid"
	exec 3>"$work/ib/console"   # ibsim's console, open while it runs
	i=0
	until grep -q " @$IBSIM_SOCKNAME:ctl@*\$" /proc/net/unix 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 300 ] && { cat "$work/ib/$1"; echo "FAIL: ibsim did not start"; exit 1; }
		sleep 0.1
	done
}
ibsim_up ibsim.log
sock="$work/ib.sock"
# no periodic sweeps (the sweep counts below are exact); short MAD timeouts for the sweep without ibsim
printf 'sweep_interval: 0\nmad:\n  timeout_ms: 50\n  retries: 1\n' >"$work/ib.conf"
dmn_start ib -c "$work/ib.conf" --plane ibsim:H-0002c92000000000 --socket "$sock" --state-dir "$work/state4" ||
	{ echo "FAIL: smd -f under ibsim did not come up"; exit 1; }
[ "$(json "$work/st.json" '(r["state"], r["switches"], r["cas"], r["lft_blocks_written"] > 0)')" = "('up', 8, 16, True)" ] ||
	bad "ibsim: first sweep: $(cat "$work/st.json")"
"$smctl" --socket "$sock" --json sweep --heavy >"$work/sw.json" || bad "ibsim: second sweep failed"
[ "$(json "$work/sw.json" '(r["result"], r["lft_blocks_written"], r["portinfo_sets"])')" = "('up', 0, 0)" ] ||
	bad "ibsim: second sweep is not idempotent: $(cat "$work/sw.json")"
"$smctl" --socket "$sock" --json planes >"$work/pl.json"
links0=$(json "$work/pl.json" 'r["planes"][0]["link_ports"]')
n0=$(json "$work/sw.json" 'r["sweeps"]')
echo 'Unlink "S-0002c91000000000"[5]' >&3   # leaf 0's first uplink
# both ends trap 128 to the SM: the idle daemon represses them and sweeps by itself
i=0
while [ $i -lt 100 ]; do
	"$smctl" --socket "$sock" --json status >"$work/st.json" 2>/dev/null
	[ "$(json "$work/st.json" "r['sweeps'] > $n0 and r['state'] != 'sweeping'")" = True ] && break
	sleep 0.1
	i=$((i + 1))
done
[ "$(json "$work/st.json" "(r['sweeps'], r['last_reason'], r['traps'] >= 1, 'trap 128' in r['last_trap'], r['lft_blocks_written'] > 0)")" = \
	"($((n0 + 1)), 'trap', True, True, True)" ] || bad "ibsim: no trap-driven reroute after an unlink: $(cat "$work/st.json")"
"$smctl" --socket "$sock" --json planes >"$work/pl.json"
[ "$(json "$work/pl.json" "(r['planes'][0]['link_ports'], r['planes'][0]['active_ports'])")" = "($((links0 - 2)), $((links0 - 2)))" ] ||
	bad "ibsim: link ports after the unlink (had $links0): $(cat "$work/pl.json")"
"$smctl" --socket "$sock" --json sweep --heavy >"$work/sw.json"
[ "$(json "$work/sw.json" '(r["result"], r["lft_blocks_written"])')" = "('up', 0)" ] ||
	bad "ibsim: the sweep after the reroute is not idempotent: $(cat "$work/sw.json")"
# ibsim goes away: the sweep fails (exit 1), the plane is reported; ibsim comes back
# (unconfigured): the next sweep reopens the port and brings it up with the same LIDs
smlid=$(json "$work/pl.json" 'r["planes"][0]["sm_lid"]')
exec 3>&-
kill "$ibpid" 2>/dev/null
wait "$ibpid" 2>/dev/null
"$smctl" --socket "$sock" --json sweep --heavy >"$work/sw.json"
[ $? = 1 ] || bad "ibsim: a sweep without ibsim did not exit 1"
[ "$(json "$work/sw.json" '(r["result"], r["failed"])')" = "('down', 1)" ] ||
	bad "ibsim: sweep without ibsim: $(cat "$work/sw.json")"
ibsim_up ibsim2.log
"$smctl" --socket "$sock" --json sweep --heavy >"$work/sw.json" || bad "ibsim: sweep after ibsim came back failed"
"$smctl" --socket "$sock" --json planes >"$work/pl.json"
[ "$(json "$work/sw.json" '(r["result"], r["lft_blocks_written"] > 0)')" = "('up', True)" ] &&
	[ "$(json "$work/pl.json" '(r["planes"][0]["state"], r["planes"][0]["sm_lid"], r["planes"][0]["cycles_failed"])')" = "('up', $smlid, 1)" ] ||
	bad "ibsim: after ibsim came back (SM LID was $smlid): $(cat "$work/sw.json") $(cat "$work/pl.json")"
stop ib
exec 3>&-
kill "$ibpid" 2>/dev/null
wait "$ibpid" 2>/dev/null

[ $fail = 0 ] && echo "daemon: all checks passed"
exit $fail
