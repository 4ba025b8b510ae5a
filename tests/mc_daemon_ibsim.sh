#!/bin/sh
# SPDX-License-Identifier: MIT
# The daemon's multicast and partitions under ibsim, end to end (issue 14's
# last gaps; tests/data/ft-small.net, smd -f --plane ibsim:host00 with a
# partitions file: the default partition and a tenant's, 0x0002):
#  1. The MFT-only pass: a join that creates a group (host09: its 2X link
#     sets the group's rate), a second member's join (host05), a leave,
#     the last leave (the group deleted), each costs one "multicast" cycle
#     whose SMPs (smd's own counters: status last_sweep) are MFT blocks
#     only: no LFT block, no PortInfo Set, no sweep. dump_mfts read back
#     after each join: every member reaches every other through the MFTs
#     (tests/mft_probe check), the SA's MFTRecord (saquery MFTR: the
#     snapshot the pass published) has it, and after the last leave the
#     MLID is gone.
#  2. Traps 66/67: a subscriber (tests/sa_client -s 66,67 on the issm
#     device) gets the Report of the group created and of the group
#     deleted, with the group's MGID, and answers it.
#  3. A partitions reload (SIGHUP with a changed file): a bad file is
#     refused with FILE:LINE and the running one kept (no P_Key written);
#     a good one (tenant 0x0002 dropped, 0x0003 added for host09) writes
#     only the P_Key blocks that differ (smpquery pkeys read back before
#     and after), the SA's groups follow (saquery -g: 0x0003's broadcast
#     group made, 0x0002's deleted with a trap 67 to a subscriber), and
#     MCMemberRecord/PathRecord membership answers use the new file.
# Every client runs under `timeout -s KILL` (umad2sim never times out).
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
need_python
need_tools "Debian packages infiniband-diags, ibsim-utils" saquery ibstat smpquery dump_mfts ibnetdiscover ibsim
. "$top_srcdir/tests/lib-ibsim.sh"
scratch mcdmn
umad2sim_supp
mc="$top_builddir/tests/sa_mc_client"
sub="$top_builddir/tests/sa_client"
probe="$top_builddir/tests/mft_probe"
net="$top_srcdir/tests/data/ft-small.net"
sock="$work/smd.sock"

st() { "$smctl" --socket "$sock" --json status >"$work/st.json" 2>&1; }
# cycles: sweeps and multicast cycles completed (what sweep_history's seq counts)
cycles() { st && json "$work/st.json" "r['sweeps'] + r['mcast_cycles']"; }
# wait_cycle N: status shows more than N cycles, and none running (20 s at most)
wait_cycle() {
	_i=0
	while [ $_i -lt 200 ]; do
		if st && [ "$(json "$work/st.json" "r['sweeps'] + r['mcast_cycles'] > $1 and r['sweep_running_s'] is None")" = True ]; then
			return 0
		fi
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}
# cost WHAT N [MIN]: the cycles after N: one multicast cycle, at least MIN (1) SMPs, MFT SMPs only
cost() {
	python3 - "$work/st.json" "$1" "$2" "${3:-1}" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
what, n0, least = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
new = [s for s in r['sweep_history'] if s['seq'] > n0]
kinds = ' '.join('%s/%s' % (s['kind'], s['reason']) for s in new)
smps = sum(s['smps'] for s in new)
lft = sum(s['lft_blocks_written'] + s['lft_blocks_read'] for s in new)
pi = sum(s['portinfo_sets'] for s in new)
print('%s: cycles %s: SMPs %d (MFT blocks %d), LFT blocks %d, PortInfo Sets %d, %.3f s' % (what, kinds, smps,
      sum(s.get('mft_blocks_written', 0) for s in new), lft, pi, sum(s['seconds'] for s in new)))
ok = len(new) == 1 and new[0]['kind'] == 'multicast' and smps >= least and lft == 0 and pi == 0
sys.exit(0 if ok else 1)
EOF
}
# mlid_of FILE: the MLID a join printed
mlid_of() { sed -n 's/.* mlid \(0x[0-9a-f]*\) .*/\1/p' "$1" | head -1; }
# flood MLID GUID...: dump_mfts read back carries the group (every member reaches every other)
flood() {
	_m=$1
	shift
	echo "$_m $(for g in "$@"; do printf '%s:1 ' "$g"; done)" >"$work/groups.txt"
	T=30 ibsim_at host00 dump_mfts >"$work/mfts.txt" 2>"$work/dump.err" || { bad "dump_mfts: $(cat "$work/dump.err")"; return 1; }
	"$probe" check "$work/topo.ibnd" "$work/mfts.txt" "$work/groups.txt" >"$work/flood.out" 2>&1
}

