#!/bin/sh
# SPDX-License-Identifier: MIT
# Port configuration under ibsim (issue 14), read back with tools we did not write.
#  - smd --once on a fresh ibsim instance of tests/data/ft-small.net (8 switches
#    with enhanced port 0, 16 CAs), then `opensm --once --qos` on another fresh
#    instance of the same fabric: for every port of every node (by GUID),
#    smpquery portinfo (NeighborMTU, OperVLs, VLHighLimit, VLStallCount,
#    HoqLife, partition enforcement, link width/speed enabled), smpquery sl2vl
#    and smpquery vlarb read the same under both. OpenSM's --qos with no
#    other option is its qos_* defaults, which are smd's defaults.
#  - OperationalVLs is VL0-7 everywhere (ibsim's VLCap; it was "No change"
#    before: every ARMED Set wrote 0) and the SL2VL tables are OpenSM's default
#    masked for VL0-7 (ibsim's reset table is not masked: smd wrote them).
#  - a second smd --once writes no PortInfo, SL2VL or VLArb (its JSON summary).
#  - another fresh instance with a config that is not OpenSM's (max_op_vls 3,
#    leaf HOQLife 14, a CA SL2VL table and VLArb low table): smpquery reads what
#    the config says, masked for VL0-3. (ibsim keeps no VLHighLimit: the mock's
#    tests check it.)
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
. "$top_srcdir/tests/lib-ibsim.sh"
umad2sim_supp   # ASan: umad2sim's own over-read in its read() wrapper (tests/data/mad/asan-umad2sim.supp)
need_tools "ibsim-utils, infiniband-diags, opensm" ibsim smpquery ibnetdiscover opensm
need_python
smd=$top_builddir/smd/smd
net=$top_srcdir/tests/data/ft-small.net
fail=0
bad() { echo "FAIL: $*"; fail=1; }
scratch portcfg

# dump OUT: "GUID:PORT field value" lines for every port, sorted (LIDs left out)
dump() {
	ibsim_run ibnetdiscover >"$work/topo.$1" 2>/dev/null || { bad "$1: ibnetdiscover failed"; return; }
	python3 - "$work/topo.$1" >"$work/ports.$1" <<'PY'
import re, sys
node = None
for line in open(sys.argv[1]):
    m = re.match(r'(Switch|Ca)\s+(\d+)\s+"[SH]-([0-9a-f]+)".*?(?:lid (\d+))?', line)
    if m:
        node = (m.group(1), int(m.group(2)), m.group(3))
        if node[0] == 'Switch':
            lid = re.search(r'lid (\d+)', line).group(1)
            for p in range(node[1] + 1):
                print('%s:%d %s %d' % (node[2], p, lid, p))
        continue
    m = re.match(r'\[(\d+)\]\(([0-9a-f]+)\)\s.*# lid (\d+)', line)
    if m and node and node[0] == 'Ca':
        print('%s:%s %s %s' % (node[2], m.group(1), m.group(3), m.group(1)))
PY
	: >"$work/dump.$1"
	while read -r key lid port; do
		ibsim_run smpquery portinfo "$lid" "$port" 2>/dev/null |
			grep -E '^(NeighborMTU|OperVLs|VLHighLimit|VLStallCount|HoqLife|PartEnforce(Inb|Outb)|LinkWidthEnabled|LinkSpeedEnabled|LinkSpeedExtEnabled):' |
			sed "s/^/$key /"
		ibsim_run smpquery sl2vl "$lid" "$port" 2>/dev/null | grep -v '^#' | sed "s/^/$key sl2vl /"
		# numbered, so that sorting keeps the low table before the high one
		ibsim_run smpquery vlarb "$lid" "$port" 2>/dev/null | grep -v '^# VLArb' |
			awk -v k="$key" '{ printf "%s vlarb %d %s\n", k, NR, $0 }'
	done <"$work/ports.$1" >>"$work/dump.$1"
	sort -o "$work/dump.$1" "$work/dump.$1"
}

# smd: fresh instance, twice
scratch_ibsim "$net" || { echo "SKIP: ibsim did not start"; exit 77; }
ibsim_run "$smd" --once --state-dir "$work/state" --json >"$work/run1.json" 2>"$work/run1.err" ||
	{ bad "smd --once failed"; cat "$work/run1.err"; }
ibsim_run "$smd" --once --state-dir "$work/state" --json >"$work/run2.json" 2>"$work/run2.err" ||
	{ bad "second smd --once failed"; cat "$work/run2.err"; }
python3 - "$work/run1.json" "$work/run2.json" <<'PY' || fail=1
import json, sys
r1, r2 = (json.load(open(f))['portcfg'] for f in sys.argv[1:3])
print('smd first run: %s' % r1)
print('smd second run: %s' % r2)
if not (r1['sl2vl_sets'] > 0):
    print('FAIL: the first run wrote no SL2VL table (ibsim resets them unmasked)')
    sys.exit(1)
