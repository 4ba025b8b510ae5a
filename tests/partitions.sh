#!/bin/sh
# SPDX-License-Identifier: MIT
# Partitions files through the programs, without ibsim:
#  - smd --dry-run --partitions FILE: the report's partitions section (text and
#    JSON: partitions, member ports per partition), OpenSM's own examples as
#    they are; a bad file exits 1 with FILE:LINE; the report without
#    --partitions has no partitions section;
#  - smd --check-config with partition_config_file: a bad file is refused with
#    smd.yaml's FILE:LINE and the partitions file's FILE:LINE;
#  - smd --once (mock) --partitions: P_Key tables managed, a second run writes
#    nothing (the mock keeps no state across runs, so: blocks read > 0 and the
#    counts are in the JSON summary); without a file, OpenSM's default
#    partition: tables managed, nothing to write on reset tables; every kind
#    of partitions error exits 1.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
need_python
scratch partitions
net="$top_srcdir/tests/data/ft-small.net"

# OpenSM's doc/partition-config.txt examples, as they are (the fuzz seed without its selector byte)
tail -c +2 "$top_srcdir/fuzz/corpus/partitions/opensm-examples" >"$work/ex.conf"
"$smd" --dry-run -t "$net" --partitions "$work/ex.conf" --report "$work/r.txt" 2>"$work/dr.err" ||
	bad "dry-run --partitions failed: $(cat "$work/dr.err")"
grep -q "^partitions: 4 from $work/ex.conf" "$work/r.txt" || bad "text report: no partitions section: $(cat "$work/r.txt")"
grep -q "0x7fff Default  *24 /  *0 /  *0  ipoib  6 multicast groups" "$work/r.txt" ||
	bad "text report: the default partition line: $(grep 0x7fff "$work/r.txt")"
"$smd" --dry-run -t "$net" --partitions "$work/ex.conf" --json >"$work/r.json" 2>/dev/null ||
	bad "dry-run --partitions --json failed"
[ "$(json "$work/r.json" "[(p['name'], p['pkey'], p['full'], p['limited']) for p in r['partitions']['list']]")" = \
  "[('Default', 32767, 24, 0), ('NewPartition', 1, 0, 0), ('YetAnotherOne', 768, 0, 24), ('ShareIO', 128, 0, 0)]" ] ||
	bad "JSON report partitions: $(json "$work/r.json" "r.get('partitions')")"
"$smd" --dry-run -t "$net" --json >"$work/r0.json" 2>/dev/null
[ "$(json "$work/r0.json" "'partitions' in r")" = False ] || bad "a report without --partitions has a partitions key"

# every kind of error: exit 1, FILE:LINE
i=0
while IFS='|' read -r text want; do
	i=$((i + 1))
	printf '%b' "$text" >"$work/bad$i.conf"
	"$smd" --dry-run -t "$net" --partitions "$work/bad$i.conf" >"$work/bad$i.out" 2>&1
	rc=$?
	[ $rc = 1 ] || bad "bad file $i: exit $rc (want 1)"
	grep -qF "$work/bad$i.conf:$want" "$work/bad$i.out" || bad "bad file $i: want '$want', got: $(cat "$work/bad$i.out")"
done <<'EOF2'
Default=0x7fff ALL=full;\n|1: no partition definition found
A=1: ALL;\nB=0xzz: ALL;\n|2: P_Key: '0xzz' is not a number
A=1,colour=red: ALL;|1: unknown partition flag 'colour'
A=1,mtu=7: ALL;|1: mtu: 7 is out of range
A=1:\n ALL,\n 0x12x;|3: bad port GUID '0x12x'
A=1: ALL=most;|1: unknown membership 'most'
A=1:\n mgid=fe80::1\n;|2: mgid fe80::1 is not a multicast GID
A=1: mgid=ff12:401b::1,mtu=5;|1: IP group ff12:401b::1: rate 3 and mtu 5 must be the partition's
EOF2

# the key in smd.yaml: refused with both places named
printf 'lmc: 0\npartition_config_file: %s\n' "$work/bad3.conf" >"$work/smd.yaml"
"$smd" --check-config -c "$work/smd.yaml" >"$work/cc.out" 2>&1 && bad "--check-config accepted a bad partitions file"
grep -qF "$work/smd.yaml:2: partition_config_file: $work/bad3.conf:1: unknown partition flag" "$work/cc.out" ||
	bad "--check-config: $(cat "$work/cc.out")"
printf 'partition_config_file: %s\n' "$work/ex.conf" >"$work/ok.yaml"
"$smd" --check-config -c "$work/ok.yaml" >/dev/null 2>&1 || bad "--check-config refused OpenSM's examples"

# --once on the mock: the P_Key counts in the summary
"$smd" --once --backend mock --topology "$net" --state-dir "$work/st" --partitions "$work/ex.conf" --json \
	>"$work/once.json" 2>"$work/once.err" || bad "smd --once --partitions failed: $(cat "$work/once.err")"
p=$(json_num "$work/once.json" pkey_ports) r=$(json_num "$work/once.json" pkey_blocks_read)
[ "${p:-0}" -gt 0 ] && [ "${r:-0}" -gt 0 ] || bad "smd --once --partitions: pkey_ports ${p:-?}, blocks read ${r:-?}"
"$smd" --once --backend mock --topology "$net" --state-dir "$work/st2" --json >"$work/once0.json" 2>/dev/null
# without a file: OpenSM's default partition, already at index 0 of every reset table (nothing to write)
p=$(json_num "$work/once0.json" pkey_ports) w=$(json_num "$work/once0.json" pkey_blocks_written)
[ "${p:-0}" -gt 0 ] && [ "$w" = 0 ] ||
	bad "smd --once without partitions: pkey_ports ${p:-?} (want > 0), blocks written ${w:-?} (want 0)"
"$smd" --once --backend mock --topology "$net" --state-dir "$work/st3" --partitions "$work/bad5.conf" \
	>"$work/once_bad.out" 2>&1
rc=$?
[ $rc = 1 ] || bad "smd --once with a bad partitions file: exit $rc (want 1)"
grep -qF "bad5.conf:3: bad port GUID" "$work/once_bad.out" || bad "smd --once bad file: $(cat "$work/once_bad.out")"

[ $fail = 0 ] && echo "PASS: partitions files through dry-run, --check-config and --once"
exit $fail
