#!/bin/sh
# Issue 16, metrics over HTTP (smd.yaml metrics_listen, smd/ctl/http.c):
#  - --check-config refuses a bad address with FILE:LINE (a name, no port,
#    a port out of range, IPv6 without brackets) and takes good ones;
#  - a mock daemon with metrics_listen 127.0.0.1:0 logs the bound address
#    (SMD-0545); GET /metrics answers 200, Content-Type text/plain
#    version=0.0.4, and the same text as `smctl metrics` (times aside);
#    HEAD answers no body, POST 405, another path 404;
#  - the text is consistent: every family has HELP and TYPE before its
#    samples, names are smd_*, counters end in _total, every sample of a
#    per-plane family has plane="planeN" of smd_plane_info's names,
#    smd_build_info{version=...} 1, the SMP-loss families have an attribute
#    label and lost = retried + timed out; `promtool check metrics` accepts
#    it when promtool is installed (PROMTOOL=path, or on PATH: Debian's
#    prometheus package, 96 MB with a service of its own, is not a test
#    dependency);
#  - untrusted peers: a 100 KB request line gets an error status (or the
#    connection closed), a request with a body is refused, more idle
#    connections from one address than the limit are refused, the idle
#    ones (slowloris) are closed after the timeout, and through all this
#    the control socket answers and the daemon stays up;
#  - a reload moves the listener (old port closed, new one serves), a
#    reload without the key stops it, an address in use is logged
#    (SMD-0546) and the SM runs on; SIGTERM with a connection open exits 0;
#  - the daemon part again under valgrind (no invalid access, no leak).
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
need_python
scratch metrics

# ---- check-config ----
conf="$work/smd.yaml"
check_bad() {   # VALUE MESSAGE-PART
	printf 'sweep_interval: 0\nmetrics_listen: %s\n' "$1" >"$conf"
	out=$("$smd" --check-config -c "$conf" 2>&1)
	[ $? = 1 ] || bad "--check-config took metrics_listen $1"
	echo "$out" | grep -qF "$conf:2: metrics_listen: " && echo "$out" | grep -qF "$2" ||
		bad "--check-config of metrics_listen $1: $out"
}
check_bad '"localhost:9684"' "'localhost' is not an IPv4 address (no names"
check_bad '"127.0.0.1"' "expected ADDRESS:PORT"
check_bad '"127.0.0.1:70000"' "the port must be a number 0-65535"
check_bad '"127.0.0.1:"' "the port must be a number 0-65535"
check_bad '"::1:9684"' "an IPv6 address is written [ADDRESS]:PORT"
check_bad '":9684"' "write the address to listen on"
check_bad '"[::1]"' "an IPv6 address is written [ADDRESS]:PORT"
for good in '"127.0.0.1:9684"' '"0.0.0.0:0"' '"[::1]:9684"' '"[::]:9684"'; do
	printf 'sweep_interval: 0\nmetrics_listen: %s\n' "$good" >"$conf"
	out=$("$smd" --check-config -c "$conf" 2>&1) || bad "--check-config refused metrics_listen $good: $out"
done

# ---- a daemon ----
mock_ft
sock="$work/smd.sock"
printf 'sweep_interval: 0\nmetrics_listen: "127.0.0.1:0"\n' >"$conf"
dmn_start one --backend mock --topology "$work/ft" -c "$conf" --socket "$sock" --state-dir "$work/state" ||
	{ echo "FAIL: smd -f did not come up"; exit 1; }
bound() {   # the port of the last SMD-0545 line
	grep "SMD-0545" "$work/one.err" | tail -1 | sed -n 's|.*http://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p'
}
port=$(bound)
[ -n "$port" ] || { bad "no SMD-0545 line naming the address: $(cat "$work/one.err")"; exit 1; }