bad = [k for k in ('portinfo_sets', 'sl2vl_sets', 'vlarb_sets') if r2[k]]
if bad:
    print('FAIL: the second run wrote %s' % ', '.join('%s %d' % (k, r2[k]) for k in bad))
    sys.exit(1)
PY
dump smd
ibsim_stop

# OpenSM with its QoS defaults, fresh instance
scratch_ibsim "$net" || { bad "ibsim did not start again"; exit 1; }
ibsim_opensm_once --qos || bad "opensm --once --qos failed"
dump osm
ibsim_stop

# smd with settings of its own
cat >"$work/own.yaml" <<'YAML'
max_op_vls: 3
leaf_head_of_queue_lifetime: 14
qos:
  ca:
    sl2vl: 1,2,3,4,5,6,7,1,2,3,4,5,6,7,0,15
    vlarb_low: 0:8,1:16,2:32,3:64,4:1
YAML
scratch_ibsim "$net" || { bad "ibsim did not start again"; exit 1; }
ibsim_run "$smd" --once -c "$work/own.yaml" --state-dir "$work/state-own" >"$work/own.out" 2>&1 ||
	{ bad "smd --once -c own.yaml failed"; cat "$work/own.out"; }
dump own
ibsim_stop
python3 - "$work/dump.own" "$work/topo.own" <<'PY' || fail=1
import re, sys
lines = open(sys.argv[1]).read().splitlines()
switches = set(re.findall(r'switchguid=0x([0-9a-f]+)', open(sys.argv[2]).read()))
switches = {s.zfill(16) for s in switches} | switches
def val(key, field):
    for l in lines:
        k, rest = l.split(' ', 1)
        if k == key and rest.startswith(field + ':'):
            return rest.split(':', 1)[1].lstrip('.')
fail = 0
cas = sorted({l.split(' ')[0] for l in lines if l.split(':')[0] not in switches})
sws = sorted({l.split(' ')[0] for l in lines if l.split(':')[0] in switches and not l.split(' ')[0].endswith(':0')})
def want(cond, msg):
    global fail
    if not cond:
        print('FAIL: ' + msg)
        fail = 1
want(cas and sws, 'no CA or switch port read back (%d, %d)' % (len(cas), len(sws)))
for k in cas:
    want(val(k, 'OperVLs') == 'VL0-3', '%s: OperVLs %s, max_op_vls 3 wants VL0-3' % (k, val(k, 'OperVLs')))
    sl = [l for l in lines if l.startswith(k + ' sl2vl ') and '|' in l and 'SL:' not in l]
    want(sl and sl[0].endswith('| 1| 2| 3| 0| 1| 2| 3| 1| 2| 3| 0| 1| 2| 3| 0|15|'),
         '%s: SL2VL %s, the config masked for VL0-3 wants 1 2 3 0 1 2 3 1 2 3 0 1 2 3 0 15' % (k, sl[:1]))
    vl = sorted((int(l.split(' ')[2]), l.split(' ', 3)[3]) for l in lines if l.startswith(k + ' vlarb '))
    vl = [t for _, t in vl]
    i = next((j for j, t in enumerate(vl) if t.startswith('# Low')), None)
    nums = lambda t: [int(x, 16) for x in re.findall(r'0x[0-9a-f]+', t)]
    want(i is not None and nums(vl[i + 1]) == [0, 1, 2, 3, 0, 0, 0, 0] and
         nums(vl[i + 2]) == [8, 16, 32, 64, 1, 0, 0, 0], '%s: VLArb low table %s' % (k, vl[i:i + 3] if i is not None else vl))
linked = [k for k in sws if val(k, 'OperVLs') == 'VL0-3']
want(linked, 'no switch port with OperVLs VL0-3')
hoq = {val(k, 'HoqLife') for k in linked}
want('14' in hoq and '18' in hoq, 'switch ports HoqLife %s: want 14 towards CAs, 18 between switches' % sorted(hoq))
print('own settings: %d CA ports, %d linked switch ports checked' % (len(cas), len(linked)))
sys.exit(fail)
PY

n=$(wc -l <"$work/dump.smd")
[ "$n" -gt 400 ] || bad "only $n lines read back from smd's fabric"
if ! diff -u "$work/dump.osm" "$work/dump.smd" >"$work/diff"; then
	bad "ports read differently after OpenSM (-) and smd (+):"
	head -40 "$work/diff"
fi
grep -q 'OperVLs:\.*VL0-7$' "$work/dump.smd" || bad "no port with OperationalVLs VL0-7"
if grep 'OperVLs:' "$work/dump.smd" | grep -v 'VL0-7$' | grep -q ':[1-9] '; then
	bad "a linked port without VL0-7"
fi
grep -q 'sl2vl .*| 0| 1| 2| 3| 4| 5| 6| 7| 0| 1| 2| 3| 4| 5| 6| 7|' "$work/dump.smd" ||
	bad "no SL2VL table masked for VL0-7"
[ $fail = 0 ] && echo "PASS: port configuration under ibsim: $n values as OpenSM --qos sets them; a second run writes nothing"
exit $fail