cat >"$work/partitions.conf" <<EOF
Default=0x7fff, ipoib : ALL=full ;
Tenant=0x0002, ipoib : HOST05=full, SELF=full ;
EOF
IBSIM_CONSOLE=1 scratch_ibsim "$net" || { echo "FAIL: ibsim did not start"; exit 1; }
g05=$(ibsim_at host05 ibstat -p 2>/dev/null | head -1)
g09=$(ibsim_at host09 ibstat -p 2>/dev/null | head -1)
[ -n "$g05" ] && [ -n "$g09" ] || { echo "FAIL: no port GUIDs (ibstat -p)"; exit 1; }
sed -i "s/HOST05/$g05/" "$work/partitions.conf"
printf 'sweep_interval: 0\npartition_config_file: %s\n' "$work/partitions.conf" >"$work/smd.yaml"
ibsim_smd_start host00 -c "$work/smd.yaml" || { bad "smd or its SA did not come up"; exit 1; }
wait_cycle 0
# a first sweep that lost answers is swept again (heavy): the counts below want a quiet plane
_i=0
until st && [ "$(json "$work/st.json" "r['state'] == 'up' and r['planes_incomplete'] == 0")" = True ]; do
	_i=$((_i + 1))
	[ $_i -lt 300 ] || { bad "the plane is not up and complete after 30 s"; break; }
	sleep 0.1
done
T=30 ibsim_at host00 ibnetdiscover >"$work/topo.ibnd" 2>/dev/null || bad "ibnetdiscover failed"

# ---- 1. the MFT-only pass -----------------------------------------------------------------
# a subscriber to traps 66/67 for part 2 (a create, a delete)
T=60 ibsim_at host03 "$sub" -I -s 66,67 -w 30000 -n 2 >"$work/sub1.out" 2>&1 &
subp=$!
wait_line "$work/sub1.out" "subscribed 67" 100 || bad "sa_client did not subscribe: $(cat "$work/sub1.out")"
n=$(cycles)
sw0=$(json "$work/st.json" "r['sweeps']") mc0=$(json "$work/st.json" "r['mcast_cycles']")
ibsim_at host09 "$mc" -j ff15:1234::1 >"$work/join1" 2>&1 || bad "join (create): $(cat "$work/join1")"
mlid=$(mlid_of "$work/join1")
wait_cycle "$n" || bad "no cycle after the create"
# one member: no tree to program (smd programs groups of two or more)
cost "create (host09)" "$n" 0 || bad "the create cost more than MFT blocks"
n=$(cycles)
ibsim_at host05 "$mc" -j ff15:1234::1 >"$work/join2" 2>&1 || bad "join (second member): $(cat "$work/join2")"
wait_cycle "$n" || bad "no cycle after the join"
cost "join (host05)" "$n" || bad "the join cost more than MFT blocks"
flood "$mlid" "$g05" "$g09" || bad "after the join: $(cat "$work/flood.out")"
echo "dump_mfts after the join ($mlid): $(cat "$work/flood.out")"
# the SA answers from the snapshot the pass published: host05's leaf (leaf1) forwards the MLID
leaf1=$(sed -n 's/^Switch.*"ftsmall leaf1".* lid \([0-9]*\) .*/\1/p' "$work/topo.ibnd" | head -1)
T=20 ibsim_at host05 saquery MFTR "$leaf1" >"$work/mftr" 2>&1
mask=$(awk -v m="$mlid" '$1 == m { print $2; exit }' "$work/mftr")
echo "saquery MFTR $leaf1 (leaf1) after the join: $mlid port mask ${mask:-none}"
[ -n "$mask" ] && [ "$mask" != 0x0000 ] || bad "the SA's MFTRecord of leaf1 lacks $mlid after the join: $(head -8 "$work/mftr")"
n=$(cycles)
ibsim_at host05 "$mc" -l ff15:1234::1 >"$work/leave1" 2>&1 || bad "leave: $(cat "$work/leave1")"
wait_cycle "$n" || bad "no cycle after the leave"
cost "leave (host05)" "$n" || bad "the leave cost more than MFT blocks"
n=$(cycles)
ibsim_at host09 "$mc" -l ff15:1234::1 >"$work/leave2" 2>&1 || bad "leave (last): $(cat "$work/leave2")"
wait_cycle "$n" || bad "no cycle after the last leave"
cost "delete (host09 leaves last)" "$n" 0 || bad "the delete cost more than MFT blocks"
# the four multicast cycles have their own counter: sweeps counts sweeps only
st
got="$(json "$work/st.json" "r['sweeps']") $(json "$work/st.json" "r['mcast_cycles']")"
echo "status after four multicast cycles: sweeps $sw0 -> ${got% *}, mcast_cycles $mc0 -> ${got#* }"
[ "$got" = "$sw0 $((mc0 + 4))" ] || bad "sweeps/mcast_cycles $got, want $sw0 $((mc0 + 4))"
T=30 ibsim_at host00 dump_mfts >"$work/mfts.txt" 2>&1
if grep -q "^$mlid" "$work/mfts.txt"; then
	bad "dump_mfts: $mlid still programmed after its group went: $(grep "^$mlid" "$work/mfts.txt" | head -3)"
