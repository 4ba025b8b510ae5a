#!/bin/sh
# SPDX-License-Identifier: MIT
# Partitions under ibsim, checked with tools we did not write (OpenSM as the
# reference, infiniband-diags' smpquery and saquery) on tests/data/ft-small.net
# (8 switches, 16 hosts; the SM at host00).
#  1. OpenSM: a fresh ibsim, `opensm --once -P p1.conf` (a partitions.conf
#     OpenSM accepts: ipoib flags, indx0, a prefix membership "limi", both, SELF,
#     ALL_CAS, ALL_SWITCHES, GUIDs), every CA port's and every switch port's
#     P_Key table read back with `smpquery pkeys`; then `opensm --once -P
#     p2.conf` (a partition removed, one added, a member added) over it, read
#     back again.
#  2. smd --once on a fresh ibsim with OpenSM's guid2lid (same LIDs) and
#     --partitions p1.conf: the same tables as OpenSM's, port for port; again
#     with p1.conf: no P_Key block written; with p2.conf: the same tables as
#     OpenSM's, and exactly the blocks that changed written (counted from the
#     read-backs).
#  3. smd -f --partitions FILE (the daemon, its own ibsim client), FILE being
#     p1.conf, then p2.conf written over it and `smctl reload`: the tables
#     after the reload are OpenSM's p2 tables; saquery PKeyTableRecord (with
#     the SM_Key) gives what smpquery reads; a PathRecord between two hosts
#     sharing only a limited membership is refused, one between two full
#     members of a partition carries its P_Key.
#  4. No partitions file: `opensm --once` on a fresh ibsim (-P naming no
#     file: OpenSM's default partition, Default=0x7fff, ipoib : ALL=full),
#     then smd --once without --partitions on another fresh ibsim with that
#     run's guid2lid: the same tables, port for port.
# (Bad files, the dry-run and --check-config: tests/partitions.sh.)
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
need_python
need_tools "Debian packages infiniband-diags, opensm, ibsim-utils" saquery smpquery opensm ibsim
. "$top_srcdir/tests/lib-ibsim.sh"
scratch pkeyibsim
umad2sim_supp
net="$top_srcdir/tests/data/ft-small.net"
SMHOST=host00
CLHOST=host05

# "sw GUID" and "ca PORTGUID NAME" lines of the net file
python3 - "$net" >"$work/nodes" <<'EOF'
import re, sys
guid = None
for line in open(sys.argv[1]):
    m = re.match(r'(caguid|switchguid)=(0x[0-9a-fA-F]+)', line)
    if m: guid = int(m.group(2), 16)
    m = re.match(r'(Ca|Switch)\s+\d+\s+"([^"]+)"', line)
    if m:
        print('sw 0x%016x %s' % (guid, m.group(2)) if m.group(1) == 'Switch' else 'ca 0x%016x %s' % (guid + 1, m.group(2)))
EOF
guid_of() { awk -v n="$1" '$3 == n { print $2 }' "$work/nodes"; }
h01=$(guid_of host01) h03=$(guid_of host03) h05=$(guid_of host05) h06=$(guid_of host06)
h07=$(guid_of host07) h08=$(guid_of host08) h09=$(guid_of host09)
cat >"$work/p1.conf" <<EOF
# partitions as OpenSM reads them
Default=0x7fff, ipoib : ALL=full ;
Storage=0x0100, indx0 : $h01=full, $h03, $h05=full ;
Compute = 0x2, ipoib, mtu=5, rate=7 : ALL_CAS=limi;
Mgmt=0x0001: ALL_SWITCHES=full,
	SELF=full;
Odd = 0x1234 : $h06=full, $h07=both ; Lim=0x0040: $h08, $h09 ;
EOF
cat >"$work/p2.conf" <<EOF
Default=0x7fff, ipoib : ALL=full ;
Compute = 0x2, ipoib, mtu=5, rate=7 : ALL_CAS=limi;
Mgmt=0x0001: ALL_SWITCHES=full, SELF=full;
Odd = 0x1234 : $h06=full, $h07=both, $h08=full ;
New=0x0300 : $h01=full, $h03=full ;
Lim=0x0040: $h08, $h09 ;
EOF

# lid_of GUID: from the guid2lid file kept from OpenSM
lid_of() { awk -v g="$1" 'tolower($1) == g { print $2 + 0 }' "${G2L:-$work/guid2lid}"; }

# dump OUT: every CA port's and every switch port's P_Key table, keyed by GUID and port
dump() {
	: >"$1"
	while read -r kind g name; do
		l=$(lid_of "$g")
		[ -n "$l" ] || { bad "no LID for $name ($g)"; continue; }
		if [ "$kind" = ca ]; then
			echo "$name $g port 1" >>"$1"
			SIM_HOST=$SMHOST IBSIM_RUN_TIMEOUT=20 ibsim_run smpquery pkeys "$l" >>"$1" 2>&1
		else
			for p in 0 1 2 3 4 5 6 7 8; do
				echo "$name $g port $p" >>"$1"
				SIM_HOST=$SMHOST IBSIM_RUN_TIMEOUT=20 ibsim_run smpquery pkeys "$l" "$p" >>"$1" 2>&1
			done
		fi
	done <"$work/nodes"
}

