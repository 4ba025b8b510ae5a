#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 18, "a control plane nobody can freeze": reloads parse off the loop, bounded.
# A mock daemon is reloaded (SIGHUP and smctl reload, from two threads, without pause)
# while its config file is, in turn: 400 KB nested 100,000 deep (it stalled the loop 29 s
# before), larger than 1 MiB, a FIFO nobody writes (open() blocked forever before), and
# a valid file of almost 1 MiB. Meanwhile `status` is asked for 3 s (300 times at least): its p99 latency
# must stay under 0.5 s. Each bad file is refused with its reason (nested deeper than 32
# levels / larger than ... bytes / not a regular file), by reload and by engine set (which
# reads the file too), and the running config is kept;
# the valid one is applied; smd stops cleanly at the end.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
need_python
mock_setup rlstall
dmn_start one --backend mock --topology "$work/ft" -c "$conf" --socket "$sock" --state-dir "$work/state" ||
	{ echo "FAIL: smd -f did not come up"; exit 1; }

python3 - "$work" "$conf" "$sock" "$pid" "$smctl" <<'PY' || fail=1
import json, os, shutil, signal, socket, subprocess, sys, threading, time

work, conf, sock, pid, smctl = sys.argv[1:6]
pid = int(pid)

def ask(cmd, timeout=30, **members):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(sock)
    s.sendall(json.dumps(dict({"version": 1, "cmd": cmd}, **members)).encode() + b"\n")
    buf = b""
    while not buf.endswith(b"\n"):
        d = s.recv(65536)
        if not d:
            break
        buf += d
    s.close()
    return json.loads(buf)

files = {}
files['deep'] = os.path.join(work, 'deep.yaml')
with open(files['deep'], 'w') as f:
    f.write('sweep_interval: ' + '[' * 100000 + ']' * 100000 + '\n')
files['big'] = os.path.join(work, 'big.yaml')
with open(files['big'], 'w') as f:
    f.write('sweep_interval: 0\n' + ''.join('# padding %07d ........................................\n' % i
                                            for i in range(20000)))
files['fifo'] = os.path.join(work, 'fifo.yaml')
os.mkfifo(files['fifo'])
files['good'] = os.path.join(work, 'good.yaml')
with open(files['good'], 'w') as f:
    f.write('sweep_interval: 0\nlog_level: notice\nlog_repeat_interval: 601\n' +
            ''.join('# padding %07d ......................................\n' % i for i in range(16000)))
want = {'deep': 'nested deeper than 32 levels', 'big': 'the limit of a configuration',
        'fifo': 'not a regular file', 'good': None}
fail = 0

def put(kind):
    tmp = conf + '.new'
    if os.path.lexists(tmp):
        os.unlink(tmp)
    if kind == 'fifo':
        os.mkfifo(tmp)
    else:
        shutil.copyfile(files[kind], tmp)
    os.rename(tmp, conf)

# each bad file refused with its reason, the running config kept
for kind in ('deep', 'big', 'fifo'):
    put(kind)
    t0 = time.monotonic()
    r = ask('reload')
    dt = time.monotonic() - t0
    if r.get('ok') or want[kind] not in r.get('error', ''):
        print('FAIL: reload of the %s file: %s' % (kind, r))
        fail = 1
    if dt > 2:
        print('FAIL: reload of the %s file took %.2f s' % (kind, dt))
        fail = 1
    # engine set reads the file too (off the loop): refused with the same reason
    r = ask('engine', action='set', chain='minhop')
    if r.get('ok') or want[kind] not in r.get('error', ''):
        print('FAIL: engine set with the %s file: %s' % (kind, r))
        fail = 1
    c = ask('config')
    if 'log_repeat_interval: 600' not in c.get('text', '') or 'routing_engine: ftree,minhop' not in c.get('text', ''):
        print('FAIL: the running config changed after the %s file' % kind)
        fail = 1

# reloads without pause from two threads (SIGHUP, the reload command) while status is timed
stop = threading.Event()
counts = {'hup': 0, 'reload': 0, 'swap': 0}

def swapper():
    kinds = ['deep', 'big', 'fifo', 'good']
    i = 0
    while not stop.is_set():
        put(kinds[i % 4])
        i += 1
        counts['swap'] += 1
        time.sleep(0.005)

def hupper():
    while not stop.is_set():
        os.kill(pid, signal.SIGHUP)
        counts['hup'] += 1
        time.sleep(0.002)

def reloader():
    while not stop.is_set():
        try:
            ask('reload')
            counts['reload'] += 1
        except Exception:
            pass

threads = [threading.Thread(target=f) for f in (swapper, hupper, reloader)]
for t in threads:
    t.start()
lat = []
end = time.monotonic() + 3
while len(lat) < 300 or time.monotonic() < end:
    time.sleep(0.005)
    t0 = time.monotonic()
    r = ask('status', timeout=10)
    lat.append(time.monotonic() - t0)
    if not r.get('ok'):
        print('FAIL: status under reloads: %s' % r)
        fail = 1
        break
stop.set()
for t in threads:
    t.join()
lat.sort()
p50, p99, mx = lat[len(lat) // 2], lat[int(len(lat) * 0.99) - 1], lat[-1]
print('status under reloads: %d requests, p50 %.1f ms, p99 %.1f ms, max %.1f ms; %d SIGHUPs, %d reload '
      'requests, %d file swaps' % (len(lat), p50 * 1e3, p99 * 1e3, mx * 1e3, counts['hup'], counts['reload'],
                                   counts['swap']))
if p99 > 0.5:
    print('FAIL: status p99 %.3f s under reloads (limit 0.5 s)' % p99)
    fail = 1
# the valid file applies
put('good')
r = ask('reload')
c = ask('config')
if not r.get('ok') or 'log_repeat_interval: 601' not in c.get('text', ''):
    print('FAIL: the valid file was not applied: %s' % r)
    fail = 1
sys.exit(fail)
PY
grep -q "nested deeper than 32 levels" "$work/one.err" || bad "the refused reload is not logged"
kill -0 "$pid" 2>/dev/null || bad "smd died under reloads"
dmn_stop || bad "smd -f did not stop cleanly"
sanitizer_check "" "$work/one.err"
[ $fail = 0 ] && echo "PASS: reloads off the loop, bounded; status answered meanwhile"
exit $fail