"$smctl" --socket "$sock" metrics >"$work/smctl.txt" || bad "smctl metrics failed"
PROM=${PROMTOOL:-$(command -v promtool 2>/dev/null)}
python3 - "$port" "$work" "$sock" "$smctl" "${PROM:-}" <<'PY' || bad "HTTP checks (above)"
import http.client, os, re, socket, subprocess, sys, time
port, work, sock, smctl, prom = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
fails = []
def bad(msg):
    fails.append(msg)
    print('FAIL: ' + msg)

def get(path, method='GET', body=None):
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
    c.request(method, path, body=body)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, r.getheader('Content-Type'), data

def ctl_alive():
    r = subprocess.run([smctl, '--socket', sock, 'status'], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=20)
    return r.returncode == 0

st, ctype, body = get('/metrics')
text = body.decode()
if st != 200 or ctype != 'text/plain; version=0.0.4; charset=utf-8':
    bad('GET /metrics: %s %s' % (st, ctype))
open(os.path.join(work, 'http.txt'), 'w').write(text)

# the same text as smctl metrics, times aside
vol = re.compile(r'^(smd_uptime_seconds|smd_last_sweep_age_seconds) .*$', re.M)
ctl = open(os.path.join(work, 'smctl.txt')).read()
if vol.sub(r'\1 T', ctl) != vol.sub(r'\1 T', text):
    bad('GET /metrics is not the text of smctl metrics')

# consistency of names and labels
fam, helps, types, samples = None, {}, {}, {}
for line in text.splitlines():
    m = re.match(r'# (HELP|TYPE) (\S+) (.*)$', line)
    if m:
        (helps if m.group(1) == 'HELP' else types)[m.group(2)] = m.group(3)
        continue
    m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$', line)
    if not m:
        bad('not an exposition line: %r' % line)
        continue
    name, labels = m.group(1), dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(3) or ''))
    if name not in helps or name not in types:
        bad('%s: a sample before its HELP and TYPE' % name)
    samples.setdefault(name, []).append((labels, float(m.group(4))))
planes = [l['plane'] for l, _ in samples.get('smd_plane_info', [])]
if planes != ['plane0']:
    bad('smd_plane_info names %s, want [plane0]' % planes)
for name, t in types.items():
    if not name.startswith('smd_'):
        bad('%s: not an smd_ name' % name)
    if (t == 'counter') != name.endswith('_total'):
        bad('%s: type %s, and a counter (only) ends in _total' % (name, t))
    ss = samples.get(name, [])
    if any('plane' in l for l, _ in ss) and not all(l.get('plane') in planes for l, _ in ss):
        bad('%s: a per-plane family with a sample whose plane is not one of %s' % (name, planes))
    if (name.startswith('smd_plane_') or name.startswith('smd_smp') or name.startswith('smd_mkey')) and \
            not all('plane' in l for l, _ in ss):
        bad('%s: per-plane, without a plane label' % name)
if samples.get('smd_build_info') != [({'version': samples['smd_build_info'][0][0].get('version', '')}, 1.0)] or \
        not samples['smd_build_info'][0][0].get('version'):
    bad('smd_build_info: %s' % samples.get('smd_build_info'))
for f in ('smd_smps_lost_total', 'smd_smps_retried_total', 'smd_smps_timed_out_total',
          'smd_smp_answers_dropped_total', 'smd_mkey_foreign_ports', 'smd_mkey_violations'):
    if f not in samples:
        bad('no %s' % f)
def by_attr(f):
    return {(l['plane'], l['attribute']): v for l, v in samples.get(f, [])}
lost, ret, to = by_attr('smd_smps_lost_total'), by_attr('smd_smps_retried_total'), by_attr('smd_smps_timed_out_total')
if not lost or any(lost[k] != ret.get(k, -1) + to.get(k, -1) for k in lost):
    bad('smd_smps_lost_total is not retried + timed out per plane and attribute')
if ('plane0', 'NodeInfo') not in lost:
    bad('no attribute="NodeInfo" sample of smd_smps_lost_total')