# ---- 1. OpenSM ---------------------------------------------------------------------
scratch_ibsim "$net" || { echo "FAIL: ibsim did not start"; exit 1; }
SIM_HOST=$SMHOST ibsim_opensm_once -P "$work/p1.conf" || { echo "FAIL: opensm --once -P p1.conf"; exit 1; }
grep -q "Partition configuration.*in error" "$IBSIM_DIR/opensm.log" && bad "OpenSM did not accept p1.conf"
cp "$IBSIM_DIR/guid2lid" "$work/guid2lid" || { echo "FAIL: no guid2lid from OpenSM"; exit 1; }
dump "$work/osm1"
SIM_HOST=$SMHOST ibsim_opensm_once -P "$work/p2.conf" || { echo "FAIL: opensm --once -P p2.conf"; exit 1; }
dump "$work/osm2"
ibsim_stop
grep -q '0x8100' "$work/osm1" || bad "OpenSM's tables lack the Storage partition (0x8100): the reference is wrong"
# Storage is flagged indx0: its P_Key heads the tables of its members (host01 full, host03 limited)
first() { awk -v n="$2" '$1 == n && $3 == "port" { f = 1; next } f && /^ *0:/ { print $2; exit }' "$1"; }
[ "$(first "$work/osm1" host01)/$(first "$work/osm1" host03)" = "0x8100/0x0100" ] ||
	bad "OpenSM did not put Storage (indx0) at index 0: host01 $(first "$work/osm1" host01), host03 $(first "$work/osm1" host03)"

# ---- 2. smd --once -----------------------------------------------------------------
once() {
	SIM_HOST=$SMHOST ibsim_run "$smd" --once --state-dir "$work/state" --guid2lid "$work/guid2lid" \
		--partitions "$1" --json >"$2" 2>"$2.err"
}
scratch_ibsim "$net" || { echo "FAIL: ibsim did not start"; exit 1; }
once "$work/p1.conf" "$work/run1.json" || { bad "smd --once --partitions p1.conf failed"; cat "$work/run1.json.err"; }
dump "$work/smd1"
if diff "$work/osm1" "$work/smd1" >"$work/d1"; then
	echo "p1.conf: smd's P_Key tables are OpenSM's ($(grep -c ' port ' "$work/smd1") ports; index 0 of" \
		"host01/host03: $(first "$work/smd1" host01)/$(first "$work/smd1" host03), Storage is indx0)"
else
	bad "p1.conf: smd's P_Key tables differ from OpenSM's"; head -30 "$work/d1"
fi
once "$work/p1.conf" "$work/run2.json" || bad "second smd --once failed"
w2=$(json_num "$work/run2.json" pkey_blocks_written)
[ "$w2" = 0 ] || bad "a second smd --once with the same partitions wrote ${w2:-?} P_Key blocks (want 0)"
once "$work/p2.conf" "$work/run3.json" || bad "smd --once --partitions p2.conf failed"
dump "$work/smd2"
want=$(pkey_blocks_differ "$work/smd1" "$work/smd2" 2>/dev/null)
w3=$(json_num "$work/run3.json" pkey_blocks_written)
[ "$w3" = "$want" ] || bad "p2.conf: smd wrote ${w3:-?} P_Key blocks, $want changed"
echo "p2.conf: $w3 P_Key blocks written, $want changed; $(json_num "$work/run3.json" pkey_blocks_read) read"
if diff "$work/osm2" "$work/smd2" >"$work/d2"; then
	echo "p2.conf over p1.conf: smd's P_Key tables are OpenSM's"
else
	bad "p2.conf over p1.conf: smd's P_Key tables differ from OpenSM's"; head -30 "$work/d2"
fi
ibsim_stop

