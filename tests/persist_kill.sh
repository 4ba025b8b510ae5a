#!/bin/sh
# kill -9 at any point (issue 8, persistence). A medium mock fabric (fat
# tree, 128 hosts, 24 switches). Each state directory starts as a table
# that lacks 5 entries, so every run rewrites it. Then, many times:
#  - `smd --once` (with m_key: random) killed with SIGKILL after a random
#    delay spread over its whole run (start-up, sweep, LIDs, file write,
#    programming); the file left is byte-identical either to the starting
#    table or to the reference (what an uninterrupted run writes), never
#    anything else; a keys file, when present, is complete, sealed (its CRC-32 matches) and 0600; the
#    restart (run to completion) writes exactly the reference table and
#    keeps the key. Temp files of killed writers are gone after it.
#  - the same with the state-file write slowed down (tests/fsfail_preload.so
#    in slow mode: each write() writes half of what it is given and sleeps),
#    so that most kills land while the temp file is half written;
#  - the daemon (smd -f) killed likewise during its start and first cycles;
#    the restarted daemon saves exactly the reference plane-lids table.
# Prints how many kills landed before and after the table was replaced.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
need_python
scratch kill
"$smctl" topo gen fat-tree --radix 16 --hosts 128 --no-lids -o "$work/ft" >/dev/null || { echo "FAIL: generator"; exit 1; }
: "${SMD_KILLS:=40}"

shim="$top_builddir/tests/fsfail_preload.so"
[ -f "$shim" ] || { echo "FAIL: $shim not built"; exit 1; }
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS

python3 - "$smd" "$work" "$SMD_KILLS" "$shim" <<'PY'
import os, random, shutil, signal, socket, subprocess, sys, time, zlib

smd, work, kills, shim = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
topo = os.path.join(work, 'ft')
conf = os.path.join(work, 'smd.yaml')
with open(conf, 'w') as f:
    f.write('m_key: random\nm_key_protect_bits: 2\n')
rng = random.Random(8)
fails = []

def bad(msg):
    print('FAIL: ' + msg)
    fails.append(msg)

def read(p):
    try:
        with open(p, 'rb') as f:
            return f.read()
    except FileNotFoundError:
        return None

def once(d, **kw):
    return subprocess.Popen([smd, '--once', '-c', conf, '--backend', 'mock', '--topology', topo,
                             '--state-dir', d, '-q'], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, **kw)

def keys_ok(d, what):
    k = os.path.join(d, 'keys')
    data = read(k)
    if data is None:
        return None
    lines = data.decode().splitlines()
    # sealed (lib/statefile.h): the header's CRC-32 covers every byte after its line
    if lines and lines[0].startswith('# smd-state v1 crc32='):
        nl = data.index(b'\n') + 1
        if lines[0] != '# smd-state v1 crc32=%08x' % (zlib.crc32(data[nl:]) & 0xffffffff):
            bad('%s: keys file checksum does not match: %r' % (what, data))
            return False
        lines = lines[1:]
    ok = len(lines) == 3 and lines[1].startswith('m_key 0x') and lines[2].startswith('sm_key 0x')
    if not ok:
        bad('%s: keys file incomplete: %r' % (what, data))
    if os.stat(k).st_mode & 0o777 != 0o600:
        bad('%s: keys file mode %o' % (what, os.stat(k).st_mode & 0o777))
    return lines[1] if ok else None

def partial(data):
    # an older smd's table (no smd-state header) missing 5 entries: read, completed, rewritten sealed
    return b''.join([l + b'\n' for l in data.splitlines() if l.startswith(b'0x')][:-5])

def leftovers(d):
    return [n for n in os.listdir(d) if '.tmp.' in n]

# ---- --once ----
ref = os.path.join(work, 'ref')
os.mkdir(ref)
p = once(ref)
if p.wait() != 0:
    sys.exit('FAIL: reference run: ' + p.stderr.read().decode())
full = read(os.path.join(ref, 'guid2lid'))
base = partial(full)
with open(os.path.join(ref, 'guid2lid'), 'wb') as f:
    f.write(base)
t0 = time.monotonic()
p = once(ref)
p.wait()
span = time.monotonic() - t0
reference = read(os.path.join(ref, 'guid2lid'))
if reference == base:
    sys.exit('FAIL: the reference run did not rewrite the table')

def slow_env(d):
    e = dict(os.environ)
    e.update(LD_PRELOAD=shim, FSFAIL_PATH=d, FSFAIL_SLOW_US='15000')
    return e

# how long a slowed run takes
d = os.path.join(work, 'slow')
os.mkdir(d)
with open(os.path.join(d, 'guid2lid'), 'wb') as f:
    f.write(base)
t0 = time.monotonic()
p = once(d, env=slow_env(d))
p.wait()
slow_span = time.monotonic() - t0
if read(os.path.join(d, 'guid2lid')) != reference:
    bad('a slowed run did not write the reference table')
shutil.rmtree(d)