if prom:
    r = subprocess.run([prom, 'check', 'metrics'], input=body, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode != 0 or r.stdout.strip():
        bad('promtool check metrics: exit %d: %s' % (r.returncode, r.stdout.decode()[:2000]))
    else:
        print('promtool check metrics: ok (%s)' % prom)
else:
    print('note: promtool not found (Debian package prometheus); its check is skipped')

# other methods and paths
st, _, b = get('/metrics', 'HEAD')
if st != 200 or b:
    bad('HEAD /metrics: %s, %d bytes of body' % (st, len(b)))
st, _, _ = get('/metrics', 'POST', body=b'x' * 1000)
if st != 405:
    bad('POST /metrics: %s, want 405' % st)
st, _, _ = get('/nosuch')
if st != 404:
    bad('GET /nosuch: %s, want 404' % st)
st, _, b = get('/')
if st != 200 or b'/metrics' not in b:
    bad('GET /: %s %r' % (st, b))

# garbage: a 100 KB request line, binary noise
def raw(data, wait=5):
    s = socket.create_connection(('127.0.0.1', port), timeout=wait)
    try:
        s.sendall(data)
    except OSError:
        pass
    got = b''
    try:
        while True:
            d = s.recv(4096)
            if not d:
                break
            got += d
    except OSError:
        pass
    s.close()
    return got
got = raw(b'GET /' + b'a' * 100000 + b' HTTP/1.1\r\nHost: x\r\n\r\n')
if got and not re.match(rb'HTTP/1\.[01] (414|431|400|413)', got):
    bad('a 100 KB request line: %r' % got[:80])
got = raw(bytes(range(256)) * 40 + b'\r\n\r\n')
if got and not re.match(rb'HTTP/1\.[01] 4\d\d', got):
    bad('binary noise: %r' % got[:80])
if get('/metrics')[0] != 200 or not ctl_alive():
    bad('after the garbage, no scrape or no control socket')

# slowloris: idle connections up to the per-address limit (4), the next refused; the idle ones time out
idle = []
for i in range(8):
    s = socket.create_connection(('127.0.0.1', port), timeout=30)
    s.sendall(b'GET /metr')
    idle.append(s)
def n_closed():
    n = 0
    for s in idle:
        s.setblocking(False)
        try:
            n += s.recv(1, socket.MSG_PEEK) == b''
        except BlockingIOError:
            pass
        except OSError:
            n += 1
        s.setblocking(True)
    return n
t0 = time.time()
closed = n_closed()
while closed < 4 and time.time() - t0 < 5:   # a loaded machine: the daemon gets to them
    time.sleep(0.2)
    closed = n_closed()
if closed < 4:
    bad('8 idle connections from one address: %d closed at once, want at least 4 (limit 4 per address)' % closed)
if not ctl_alive():
    bad('the control socket does not answer while HTTP connections idle')
t0 = time.time()
for s in idle:
    s.settimeout(30)
    try:
        while s.recv(4096):
            pass
    except OSError:
        pass
    s.close()
waited = time.time() - t0
if waited > 20:
    bad('idle connections were closed after %.0f s (timeout 10 s)' % waited)
# libmicrohttpd frees a timed-out connection's per-address slot in the run after the one that
# closed it, after that run's accepts; smd runs it again at once (ctl/http.c pump), which shrinks
# but does not close the window in which a scrape from an address that had its whole limit open,
# sent as soon as it saw the close, is refused (a reset; 2 of 11 runs at load 22-25, 0.4 and 9 ms
# after the last close was seen). A retry 0.1 s later must then be served; 2 s bounds a loaded machine
refused = 0
for attempt in range(20):
    try:
        ok = get('/metrics')[0] == 200
    except OSError:
        ok = False
    if ok:
        break
    refused += 1
    time.sleep(0.1)
if not ok:
    bad('no scrape within 2 s after the idle connections went')
elif refused:
    print('note: the first scrape after the idle connections went was refused %d time(s)' % refused)
print('%d failure(s) in the HTTP checks' % len(fails))
sys.exit(1 if fails else 0)
PY

# ---- reload: the listener moves, stops; an address in use ----
port2=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'sweep_interval: 0\nmetrics_listen: "127.0.0.1:%s"\n' "$port2" >"$conf"
"$smctl" --socket "$sock" reload >/dev/null 2>&1 || bad "reload to port $port2 failed"
[ "$(bound)" = "$port2" ] || bad "after the reload, no SMD-0545 for port $port2: $(tail -5 "$work/one.err")"
grep -q "SMD-0547: metrics over HTTP: no longer listening on 127.0.0.1:$port" "$work/one.err" ||
	bad "the old listener's end is not logged"
probe6() {   # HOST PORT -> "200" or "refused"
	python3 - "$1" "$2" <<'PY'
import http.client, sys
try:
    c = http.client.HTTPConnection(sys.argv[1], int(sys.argv[2]), timeout=5)
    c.request('GET', '/metrics')
    print(c.getresponse().status)
except OSError:
    print('refused')
PY
}
probe() { probe6 127.0.0.1 "$1"; }   # PORT
[ "$(probe "$port2")" = 200 ] || bad "the new port $port2 does not serve"
[ "$(probe "$port")" = refused ] || bad "the old port $port still answers"
# the same address again: the listener stays (no new SMD-0545)
n=$(grep -c SMD-0545 "$work/one.err")
"$smctl" --socket "$sock" reload >/dev/null 2>&1 || bad "a reload with the same address failed"
[ "$(grep -c SMD-0545 "$work/one.err")" = "$n" ] || bad "a reload with the same address restarted the listener"
# an address in use: logged, the SM runs on, and the control socket answers
python3 -c 'import socket,time,sys; s=socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1); print(s.getsockname()[1], flush=True); time.sleep(30)' >"$work/busy" &
busy=$!
dmn_pids="$dmn_pids $busy"
i=0
while [ ! -s "$work/busy" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
bport=$(cat "$work/busy")
printf 'sweep_interval: 0\nmetrics_listen: "127.0.0.1:%s"\n' "$bport" >"$conf"
"$smctl" --socket "$sock" reload >/dev/null 2>&1 || bad "a reload to a busy port was refused (the config is fine)"
grep -q "SMD-0546: metrics over HTTP: cannot listen: 127.0.0.1:$bport: Address already in use" "$work/one.err" ||
	bad "a busy port is not logged: $(tail -3 "$work/one.err")"
"$smctl" --socket "$sock" status >/dev/null 2>&1 || bad "the control socket after a busy port"
kill "$busy" 2>/dev/null
# no key: nothing listens
printf 'sweep_interval: 0\n' >"$conf"
"$smctl" --socket "$sock" reload >/dev/null 2>&1 || bad "a reload without metrics_listen failed"
printf 'sweep_interval: 0\nmetrics_listen: "127.0.0.1:%s"\n' "$port2" >"$conf"
"$smctl" --socket "$sock" reload >/dev/null 2>&1 || bad "a reload back to $port2 failed"
[ "$(probe "$port2")" = 200 ] || bad "port $port2 does not serve after the reload back"
printf 'sweep_interval: 0\n' >"$conf"
"$smctl" --socket "$sock" reload >/dev/null 2>&1 || bad "a reload without metrics_listen failed"
[ "$(probe "$port2")" = refused ] || bad "port $port2 still answers without metrics_listen"

# IPv6, where the host has it: [::1] serves over IPv6 only, [::] over both (dual stack)
if python3 -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null; then
	printf 'sweep_interval: 0\nmetrics_listen: "[::1]:%s"\n' "$port2" >"$conf"
	"$smctl" --socket "$sock" reload >/dev/null 2>&1 || bad "reload to [::1]:$port2 failed"
	grep -q "SMD-0545: metrics over HTTP: http://\[::1\]:$port2/metrics" "$work/one.err" || bad "no SMD-0545 for [::1]"
	[ "$(probe6 ::1 "$port2")" = 200 ] && [ "$(probe "$port2")" = refused ] || bad "[::1]:$port2: not IPv6 only"
	printf 'sweep_interval: 0\nmetrics_listen: "[::]:%s"\n' "$port2" >"$conf"
	"$smctl" --socket "$sock" reload >/dev/null 2>&1 || bad "reload to [::]:$port2 failed"
	[ "$(probe6 ::1 "$port2")" = 200 ] && [ "$(probe "$port2")" = 200 ] || bad "[::]:$port2: not dual stack"
else
	echo "note: no IPv6 loopback here: the IPv6 listener is not tried"
fi

# SIGTERM with an idle HTTP connection open: a prompt exit 0
printf 'sweep_interval: 0\nmetrics_listen: "127.0.0.1:%s"\n' "$port2" >"$conf"
"$smctl" --socket "$sock" reload >/dev/null 2>&1 || bad "reload to $port2 failed"
python3 -c 'import socket,time,sys; s=socket.create_connection(("127.0.0.1", int(sys.argv[1]))); s.sendall(b"GET /"); time.sleep(20)' "$port2" &
hold=$!
dmn_pids="$dmn_pids $hold"
sleep 0.3
dmn_stop
rc=$?
[ $rc = 0 ] || bad "smd exited $rc on SIGTERM with an HTTP connection open"
kill "$hold" 2>/dev/null
grep -q "SMD-0517: stopped" "$work/one.err" || bad "no SMD-0517 at the end: $(tail -3 "$work/one.err")"
sanitizer_check "" "$work/one.err"

# the same under valgrind: scrapes, garbage, a moved listener, a stop with a connection open
if command -v valgrind >/dev/null 2>&1 && ! nm "$smd" 2>/dev/null | grep -q __asan_init; then
	printf 'sweep_interval: 0\nmetrics_listen: "127.0.0.1:0"\n' >"$conf"
	valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
		"$smd" -f --backend mock --topology "$work/ft" -c "$conf" --socket "$sock" --state-dir "$work/state" \
		>"$work/vg.out" 2>"$work/vg.err" &
	pid=$!
	dmn_pids="$dmn_pids $pid"
	if dmn_up "$work/st.json" 600; then
		vport=$(grep "SMD-0545" "$work/vg.err" | tail -1 | sed -n 's|.*http://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p')
		[ "$(probe "$vport")" = 200 ] || bad "valgrind run: no scrape"
		python3 -c 'import socket,sys; s=socket.create_connection(("127.0.0.1", int(sys.argv[1]))); s.sendall(b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\n\r\n"); s.recv(100)' "$vport" 2>/dev/null
		printf 'sweep_interval: 0\nmetrics_listen: "127.0.0.1:%s"\n' "$port2" >"$conf"
		"$smctl" --socket "$sock" reload >/dev/null 2>&1 || bad "valgrind run: reload failed"
		[ "$(probe "$port2")" = 200 ] || bad "valgrind run: no scrape after the reload"
		python3 -c 'import socket,time,sys; s=socket.create_connection(("127.0.0.1", int(sys.argv[1]))); s.sendall(b"GET /"); time.sleep(20)' "$port2" &
		hold=$!
		dmn_pids="$dmn_pids $hold"
		sleep 0.5
		dmn_stop
		rc=$?
		kill "$hold" 2>/dev/null
		[ $rc = 0 ] || { bad "valgrind run: exit $rc"; grep '^==' "$work/vg.err" | head -30; }
	else
		bad "valgrind run: smd did not come up: $(tail -5 "$work/vg.err")"
	fi
else
	echo "note: no valgrind (or a sanitizer build): the valgrind run is skipped"
fi

[ $fail = 0 ] && echo "PASS: metrics_http" || echo "FAIL: metrics_http ($failures)"
exit $fail
