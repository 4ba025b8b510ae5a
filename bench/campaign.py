#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The outside campaign's shape against smd -f on a mock plane (issue 18), see bench/campaign.sh.

Phases, with `status` timed every 20 ms from another thread the whole time the daemon runs:
  hostile   REQUESTS hostile request lines (random bytes, overlong lines, bad and nested JSON,
            unknown commands, every command with wrong, huge, empty, control-character
            arguments, deep YAML profiles, FIFO and root-only paths, link/switch/faults junk),
            one per connection or several on one;
  flood     one process holds as many idle connections as it can (connections held), root is
            still answered; then 24 threads connect-ask-close for 2 s ("too many clients"
            counted);
  slow      20 clients trickle a request a byte per 100 ms, 8 never read a large reply;
  loss      for each MAD loss level (smctl faults --loss): a heavy sweep, LIGHT light sweeps
            (sweep_interval 1 s) sampled after each, then the loss stops and one sweep: at every
            sample the black-holed CA pairs and the LIDs changed;
  kill      KILLS times: a heavy sweep asked (or a link event, or nothing), kill -9 after a
            random 0-400 ms, restart on the same state directory: it must come up with every
            LID it had (kills survived, LIDs changed).
Black-holed pairs: every ordered pair of CAs of the TRUE topology (the dump the mock was built
from), walked hop by hop through the LFTs smd reports (`smctl lft`, the last known table for a
switch missing from the view) to the destination's LID of the first complete sweep; a pair
that does not arrive is black-holed. LIDs changed: nodes whose LID in the view differs from
the first complete sweep's.
"""
import json, os, random, re, signal, socket, subprocess, sys, threading, time

A = dict(arg.split('=', 1) for arg in sys.argv[1:])
SMD, SMCTL, WORK, TOPO = A['smd'], A['smctl'], A['work'], A['topo']
REQUESTS, KILLS, LIGHT = int(A.get('requests', 3000)), int(A.get('kills', 10)), int(A.get('light', 3))
LEVELS = [int(x) for x in A.get('levels', '10,20,30,40').split(',')]
SEED = int(A.get('seed', 1))
rnd = random.Random(SEED)
SOCK = os.path.join(WORK, 'smd.sock')
USERS_GID = None
if os.getuid() == 0 and subprocess.run(['sh', '-c', 'command -v setpriv'], stdout=subprocess.DEVNULL).returncode == 0:
    try:
        import grp
        USERS_GID = grp.getgrnam('users').gr_gid
    except KeyError:
        pass
CONF = os.path.join(WORK, 'smd.yaml')
STATE = os.path.join(WORK, 'state')
results = {}


def log(*a):
    print(*a, flush=True)


# ---------------------------------------------------------------- the daemon
CUR = {'sock': SOCK}


class Daemon:
    def __init__(self, args=None, name='smd'):
        self.p = None
        self.n = 0
        self.name = name
        self.args = args or ['-c', CONF, '--backend', 'mock', '--topology', TOPO, '--socket', SOCK,
                             '--state-dir', STATE, '--seed', str(SEED)]

    def start(self):
        self.n += 1
        err = open(os.path.join(WORK, '%s.%d.err' % (self.name, self.n)), 'w')
        self.p = subprocess.Popen([SMD, '-f'] + self.args, stdout=subprocess.DEVNULL, stderr=err)
        end = time.monotonic() + 60
        while time.monotonic() < end:
            if self.p.poll() is not None:
                return False
            try:
                r = ask({'cmd': 'status'}, timeout=2)
                if r.get('sweeps', 0) >= 1:
                    return True
            except OSError:
                pass
            time.sleep(0.05)
        return False

    def alive(self):
        return self.p and self.p.poll() is None

    def kill9(self):
        self.p.send_signal(signal.SIGKILL)
        self.p.wait()

    def stop(self):
        if self.alive():
            self.p.send_signal(signal.SIGTERM)
            self.p.wait(timeout=30)


def ask(req, timeout=30, sock=None):
    sock = sock or CUR['sock']
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(sock)
        req = dict({'version': 1}, **req)
        s.sendall(json.dumps(req).encode() + b'\n')
        buf = b''
        while not buf.endswith(b'\n'):
            d = s.recv(1 << 20)
            if not d:
                break
            buf += d
    finally:
        s.close()
    return json.loads(buf)


def smctl(*args, timeout=120):
    return subprocess.run([SMCTL, '--socket', CUR['sock']] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=timeout)


# ---------------------------------------------------------------- status latency, always
class Prober(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.lat = {}
        self.phase = 'start'
        self.failed = {}
        self.stop_ev = threading.Event()
        self.paused = threading.Event()

    def run(self):
        while not self.stop_ev.is_set():
            time.sleep(0.02)
            if self.paused.is_set():
                continue
            ph = self.phase
            t0 = time.monotonic()
            try:
                r = ask({'cmd': 'status'}, timeout=30)
                ok = r.get('ok')
            except (OSError, ValueError):
                ok = False
            dt = time.monotonic() - t0
            if ok:
                self.lat.setdefault(ph, []).append(dt)
            else:
                self.failed[ph] = self.failed.get(ph, 0) + 1


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * p))] if v else float('nan')


# ---------------------------------------------------------------- the true topology and the walk
def load_topo(path):
    nodes, cur = {}, None
    for line in open(path):
        m = re.match(r'^(Switch|Ca)\s+(\d+)\s+"[SH]-([0-9a-fA-F]+)"\s*#\s*"([^"]*)"', line)
        if m:
            cur = int(m.group(3), 16)
            nodes[cur] = {'type': m.group(1), 'desc': m.group(4), 'links': {}}
            continue
        m = re.match(r'^\[(\d+)\](?:\([0-9a-fA-Fx]+\))?\s+"[SH]-([0-9a-fA-F]+)"\[(\d+)\]', line)
        if m and cur is not None:
            nodes[cur]['links'][int(m.group(1))] = (int(m.group(2), 16), int(m.group(3)))
    return nodes


def use_topology(path):
    global TOPO_NODES, CAS, SWITCHES, last_lft
    TOPO_NODES = load_topo(path)
    CAS = sorted(g for g, n in TOPO_NODES.items() if n['type'] == 'Ca')
    SWITCHES = sorted(g for g, n in TOPO_NODES.items() if n['type'] == 'Switch')
    last_lft = {}


use_topology(TOPO)


def view():
    """guid -> lid of the view, and the LFTs (last known for switches missing)."""
    r = ask({'cmd': 'nodes'})
    lids = {}
    for pl in r.get('planes', []):
        for n in pl.get('nodes', []):
            lids[int(n['guid'], 16)] = n.get('port_lids', [n['lid']])[0] if n['type'] != 'Switch' else n['lid']
    for sw in SWITCHES:
        if sw not in lids:
            continue
        try:
            e = ask({'cmd': 'lft', 'switch': '0x%016x' % sw})
            for pl in e.get('planes', []):
                if 'ports' in pl:
                    last_lft[sw] = pl['ports']
        except (OSError, ValueError):
            pass
    return lids


def black_holes(base_lids):
    lid_owner = {base_lids[g]: g for g in CAS if g in base_lids}
    bad = 0
    for s in CAS:
        for d in CAS:
            if s == d:
                continue
            dlid = base_lids.get(d)
            node, port = TOPO_NODES[s]['links'].get(1, (None, None))
            arrived = False
            for _ in range(64):
                if node is None or dlid is None:
                    break
                if TOPO_NODES[node]['type'] == 'Ca':
                    arrived = node == d
                    break
                lft = last_lft.get(node)
                if not lft or dlid >= len(lft) or lft[dlid] in (255, 0):
                    break
                node, port = TOPO_NODES[node]['links'].get(lft[dlid], (None, None))
            bad += not arrived
    return bad


def lids_changed(base_lids, lids):
    return sum(1 for g, l in lids.items() if g in base_lids and base_lids[g] != l)


# ---------------------------------------------------------------- hostile requests
def hostile_lines():
    cmds = ['status', 'planes', 'version', 'metrics', 'nodes', 'links', 'route', 'lft', 'dump', 'sweep', 'engine',
            'profile', 'reload', 'config', 'link', 'switch', 'faults']
    members = ['plane', 'src', 'dst', 'switch', 'what', 'kind', 'wait', 'action', 'chain', 'path', 'content', 'name',
               'node', 'port', 'loss', 'corrupt', 'delay', 'delay_ms', 'seed']
    junk = ['', 'x' * 300, '\x1b[31mred\n\r', '../../etc/shadow', '/etc/shadow', os.path.join(WORK, 'fifo'),
            '-1', '1e308', 'lid:0', 'lid:99999', 'guid:zz', '0xffffffffffffffff', '\u202e', 'down', 'up', '250%',
            '-5%', 'ftree\nsmd: notice forged', 'nosuch,engine', '%s%s%n', None, True, -1, 1e300, 0, 7, 2 ** 64,
            'a' * 5000]
    deep = 'x: ' + '[' * 20000 + ']' * 20000
    while True:
        k = rnd.random()
        if k < 0.08:
            yield bytes(rnd.getrandbits(8) for _ in range(rnd.randint(1, 300))) + b'\n'
        elif k < 0.12:
            yield b'{"cmd":"status","x":"' + b'A' * rnd.choice([4000, 5000, 70000]) + b'"}\n'
        elif k < 0.16:
            yield (b'{"cmd":' + b'[' * 50 + b']' * 50 + b'}\n')
        elif k < 0.2:
            yield b'{"version":' + str(rnd.choice([0, 2, -1, 1.5, '"1"'])).encode() + b',"cmd":"status"}\n'
        elif k < 0.23:
            yield json.dumps({'version': 1, 'cmd': 'profile', 'name': 'deep', 'content': deep}).encode() + b'\n'
        else:
            req = {'version': 1, 'cmd': rnd.choice(cmds + ['reboot', '', 'STATUS', 'status\n'])}
            for _ in range(rnd.randint(0, 4)):
                req[rnd.choice(members)] = rnd.choice(junk)
            # no real harm: a wait for sweeps, link/switch events only on names that do not exist
            if req['cmd'] in ('link', 'switch') and req.get('node') not in (None, ''):
                req['node'] = 'nosuch-' + str(req['node'])[:20]
            if req['cmd'] == 'sweep':
                req['wait'] = False
            if req['cmd'] == 'faults':
                for m in ('loss', 'corrupt', 'delay', 'delay_ms', 'seed'):
                    req.pop(m, None)
            yield json.dumps(req).encode() + b'\n'


def hostile(n):
    gen = hostile_lines()
    tried = answered = errors = resets = 0
    t0 = time.monotonic()
    while tried < n:
        batch = [next(gen) for _ in range(rnd.choice([1, 1, 1, 3]))]
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        try:
            s.connect(SOCK)
            for line in batch:
                s.sendall(line)
            tried += len(batch)
            if rnd.random() < 0.1:
                s.shutdown(socket.SHUT_WR)   # a request that ends at EOF
            buf = b''
            end = time.monotonic() + 10
            while buf.count(b'\n') < len(batch) and time.monotonic() < end:
                d = s.recv(1 << 20)
                if not d:
                    break
                buf += d
            for line in buf.split(b'\n'):
                if not line:
                    continue
                answered += 1
                try:
                    errors += not json.loads(line).get('ok')
                except ValueError:
                    errors += 1
        except OSError:
            resets += 1
            tried += len(batch)
        finally:
            s.close()
    return {'tried': tried, 'answered': answered, 'error_replies': errors, 'closed_by_smd': resets,
            'seconds': round(time.monotonic() - t0, 1)}


# ---------------------------------------------------------------- floods and slow clients
HOLDER = r"""
import socket, sys, time
held = []
for _ in range(200):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.connect(sys.argv[1])
        held.append(s)
    except OSError:
        s.close()