fi

# ---- 2. traps 66/67 -----------------------------------------------------------------------
wait $subp
rc=$?
cat "$work/sub1.out"
[ $rc = 0 ] || bad "traps 66/67: sa_client exited $rc (2 Reports expected)"
grep -q '^report .* trap 66 type 3 producer 4 .* gid ff15:1234::1 ' "$work/sub1.out" ||
	bad "no Report of trap 66 for ff15:1234::1"
grep -q '^report .* trap 67 type 3 producer 4 .* gid ff15:1234::1 ' "$work/sub1.out" ||
	bad "no Report of trap 67 for ff15:1234::1"

# ---- 3. a partitions reload ----------------------------------------------------------------
# dump OUT: the P_Key table of every CA port and of every switch port (smpquery pkeys), by node and port
dump() {
	python3 - "$work/topo.ibnd" >"$work/ports" <<'EOF'
import re, sys
kind = None
for line in open(sys.argv[1]):
    m = re.match(r'(Switch|Ca)\s+(\d+)\s+"[^"]*"\s+#\s+"([^"]*)"', line)
    if m:
        kind, nports, desc = m.group(1), int(m.group(2)), m.group(3).split()
        name = desc[-1] if kind == 'Switch' else '/'.join(desc)   # "ftsmall leaf0", "node02 mlx5_1"
        lid = re.search(r'lid (\d+)', line)
        if kind == 'Switch' and lid:
            for p in range(nports + 1):
                print('%s %s %d' % (name, lid.group(1), p))
        continue
    m = re.match(r'\[(\d+)\]\(\S+\)\s+"[^"]*"\S*\s+#\s*lid (\d+)', line)   # the CA's own LID, not the peer's
    if kind == 'Ca' and m:
        print('%s %s 1' % (name, m.group(2)))
EOF
	: >"$1"
	while read -r name l p; do
		echo "$name port $p" >>"$1"
		T=20 ibsim_at host00 smpquery pkeys "$l" "$p" >>"$1" 2>&1
	done <"$work/ports"
}
TENANT=ff12:401b:8002::ffff:ffff OTHER=ff12:401b:8003::ffff:ffff
dump "$work/pk1"
echo "P_Key tables: $(grep -c ' port ' "$work/pk1") ports read back"
ibsim_at host05 saquery -g >"$work/g1" 2>&1
grep -q "$TENANT" "$work/g1" || bad "before the reload: no broadcast group of 0x0002: $(cat "$work/g1")"
lid_at() { ibsim_at "$1" ibaddr 2>/dev/null | sed -n 's/.*LID start \(0x[0-9a-f]*\|[0-9]*\) .*/\1/p' | head -1; }
l00=$(lid_at host00) l05=$(lid_at host05) l09=$(lid_at host09)
[ -n "$l00" ] && [ -n "$l05" ] && [ -n "$l09" ] || bad "no LIDs from ibaddr ($l00 $l05 $l09)"
ibsim_at host09 saquery PR --slid "$l09" --dlid "$l00" --pkey 0x8003 >"$work/pr1" 2>&1
grep -qi 'dlid' "$work/pr1" && bad "before the reload: a PathRecord in 0x0003 (no such partition yet) answered"