# ---- 3. the daemon: reload, SA ------------------------------------------------------
scratch_ibsim "$net" || { echo "FAIL: ibsim did not start"; exit 1; }
sock="$work/smd.sock"
cp "$work/p1.conf" "$work/live.conf"
rm -rf "$work/state"
if SMD_TIMEOUT=300 ibsim_smd_start $SMHOST --guid2lid "$work/guid2lid" --partitions "$work/live.conf"; then
	sw0=$(json "$work/st.json" "r['sweeps']")
	cp "$work/p2.conf" "$work/live.conf"
	"$smctl" --socket "$sock" reload >"$work/reload.out" 2>&1 || bad "smctl reload failed: $(cat "$work/reload.out")"
	i=0
	while [ $i -lt 300 ]; do
		"$smctl" --socket "$sock" --json status >"$work/st2.json" 2>/dev/null &&
			[ "$(json "$work/st2.json" "r['sweeps'] > $sw0 and r['sweep_running_s'] is None")" = True ] && break
		sleep 0.1
		i=$((i + 1))
	done
	dump "$work/dmn2"
	if diff "$work/osm2" "$work/dmn2" >"$work/d3"; then
		echo "daemon: after the reload with p2.conf the P_Key tables are OpenSM's"
	else
		bad "daemon: after the reload the P_Key tables differ from OpenSM's p2 tables"; head -30 "$work/d3"
	fi
	# P_KeyTableRecord against the table smpquery reads (host05 and a leaf's port 1)
	l5=$(lid_of "$h05")
	ibsim_at $CLHOST saquery --smkey 1 PKTR "$l5/1/0" >"$work/pktr" 2>&1
	sa=$(grep -io 'pkey_tbl.*' "$work/pktr" | head -3)
	grep -q '0xFFFF\|0xffff' "$work/pktr" || bad "saquery PKTR $l5/1/0: no 0xFFFF entry: $(head -20 "$work/pktr")"
	grep -q '0x0002' "$work/pktr" || bad "saquery PKTR $l5/1/0 lacks the Compute P_Key 0x0002: $(head -20 "$work/pktr")"
	echo "saquery PKTR: ${sa:-$(grep -c . "$work/pktr") lines}"
	# PathRecord: host08 and host09 share only limited memberships (Lim, Compute; Default is full for all,
	# so use the P_Key: Lim 0x0040 limited both -> refused); host06 and host08 are full members of Odd
	l8=$(lid_of "$h08") l9=$(lid_of "$h09") l6=$(lid_of "$h06")
	ibsim_at $CLHOST saquery PR --slid "$l8" --dlid "$l9" --pkey 0x0040 >"$work/pr_lim" 2>&1
	grep -qi 'dlid' "$work/pr_lim" && bad "PathRecord $l8 -> $l9 with P_Key 0x0040 (both limited) answered: $(cat "$work/pr_lim")"
	ibsim_at $CLHOST saquery PR --slid "$l6" --dlid "$l8" --pkey 0x9234 >"$work/pr_odd" 2>&1
	grep -qi 'pkey.*0x9234' "$work/pr_odd" || bad "PathRecord $l6 -> $l8 with P_Key 0x9234 (both full in Odd): $(cat "$work/pr_odd")"
	ibsim_at $CLHOST saquery PR --slid "$l6" --dlid "$l9" --pkey 0x9234 >"$work/pr_non" 2>&1
	grep -qi 'dlid' "$work/pr_non" && bad "PathRecord $l6 -> $l9 with P_Key 0x9234 (host09 not a member) answered"
	echo "PathRecord: non-members and limited-only pairs refused, full members of 0x1234 answered"
else
	bad "smd -f --partitions did not come up"
fi
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
pid=""
ibsim_stop

# ---- 4. no partitions file: OpenSM's default partition ------------------------------
scratch_ibsim "$net" || { echo "FAIL: ibsim did not start"; exit 1; }
SIM_HOST=$SMHOST ibsim_opensm_once -P "$work/no-such-partitions.conf" || { echo "FAIL: opensm --once (no file)"; exit 1; }
cp "$IBSIM_DIR/guid2lid" "$work/guid2lid0" || { echo "FAIL: no guid2lid from OpenSM (no file)"; exit 1; }
G2L="$work/guid2lid0"
dump "$work/osm0"
ibsim_stop
grep -q '0xffff' "$work/osm0" || bad "OpenSM without a file: no 0xffff in its tables: the reference is wrong"
scratch_ibsim "$net" || { echo "FAIL: ibsim did not start"; exit 1; }
SIM_HOST=$SMHOST ibsim_run "$smd" --once --state-dir "$work/state0" --guid2lid "$work/guid2lid0" --json \
	>"$work/run0.json" 2>"$work/run0.json.err" || { bad "smd --once without a partitions file failed"; cat "$work/run0.json.err"; }
dump "$work/smd0"
ibsim_stop
G2L=
if diff "$work/osm0" "$work/smd0" >"$work/d0"; then
	echo "no file: smd's P_Key tables are OpenSM's ($(grep -c ' port ' "$work/smd0") ports;" \
		"$(json_num "$work/run0.json" pkey_ports) managed, $(json_num "$work/run0.json" pkey_blocks_written) blocks written)"
else
	bad "no file: smd's P_Key tables differ from OpenSM's"; head -30 "$work/d0"
fi

[ $fail = 0 ] && echo "PASS: partitions under ibsim (P_Key tables as OpenSM's with and without a file, minimal writes, reload, SA)"
exit $fail