time.sleep(0.3)
n = 0
for s in held:
    s.setblocking(False)
    try:
        n += not s.recv(4096) and 0   # "too many clients" or EOF: not held
    except BlockingIOError:
        n += 1                        # open, nothing said: held
    except OSError:
        pass
print(n, flush=True)
sys.stdin.read()
"""


def flood():
    # one process of a socket_group member (not root) holding as many idle connections as it can
    prefix = []
    if os.getuid() == 0 and USERS_GID is not None:
        prefix = ['setpriv', '--reuid', '4242', '--regid', str(USERS_GID), '--groups', str(USERS_GID)]
    h = subprocess.Popen(prefix + [sys.executable, '-c', HOLDER, SOCK], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    alive = int(h.stdout.readline() or 0)
    try:
        root_ok = bool(ask({'cmd': 'status'}, timeout=5).get('ok'))
    except OSError:
        root_ok = False
    h.stdin.close()
    h.wait()
    # connect-ask-close from 24 threads for 2 s
    stop = time.monotonic() + 2
    tally = {'ok': 0, 'too_many': 0, 'other': 0}
    lock = threading.Lock()

    def churn():
        while time.monotonic() < stop:
            try:
                r = ask({'cmd': 'version'}, timeout=5)
                k = 'ok' if r.get('ok') else 'too_many' if 'too many' in r.get('error', '') else 'other'
            except (OSError, ValueError):
                k = 'other'
            with lock:
                tally[k] += 1
    ts = [threading.Thread(target=churn) for _ in range(24)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return {'holder': 'uid 4242 (socket_group)' if prefix else 'this uid', 'connections_tried': 200,
            'connections_held': alive, 'root_served_meanwhile': root_ok,
            'churn_requests': sum(tally.values()), 'churn_too_many': tally['too_many'], 'churn_failed': tally['other']}


def slow():
    trickle = []
    line = b'{"version":1,"cmd":"status"}\n'
    for _ in range(20):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(SOCK)
        trickle.append(s)
    readers = []
    for _ in range(8):   # ask for a large reply and never read it
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect(SOCK)
        s.sendall(b'{"version":1,"cmd":"dump","what":"topology"}\n')
        readers.append(s)
    dropped = 0
    for i in range(len(line)):
        for s in trickle:
            try:
                s.sendall(line[i:i + 1])
            except OSError:
                dropped += 1
        time.sleep(0.1)
    for s in trickle + readers:
        s.close()
    return {'trickling_clients': 20, 'never_reading_clients': 8, 'sends_refused': dropped}


# ---------------------------------------------------------------- MAD loss
def wait_sweeps(n0, want, timeout=120):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        r = ask({'cmd': 'status'})
        if r['sweeps'] >= n0 + want and r['state'] != 'sweeping':
            return r
        time.sleep(0.05)
    return ask({'cmd': 'status'})


def mock_loss(lv):
    smctl('faults', '--loss', '%d%%' % lv)


def loss_phase(base_lids, levels=LEVELS, set_loss=mock_loss, mock=True):
    rows = []
    for lv in levels:
        f0 = ask({'cmd': 'faults'})['planes'][0] if mock else {'requests': 0, 'lost': 0}
        set_loss(lv)
        r = ask({'cmd': 'sweep', 'kind': 'heavy'}, timeout=600)
        samples = []
        st = ask({'cmd': 'status'})
        lids = view()
        samples.append((st['state'], st.get('cas', 0), black_holes(base_lids), lids_changed(base_lids, lids)))
        for _ in range(LIGHT):
            st = wait_sweeps(st['sweeps'], 1)
            lids = view()
            samples.append((st['state'], st.get('cas', 0), black_holes(base_lids), lids_changed(base_lids, lids)))
        f = ask({'cmd': 'faults'})['planes'][0] if mock else {'requests': 0, 'lost': 0}
        set_loss(0)
        st = wait_sweeps(st['sweeps'], 1)
        lids = view()
        after = (st['state'], st.get('cas', 0), black_holes(base_lids), lids_changed(base_lids, lids))
        st2 = wait_sweeps(st['sweeps'], 1)
        lids = view()
        after2 = (st2['state'], st2.get('cas', 0), black_holes(base_lids), lids_changed(base_lids, lids))
        rows.append({'loss_pct': lv, 'heavy_result': r.get('result'), 'samples': samples,
                     'max_black_holed': max(s[2] for s in samples), 'min_cas_seen': min(s[1] for s in samples),
                     'states': sorted(set(s[0] for s in samples)), 'lids_changed': max(s[3] for s in samples),
                     'smps': f['requests'] - f0['requests'], 'smps_lost': f['lost'] - f0['lost'],
                     'after_one_sweep': after, 'after_two_sweeps': after2})
        log('loss %d%%: %s' % (lv, json.dumps(rows[-1])))
    return rows


# ---------------------------------------------------------------- kill -9
def kill_phase(d, base_lids, prober):
    survived = changed = 0
    notes = []
    hosts = [g for g in CAS[1:]]
    for k in range(KILLS):
        what = rnd.choice(['heavy', 'link', 'idle', 'reread'])
        try:
            if what in ('heavy', 'reread'):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(SOCK)
                s.sendall(json.dumps({'version': 1, 'cmd': 'sweep', 'kind': what, 'wait': False}).encode() + b'\n')
                s.close()
            elif what == 'link':
                smctl('link', 'down', '0x%016x' % rnd.choice(hosts), '1')
        except OSError:
            pass
        time.sleep(rnd.uniform(0, 0.4))
        prober.paused.set()
        d.kill9()
        up = d.start()
        prober.paused.clear()
        if not up:
            notes.append('kill %d (%s): did not come back' % (k, what))
            if not d.alive():
                d.start()
            continue
        # a fresh mock after a restart: every host is up again; the first sweep's LIDs must be the old ones
        lids = view()
        c = lids_changed(base_lids, lids)
        missing = sum(1 for g in base_lids if g not in lids)
        changed += c
        survived += 1
        if c or missing:
            notes.append('kill %d (%s): %d LIDs changed, %d nodes missing' % (k, what, c, missing))
    return {'kills': KILLS, 'survived': survived, 'lids_changed': changed, 'notes': notes,
            'black_holed_after': black_holes(base_lids)}


# ---------------------------------------------------------------- ibsim (IBSIM_NET, IBSIM_CONSOLE set)
def ibsim_phase(prober):
    net, console = A['ibsim_net'], A['ibsim_console']
    use_topology(net)
    sm_node = 'H-%016x' % CAS[0]
    isock = os.path.join(WORK, 'smd-ibsim.sock')
    iconf = os.path.join(WORK, 'smd-ibsim.yaml')
    open(iconf, 'w').write('sweep_interval: 1\nlog_level: notice\n')
    d = Daemon(['-c', iconf, '--plane', 'ibsim:' + sm_node, '--socket', isock, '--state-dir',
                os.path.join(WORK, 'state-ibsim')], name='smd-ibsim')
    CUR['sock'] = isock
    con = open(console, 'w')

    def ib_loss(lv):
        for sw in SWITCHES:
            con.write('Error "S-%016x" %d\n' % (sw, lv))
        con.flush()
        time.sleep(0.2)
    if not d.start():
        return {'error': 'smd on ibsim did not come up'}
    st = ask({'cmd': 'status'})
    base_lids = view()
    out = {'first_sweep': (st['state'], st.get('cas', 0)), 'baseline_black_holed': black_holes(base_lids)}
    prober.phase = 'ibsim'
    out['loss'] = loss_phase(base_lids, [int(x) for x in A.get('ibsim_levels', '25').split(',')], ib_loss, False)
    d.stop()
    con.close()
    CUR['sock'] = SOCK
    use_topology(TOPO)
    return out


# ---------------------------------------------------------------- main
def main():
    os.makedirs(STATE, exist_ok=True)
    open(CONF, 'w').write('sweep_interval: 1\nlog_level: notice\nmock:\n  seed: %d\n%s' %
                          (SEED, 'socket_group: users\n' if USERS_GID is not None else ''))
    os.chmod(WORK, 0o755)
    os.mkfifo(os.path.join(WORK, 'fifo'))
    d = Daemon()
    if not d.start():
        log('smd did not come up')
        return 1
    base_lids = view()
    log('# fabric: %d switches, %d CAs (%d ordered CA pairs); view: %d nodes with LIDs' %
        (len(SWITCHES), len(CAS), len(CAS) * (len(CAS) - 1), len(base_lids)))
    results['baseline_black_holed'] = black_holes(base_lids)
    prober = Prober()
    prober.start()
    for phase, fn in (('hostile', lambda: hostile(REQUESTS)), ('flood', flood), ('slow', slow)):
        prober.phase = phase
        results[phase] = fn()
        results[phase]['smd_alive'] = d.alive()
        log('%s: %s' % (phase, json.dumps(results[phase])))
    prober.phase = 'loss'
    results['loss'] = loss_phase(base_lids)
    prober.phase = 'kill'
    results['kill'] = kill_phase(d, base_lids, prober)
    log('kill: %s' % json.dumps(results['kill']))
    if A.get('ibsim_net'):
        d.stop()
        results['ibsim'] = ibsim_phase(prober)
        log('ibsim: %s' % json.dumps(results['ibsim']))
    prober.stop_ev.set()
    prober.join()
    results['status_latency_ms'] = {ph: {'n': len(v), 'p50': round(pct(v, 0.5) * 1e3, 1),
                                         'p99': round(pct(v, 0.99) * 1e3, 1), 'max': round(max(v) * 1e3, 1),
                                         'failed': prober.failed.get(ph, 0)}
                                    for ph, v in prober.lat.items()}
    allv = [x for v in prober.lat.values() for x in v]
    results['status_latency_ms']['all'] = {'n': len(allv), 'p50': round(pct(allv, 0.5) * 1e3, 1),
                                           'p99': round(pct(allv, 0.99) * 1e3, 1),
                                           'max': round(max(allv) * 1e3, 1)}
    d.stop()
    json.dump(results, open(os.path.join(WORK, 'campaign.json'), 'w'), indent=1)
    log('status latency (ms): %s' % json.dumps(results['status_latency_ms']))
    # the summary
    h, fl, ki = results['hostile'], results['flood'], results['kill']
    bh = max([r['max_black_holed'] for r in results['loss']] + [ki['black_holed_after']])
    lc = max([r['lids_changed'] for r in results['loss']] + [ki['lids_changed']])
    ib = ''
    if 'ibsim' in results and 'loss' in results['ibsim']:
        ib = ' ibsim_black_holed_pairs_max=%d ibsim_lids_changed=%d' % (
            max(r['max_black_holed'] for r in results['ibsim']['loss']),
            max(r['lids_changed'] for r in results['ibsim']['loss']))
    log('SUMMARY requests_tried=%d connections_held=%d kills_survived=%d/%d black_holed_pairs_max=%d '
        'lids_changed=%d status_p99_ms=%.1f%s' % (h['tried'], fl['connections_held'], ki['survived'], ki['kills'], bh,
                                                 lc, results['status_latency_ms']['all']['p99'], ib))
    return 0


sys.exit(main())