# a bad file: refused with FILE:LINE, the running one kept
printf 'Default=0x7fff, ipoib : ALL=full ;\nBroken=0xzz : ALL ;\n' >"$work/partitions.conf"
n=$(cycles)
"$smctl" --socket "$sock" reload >"$work/reload.bad" 2>&1 && bad "a bad partitions file was accepted"
grep -q "partitions.conf:2" "$work/reload.bad" || bad "the bad file's refusal does not name FILE:2: $(cat "$work/reload.bad")"
echo "bad file: $(head -1 "$work/reload.bad")"
sleep 1
[ "$(cycles)" = "$n" ] || bad "a refused reload ran a cycle"
ibsim_at host05 saquery -g >"$work/g1b" 2>&1
grep -q "$TENANT" "$work/g1b" || bad "after a refused reload: the broadcast group of 0x0002 is gone"

# a good one: 0x0002 (host05) out, 0x0003 (host09) in
printf 'Default=0x7fff, ipoib : ALL=full ;\nOther=0x0003, ipoib : %s=full, SELF=full ;\n' "$g09" >"$work/partitions.conf"
T=60 ibsim_at host03 "$sub" -I -s 67 -w 30000 -n 1 >"$work/sub2.out" 2>&1 &
subp=$!
wait_line "$work/sub2.out" "subscribed 67" 100 || bad "sa_client did not subscribe: $(cat "$work/sub2.out")"
n=$(cycles)
"$smctl" --socket "$sock" reload >"$work/reload.good" 2>&1 || bad "reload failed: $(cat "$work/reload.good")"
wait_cycle "$n" || bad "no cycle after the reload"
dump "$work/pk2"
want=$(pkey_blocks_differ "$work/pk1" "$work/pk2" 2>"$work/pkdiff")
python3 - "$work/st.json" "$n" "$want" <<'EOF' || bad "the reload wrote more than the P_Key blocks that changed"
import json, sys
r = json.load(open(sys.argv[1]))
new = [s for s in r['sweep_history'] if s['seq'] > int(sys.argv[2])]
pk = sum(s['pkey_blocks_written'] for s in new)
lft = sum(s['lft_blocks_written'] for s in new)
pc = sum(s['portcfg_sets'] for s in new)
print('reload: cycles %s: %d SMPs, P_Key blocks written %d (%s differ in the read-back), LFT blocks %d, '
      'port configuration Sets %d, MFT blocks %d' % (' '.join('%s/%s' % (s['kind'], s['reason']) for s in new),
      sum(s['smps'] for s in new), pk, sys.argv[3], lft, pc, sum(s['mft_blocks_written'] for s in new)))
sys.exit(0 if pk == int(sys.argv[3]) and pk > 0 and lft == 0 and pc == 0 else 1)
EOF
echo "P_Key blocks that changed: $(tr '\n' ';' <"$work/pkdiff")"
wait $subp
cat "$work/sub2.out"
grep -q "^report .* trap 67 .* gid $TENANT " "$work/sub2.out" || bad "no Report of trap 67 for 0x0002's broadcast group"
ibsim_at host05 saquery -g >"$work/g2" 2>&1
grep -q "$TENANT" "$work/g2" && bad "after the reload: 0x0002's broadcast group is still there"
ibsim_at host09 saquery -g >"$work/g2" 2>&1
grep -q "$OTHER" "$work/g2" || bad "after the reload: no broadcast group of 0x0003: $(cat "$work/g2")"
echo "saquery -g after the reload: $(grep -c MGID "$work/g2") groups as host09 sees them, 0x0003's there, 0x0002's gone"
ibsim_at host09 saquery PR --slid "$l09" --dlid "$l00" --pkey 0x8003 >"$work/pr2" 2>&1
grep -qi 'pkey.*0x8003' "$work/pr2" || bad "after the reload: no PathRecord in 0x0003: $(cat "$work/pr2")"
ibsim_at host05 saquery PR --slid "$l05" --dlid "$l00" --pkey 0x8002 >"$work/pr3" 2>&1
grep -qi 'dlid' "$work/pr3" && bad "after the reload: a PathRecord in 0x0002 (removed) answered"
ibsim_at host09 "$mc" -j "$OTHER" -k 0x8003 >"$work/j3" 2>&1 || bad "host09 cannot join 0x0003's group: $(cat "$work/j3")"
ibsim_at host05 "$mc" -j "$OTHER" -k 0x8003 >"$work/j4" 2>&1 && bad "host05 (not in 0x0003) joined its group"
echo "membership after the reload: PathRecord and joins in 0x0003 for host09 only, 0x0002 refused"

kill -0 "$pid" 2>/dev/null || bad "smd died"
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
ibsim_stop
[ $fail = 0 ] && echo "PASS: the daemon's multicast and partitions under ibsim"
exit $fail
