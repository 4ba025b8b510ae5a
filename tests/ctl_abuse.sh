#!/bin/sh
# A control plane nobody can freeze, and nothing leaks or is forged
# (issue 18). smd -f on a mock fabric with socket_group: users; a member of
# the group is uid 4242 with the supplementary group users (setpriv). While
# a root client asks `status` every 20 ms (its latencies give the p99 printed
# at the end, which must stay under 1 s), hostile requests come in:
#  - profile path naming a FIFO (root, the older path form): refused at once
#    ("not a regular file"), never blocking in open();
#  - a 400 KB YAML profile nested 100,000 deep (a member, as content):
#    refused within 2 s with "nested deeper", the loop never stalls;
#  - a 4 MiB valid profile (a member): checked off the loop;
#  - one member holding 40 idle connections: at most 8 are accepted (the
#    others get "too many clients of uid 4242"), root is still served;
#  - 24 root clients connecting, asking and closing in a tight loop for
#    2 s: no "too many clients" at all (a closed connection frees its slot
#    before the next accept);
#  - profile path naming a root-only file (a member): refused, and neither
#    the reply nor the log quotes the file; the path form from root is
#    accepted, its errors never quote the file either;
#  - engine set with a newline and an escape sequence in the name: the log
#    gets one escaped line, no forged one, no raw control byte.
# Needs root and setpriv (skips otherwise).
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
need_python
[ "$(id -u)" = 0 ] || skip "needs root to run clients as another user"
command -v setpriv >/dev/null || skip "setpriv (util-linux) not found"
getent group users >/dev/null || skip "no group users"

scratch abuse
chmod 0755 "$work"
sock="$work/smd.sock"
printf 'sweep_interval: 0\nsocket_group: users\n' >"$work/smd.yaml"
"$smctl" topo gen fat-tree --hosts 16 --radix 8 -o "$work/f" >/dev/null || { echo "FAIL: generator"; exit 1; }
dmn_start d -c "$work/smd.yaml" --backend mock --topology "$work/f" --socket "$sock" --state-dir "$work/st" ||
	exit 1
log="$work/d.err"
mkfifo "$work/fifo"
printf '"host00000 mlx5_0" "host00001 mlx5_0" SECRET-WEIGHT-42\n' >"$work/secret"
chmod 0600 "$work/secret"
# the member's python: one it may run (a root-only pyenv shim would not do)
mpy=/usr/bin/python3
[ -x "$mpy" ] || skip "no /usr/bin/python3 for the unprivileged clients"
as_member() { setpriv --reuid=4242 --regid=4242 --groups=users "$@"; }

cat >"$work/lib.py" <<'EOF'
import json, socket, time
def ask(path, req, timeout=10):
	s = socket.socket(socket.AF_UNIX); s.settimeout(timeout); s.connect(path)
	s.sendall((req if isinstance(req, bytes) else json.dumps(req, separators=(",", ":")).encode()) + b"\n")
	d = b''
	while not d.endswith(b'\n'):
		c = s.recv(65536)
		if not c:
			break
		d += c
	s.close()
	return d.decode(errors='replace')
EOF

# the root prober: status every 20 ms until $work/stop appears; latencies (ms) to $work/lat
python3 - "$sock" "$work" >"$work/probe.out" 2>&1 <<'EOF' &
import sys, time, os
sys.path.insert(0, sys.argv[2])
from lib import ask
path, w = sys.argv[1], sys.argv[2]
lat, failed = [], 0
while not os.path.exists(w + "/stop"):
	t0 = time.monotonic()
	try:
		r = ask(path, {"version": 1, "cmd": "status"}, timeout=5)
		if '"ok":true' not in r.replace(' ', ''):
			failed += 1
	except Exception as e:
		failed += 1
	lat.append((time.monotonic() - t0) * 1000)
	time.sleep(0.02)
open(w + "/lat", "w").write("\n".join("%.3f" % x for x in lat) + "\n")
print("failed", failed)
EOF
probe=$!

# ---- a FIFO named by root (the older path form): refused before open() could block ----
r=$(timeout 5 python3 - "$sock" "$work/fifo" <<'EOF'
import sys; sys.path.insert(0, sys.argv[2].rsplit('/', 1)[0])
from lib import ask
print(ask(sys.argv[1], {"version": 1, "cmd": "profile", "path": sys.argv[2]}, timeout=4))
EOF
) || bad "profile path of a FIFO: no reply within 4 s (the loop is blocked in open())"
case $r in *'not a regular file'*) ;; *) bad "FIFO: '$r'" ;; esac

# ---- 100,000 levels of nesting in 400 KB, from a member: refused quickly ----
as_member "$mpy" - "$sock" "$work" >"$work/deep.out" 2>&1 <<'EOF' || bad "deep nesting: $(cat "$work/deep.out")"
import sys, time; sys.path.insert(0, sys.argv[2])
from lib import ask
text = "flows: " + "[\n" * 100000 + "]\n" * 100000
t0 = time.monotonic()
r = ask(sys.argv[1], {"version": 1, "cmd": "profile", "name": "deep.yaml", "content": text})
dt = time.monotonic() - t0
if "nested deeper" not in r or dt > 2:
	print("%.2f s: %s" % (dt, r[:300])); sys.exit(1)
print("deep nesting refused in %.3f s" % dt)
EOF

