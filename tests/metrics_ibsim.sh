#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 16, metrics: the SMP-loss counters count real loss. smd -f on an
# ibsim fabric (generated radix-8 fat tree, 16 hosts) while ibsim drops MADs
# (console `Error "switch" RATE` on every switch, as tests/ibsim_faults.sh),
# scraped over HTTP (metrics_listen 127.0.0.1:0):
#  - smd_smps_retried_total > 0 summed over the attributes, and per plane
#    and attribute lost = retried + timed out;
#  - after a light and a heavy sweep (smctl resweep) under the same errors,
#    every counter is at least what it was (counters never go back) and
#    smd_smps_sent_total has grown;
#  - the control socket's and the endpoint's texts have the same names.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
need_python
. "$top_srcdir/tests/lib-ibsim.sh"
need_tools "ibsim-utils" ibsim
RATE=${RATE:-10}
scratch mibsim

"$smctl" topo gen fat-tree --radix 8 --hosts 16 --format ibsim -o "$work/ft.net" >/dev/null ||
	{ echo "FAIL: generator"; exit 1; }
IBSIM_CONSOLE=1 scratch_ibsim "$work/ft.net" || { echo "FAIL: ibsim did not start"; exit 1; }
for s in $(sed -n 's/^Switch[[:space:]]*[0-9]*[[:space:]]*"\([^"]*\)".*/\1/p' "$work/ft.net"); do
	ibsim_console "Error \"$s\" $RATE"
done
sleep 0.5   # the console is read between MADs

conf="$work/smd.yaml"
sock="$work/smd.sock"
cat >"$conf" <<EOF
sweep_interval: 0
metrics_listen: "127.0.0.1:0"
mad:
  timeout_ms: 50
EOF
"$smd" -f -c "$conf" --plane "ibsim:H-0002c92000000000" --socket "$sock" --state-dir "$work/state" \
	>"$work/smd.out" 2>"$work/smd.err" &
pid=$!
dmn_pids="$dmn_pids $pid"
dmn_up "$work/st.json" 600 || { cat "$work/smd.err"; echo "FAIL: smd -f did not come up on ibsim"; exit 1; }
port=$(sed -n 's|.*SMD-0545: metrics over HTTP: http://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p' "$work/smd.err" | tail -1)
[ -n "$port" ] || { cat "$work/smd.err"; echo "FAIL: no SMD-0545"; exit 1; }

scrape() {   # FILE
	python3 - "$port" "$1" <<'PY'
import http.client, sys
c = http.client.HTTPConnection('127.0.0.1', int(sys.argv[1]), timeout=20)
c.request('GET', '/metrics')
r = c.getresponse()
open(sys.argv[2], 'wb').write(r.read())
sys.exit(0 if r.status == 200 else 1)
PY
}
scrape "$work/m1.txt" || bad "first scrape"
"$smctl" --socket "$sock" resweep >/dev/null 2>&1 || bad "smctl resweep (light)"
"$smctl" --socket "$sock" resweep --heavy >/dev/null 2>&1 || bad "smctl resweep --heavy"
scrape "$work/m2.txt" || bad "second scrape"
"$smctl" --socket "$sock" metrics >"$work/ctl.txt" || bad "smctl metrics"

python3 - "$work" <<'PY' || bad "counter checks (above)"
import os, re, sys
work = sys.argv[1]
def load(name):
    out = {}
    for line in open(os.path.join(work, name)):
        m = re.match(r'([a-z_]+)(\{[^}]*\})? (\S+)$', line.strip())
        if m:
            out[(m.group(1), m.group(2) or '')] = float(m.group(3))
    return out
m1, m2, ctl = load('m1.txt'), load('m2.txt'), load('ctl.txt')
fails = 0
def bad(msg):
    global fails
    fails += 1
    print('FAIL: ' + msg)
for m in (m1, m2):
    ret = sum(v for (n, l), v in m.items() if n == 'smd_smps_retried_total')
    if ret <= 0:
        bad('no SMP retried under the errors: %s' % ret)
    for (n, l), v in m.items():
        if n == 'smd_smps_lost_total':
            r, t = m.get(('smd_smps_retried_total', l)), m.get(('smd_smps_timed_out_total', l))
            if r is None or t is None or v != r + t:
                bad('%s%s = %s, retried %s + timed out %s' % (n, l, v, r, t))
print('under the errors: %d SMPs sent, %d retried, %d timed out, %d answers dropped' % (
    m2[('smd_smps_sent_total', '{plane="plane0"}')],
    sum(v for (n, l), v in m2.items() if n == 'smd_smps_retried_total'),
    sum(v for (n, l), v in m2.items() if n == 'smd_smps_timed_out_total'),
    sum(v for (n, l), v in m2.items() if n == 'smd_smp_answers_dropped_total')))
for (n, l), v in m1.items():
    if n.endswith('_total') and m2.get((n, l), -1) < v:
        bad('%s%s went back: %s -> %s' % (n, l, v, m2.get((n, l))))
if m2[('smd_smps_sent_total', '{plane="plane0"}')] <= m1[('smd_smps_sent_total', '{plane="plane0"}')]:
    bad('smd_smps_sent_total did not grow over two sweeps')
if set(n for n, _ in ctl) != set(n for n, _ in m2):
    bad('smctl metrics and GET /metrics name different metrics')
sys.exit(1 if fails else 0)
PY

dmn_stop || bad "smd did not stop with exit 0"
[ $fail = 0 ] && echo "PASS: metrics_ibsim" || echo "FAIL: metrics_ibsim ($failures)"
exit $fail