before = after = midwrite = 0
for i in range(kills + kills // 2):
    slowed = i >= kills
    d = os.path.join(work, 'o%d' % i)
    os.mkdir(d)
    with open(os.path.join(d, 'guid2lid'), 'wb') as f:
        f.write(base)
    p = once(d, env=slow_env(d)) if slowed else once(d)
    time.sleep(rng.uniform(0, (slow_span if slowed else span) * 1.2))
    p.send_signal(signal.SIGKILL)
    p.wait()
    got = read(os.path.join(d, 'guid2lid'))
    if leftovers(d):
        midwrite += 1
    if got == base:
        before += 1
    elif got == reference:
        after += 1
    else:
        bad('once kill %d: guid2lid is neither the old nor the new table (%d bytes)' % (i, len(got or b'')))
    key = keys_ok(d, 'once kill %d' % i)
    p = once(d)
    if p.wait() != 0:
        bad('once kill %d: restart failed: %s' % (i, p.stderr.read().decode().strip()))
    if read(os.path.join(d, 'guid2lid')) != reference:
        bad('once kill %d: the restart did not keep every LID' % i)
    key2 = keys_ok(d, 'once restart %d' % i)
    if key and key2 != key:
        bad('once kill %d: the restart changed the M_Key' % i)
    if leftovers(d):
        bad('once kill %d: temp files left after the restart: %s' % (i, leftovers(d)))
    shutil.rmtree(d)
print('--once: %d kills (%d with slowed writes: %.0f ms, else %.0f ms per run): %d before the table '
      'was replaced (%d of them left a temp file: killed mid-write), %d after' %
      (kills + kills // 2, kills // 2, slow_span * 1000, span * 1000, before, midwrite, after))
if midwrite == 0:
    bad('no kill landed in the middle of a write: the test did not test that')

# ---- daemon ----
def daemon(d, sock):
    return subprocess.Popen([smd, '-f', '-c', conf, '--backend', 'mock', '--topology', topo,
                             '--state-dir', d, '--socket', sock],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

smctl = os.path.join(os.path.dirname(smd), 'smctl')

def wait_file(p, path, old, timeout=10.0):
    """Until the daemon has finished a cycle (SIGTERM is handled from then on) and saved."""
    import json
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if p.poll() is not None:
            return read(path)
        r = subprocess.run([smctl, '--socket', sock, '--json', 'status'], capture_output=True)
        try:
            up = r.returncode == 0 and json.loads(r.stdout)['sweeps'] >= 1
        except (ValueError, KeyError):
            up = False
        got = read(path)
        if up and got is not None and got != old:
            return got
        time.sleep(0.02)
    return read(path)

dref = os.path.join(work, 'dref')
os.mkdir(dref)
sock = os.path.join(work, 's.sock')
p = daemon(dref, sock)
dfull = wait_file(p, os.path.join(dref, 'plane-lids'), None)
p.send_signal(signal.SIGTERM)
p.wait()
if not dfull:
    sys.exit('FAIL: the daemon wrote no plane-lids')
dbase = partial(dfull)
with open(os.path.join(dref, 'plane-lids'), 'wb') as f:
    f.write(dbase)
t0 = time.monotonic()
p = daemon(dref, sock)
dreference = wait_file(p, os.path.join(dref, 'plane-lids'), dbase)
dspan = time.monotonic() - t0
p.send_signal(signal.SIGTERM)
p.wait()
if dreference == dbase:
    sys.exit('FAIL: the daemon did not rewrite plane-lids')

dkills = max(kills // 2, 5)
before = after = 0
for i in range(dkills):
    d = os.path.join(work, 'd%d' % i)
    os.mkdir(d)
    with open(os.path.join(d, 'plane-lids'), 'wb') as f:
        f.write(dbase)
    p = daemon(d, sock)
    time.sleep(rng.uniform(0, dspan * 1.5))
    p.send_signal(signal.SIGKILL)
    p.wait()
    got = read(os.path.join(d, 'plane-lids'))
    if got == dbase:
        before += 1
    elif got == dreference:
        after += 1
    else:
        bad('daemon kill %d: plane-lids is neither the old nor the new table' % i)
    keys_ok(d, 'daemon kill %d' % i)
    p = daemon(d, sock)
    got = wait_file(p, os.path.join(d, 'plane-lids'), dbase)
    p.send_signal(signal.SIGTERM)
    if p.wait() != 0:
        bad('daemon kill %d: the restarted daemon exited %d' % (i, p.returncode))
    if got != dreference:
        bad('daemon kill %d: the restarted daemon did not keep every LID' % i)
    shutil.rmtree(d)
print('daemon: %d kills (%.0f ms to the first save): %d before the table was replaced, %d after' %
      (dkills, dspan * 1000, before, after))
sys.exit(1 if fails else 0)
PY
rc=$?
[ $rc = 0 ] && echo "PASS: every kill -9 left the old or the new table, and every restart kept every LID"
exit $rc