# ---- a 4 MiB profile from a member: parsed off the loop (the prober keeps its pace) ----
as_member "$mpy" - "$sock" "$work" >"$work/big.out" 2>&1 <<'EOF' || bad "big profile: $(cat "$work/big.out")"
import sys, time; sys.path.insert(0, sys.argv[2])
from lib import ask
line = '"host00000 mlx5_0" "host00001 mlx5_0" 1\n'
text = line * ((4 << 20) // len(line))
t0 = time.monotonic()
r = ask(sys.argv[1], {"version": 1, "cmd": "profile", "name": "big", "content": text}, timeout=60)
if '"ok":true' not in r.replace(' ', ''):
	print(r[:300]); sys.exit(1)
print("4 MiB profile applied in %.3f s" % (time.monotonic() - t0))
EOF

# ---- one member holds 40 idle connections: 8 accepted, root still served ----
as_member "$mpy" - "$sock" "$work" "$smctl" >"$work/hold.out" 2>&1 <<'EOF' &
import socket, sys, time, os
conns, refused = [], 0
for i in range(40):
	s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); conns.append(s)
time.sleep(0.5)
for s in conns:
	s.setblocking(False)
	try:
		if b'too many clients of uid 4242' in s.recv(4096):
			refused += 1
	except BlockingIOError:
		pass
print("refused", refused, flush=True)
while not os.path.exists(sys.argv[2] + "/stop-hold"):
	time.sleep(0.05)
EOF
holder=$!
i=0
while ! grep -q refused "$work/hold.out" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
"$smctl" --socket "$sock" status >/dev/null 2>"$work/e" || bad "root locked out by a member's 40 connections: $(cat "$work/e")"
as_member "$smctl" --socket "$sock" status >/dev/null 2>"$work/e" &&
	bad "the member's ninth connection was served"
touch "$work/stop-hold"
wait "$holder"
grep -q "refused 32" "$work/hold.out" || bad "member's connections: $(cat "$work/hold.out"), want 32 refused"

# ---- 24 root clients reconnecting for 2 s: a closed connection frees its slot at once ----
python3 - "$sock" "$work" >"$work/flood.out" 2>&1 <<'EOF' || bad "flood: $(cat "$work/flood.out")"
import sys, threading, time; sys.path.insert(0, sys.argv[2])
from lib import ask
n, refused, errors = [0], [0], [0]
lock = threading.Lock()
def run():
	end = time.monotonic() + 2
	while time.monotonic() < end:
		try:
			r = ask(sys.argv[1], {"version": 1, "cmd": "version"}, timeout=5)
		except Exception:
			r = ''
		with lock:
			n[0] += 1
			if 'too many clients' in r:
				refused[0] += 1
			elif '"ok":true' not in r.replace(' ', ''):
				errors[0] += 1
t = [threading.Thread(target=run) for _ in range(24)]
[x.start() for x in t]; [x.join() for x in t]
print("flood: %d requests, %d 'too many clients', %d other failures" % (n[0], refused[0], errors[0]))
sys.exit(1 if refused[0] or errors[0] else 0)
EOF

# ---- a root-only file named by a member: refused, never quoted ----
r=$(as_member "$mpy" - "$sock" "$work/secret" <<'EOF'
import sys; sys.path.insert(0, sys.argv[2].rsplit('/', 1)[0])
from lib import ask
print(ask(sys.argv[1], {"version": 1, "cmd": "profile", "path": sys.argv[2]}))
EOF
)
case $r in *'"ok": *false'*|*'"ok":false'*) ;; *) bad "a member's path request: '$r'" ;; esac
case $r in *SECRET*) bad "the reply quotes a root-only file: $r" ;; esac
r=$(python3 - "$sock" "$work/secret" <<'EOF'
import sys; sys.path.insert(0, sys.argv[2].rsplit('/', 1)[0])
from lib import ask
print(ask(sys.argv[1], {"version": 1, "cmd": "profile", "path": sys.argv[2]}))
EOF
)
case $r in *"secret:1:"*) ;; *) bad "root's path request of a bad file: '$r' (want FILE:LINE)" ;; esac
case $r in *SECRET*) bad "the reply quotes the file named by path: $r" ;; esac
grep -q SECRET "$log" && bad "the log quotes the secret file: $(grep SECRET "$log")"

# ---- a forged log line through an engine name ----
python3 - "$sock" "$work" <<'EOF' >/dev/null
import sys; sys.path.insert(0, sys.argv[2])
from lib import ask
ask(sys.argv[1], {"version": 1, "cmd": "engine", "chain": "x\nsmd: notice SMD-0522: FORGED\x1b[2J"})
EOF
grep -q "^smd: notice SMD-0522: FORGED" "$log" && bad "a peer forged a log line: $(grep -n FORGED "$log")"
grep -q "FORGED" "$log" || bad "the engine request was not logged at all"
LC_ALL=C grep -q "$(printf '\033')" "$log" && bad "a raw escape byte reached the log"

touch "$work/stop"
wait "$probe"
grep -q "failed 0" "$work/probe.out" || bad "status failed under abuse: $(cat "$work/probe.out")"
p99=$(sort -n "$work/lat" | awk '{ a[NR] = $1 } END { i = int(NR * 0.99); if (i < 1) i = 1; printf "%.1f", a[i] }')
max=$(sort -n "$work/lat" | tail -1)
n=$(wc -l <"$work/lat")
awk -v p="$p99" 'BEGIN { exit !(p < 1000) }' || bad "status p99 under abuse ${p99} ms"
kill -0 "$pid" 2>/dev/null || bad "the daemon died"
dmn_stop || bad "daemon exit status $?"
sanitizer_check "" "$log"
cat "$work/deep.out" "$work/big.out" "$work/flood.out"
echo "status under abuse: $n requests, p99 ${p99} ms, max ${max} ms"
[ $fail = 0 ] && echo "PASS: control plane under abuse (FIFO, deep nesting, 4 MiB profile, connection hold and flood, secret file, forged log line)"
exit $fail
