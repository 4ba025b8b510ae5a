#!/bin/sh
# One LID policy in every mode (issue 16), on a mock fabric:
#   - `smd --once` and `smd -f` number a cold fabric alike (hosts first, then
#     switches), whatever runs first, and each keeps what the other numbered,
#     across a restart of each; every port is compared (node GUID, port, LID):
#     --once's through its guid2lid file and the dump's port GUIDs, the
#     daemon's through `smctl --json nodes`;
#   - a --guid2lid FILE (OpenSM's format) is honoured by the daemon as by --once;
#   - --once creates a state directory whose parents are missing (0755 for
#     the parents, 0750 for the state directory; an existing one keeps its mode);
#   - `smd --once --plane mock:DUMP` with one plane brings it up;
#   - on two planes (`smctl topo gen --planes 2 --split`), --once and the
#     daemon agree too, in either order.
# Only the PIDs started here are signalled; everything is removed on exit.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
need_python
scratch lidpol

# a cold copy of ft-small (every LID 0): its switch GUIDs sort below its hosts'
cold="$work/cold.ibnd"
sed -E 's/port 0 lid [0-9]+/port 0 lid 0/; s/# lid [0-9]+ lmc [0-9]+ /# lid 0 lmc 0 /; s/(") lid [0-9]+ /\1 lid 0 /g' \
	"$top_srcdir/tests/data/ft-small.ibnd" >"$cold"
sock="$work/sock"

# lids FORMAT FILE [DUMP...]: "NODEGUID PORT LID" lines, sorted; FORMAT g2l (a guid2lid file,
# mapped to nodes through the port GUIDs of the DUMPs, default $cold) or nodes (`smctl --json nodes`)
lids() {
	_f=$1 _p=$2
	shift 2
	[ $# -gt 0 ] || set -- "$cold"
	python3 - "$_f" "$_p" "$@" <<'EOF'
import json, re, sys
fmt, path = sys.argv[1:3]
out = []
if fmt == 'g2l':
	port = {}
	node = None
	for line in (l for d in sys.argv[3:] for l in open(d)):
		m = re.match(r'(Switch|Ca)\s+\d+\s+"[SH]-([0-9a-f]+)"', line)
		if m:
			node = int(m.group(2), 16)
			if m.group(1) == 'Switch':
				port[node] = (node, 0)
			continue
		m = re.match(r'\[(\d+)\]\(([0-9a-f]+)\)', line)
		if m and node is not None:
			port[int(m.group(2), 16)] = (node, int(m.group(1)))
	for line in open(path):
		f = line.split()
		if len(f) == 3 and int(f[0], 16) in port:
			n, p = port[int(f[0], 16)]
			out.append('0x%016x %d %d' % (n, p, int(f[1], 0)))
else:
	for pl in json.load(open(path))['planes']:
		for nd in pl['nodes']:
			g = int(nd['guid'], 16)
			if nd['type'] == 'Switch':
				out.append('0x%016x 0 %d' % (g, nd['lid']))
			else:
				for i, l in enumerate(nd.get('port_lids', [])):
					if l:
						out.append('0x%016x %d %d' % (g, i + 1, l))
print('\n'.join(sorted(out)))
EOF
}

# once NAME STATE [ARGS...]: smd --once on $cold, LIDs to $work/NAME.lids
once() {
	_n=$1 _st=$2
	shift 2
	if ! "$smd" --once -q --backend mock --topology "$cold" --state-dir "$_st" "$@" \
		>"$work/$_n.out" 2>"$work/$_n.err"; then
		bad "$_n: smd --once failed"
		cat "$work/$_n.err"
	fi
	lids g2l "$_st/guid2lid" >"$work/$_n.lids"
}

# dmn NAME STATE [ARGS...]: smd -f on $cold until its first cycle, LIDs to $work/NAME.lids, stopped
dmn() {
	_n=$1 _st=$2
	shift 2
	rm -f "$sock"
	if ! dmn_start "$_n" --backend mock --topology "$cold" --state-dir "$_st" --socket "$sock" "$@"; then
		bad "$_n: the daemon did not come up"
		return
	fi
	"$smctl" --socket "$sock" --json nodes >"$work/$_n.json" || bad "$_n: smctl nodes failed"
	dmn_stop || bad "$_n: the daemon did not exit 0"
	lids nodes "$work/$_n.json" >"$work/$_n.lids"
}

# same A B WHAT: the LID lists A and B are identical (and not empty)
same() {
	if [ ! -s "$work/$1.lids" ]; then
		bad "$3: no LIDs read ($1)"
	elif ! diff "$work/$1.lids" "$work/$2.lids" >"$work/diff"; then
		bad "$3: LIDs differ ($1 vs $2)"
		head -20 "$work/diff"
	fi
}

# 1. --once first, then the daemon, then each again
once o1 "$work/a"
n=$(wc -l <"$work/o1.lids")
[ "$n" -eq 24 ] || bad "once cold: $n LID ports, expected 24 (8 switches, 16 CA ports)"
dmn d1 "$work/a"
same o1 d1 "once then daemon"
dmn d2 "$work/a"
same o1 d2 "daemon restart after once"
once o2 "$work/a"
same o1 o2 "once after the daemon"

# 2. the daemon first: it numbers a cold fabric as --once does
dmn d3 "$work/b"
same o1 d3 "cold numbering (once vs daemon)"
once o3 "$work/b"
same d3 o3 "daemon then once"
once o4 "$work/b"
same d3 o4 "once restart after the daemon"
dmn d4 "$work/b"
same d3 d4 "daemon restart"

# hosts first: the lowest LIDs are the CA ports'
python3 - "$work/o1.lids" <<'EOF' || bad "cold numbering: the CA ports do not hold LIDs 1..16"
import sys
ca = sorted(int(l.split()[2]) for l in open(sys.argv[1]) if l.split()[1] != '0')
sys.exit(0 if ca == list(range(1, 17)) else 1)
EOF

# 3. --guid2lid FILE (OpenSM's format, LIDs of its own) given to the daemon and to --once
awk '{ printf "%s 0x%04x 0x%04x\n", $1, NR + 99, NR + 99 }' "$work/a/guid2lid" >"$work/opensm.g2l"
lids g2l "$work/opensm.g2l" >"$work/g.lids"
dmn d5 "$work/c" --guid2lid "$work/opensm.g2l"
same g d5 "daemon --guid2lid"
once o5 "$work/d" --guid2lid "$work/opensm.g2l"
same g o5 "once --guid2lid"
dmn d6 "$work/c"
same g d6 "daemon restart after --guid2lid"
# a state directory holding only a guid2lid (an older smd --once's, in any order): kept
mkdir "$work/g"
cp "$work/opensm.g2l" "$work/g/guid2lid"
dmn d7 "$work/g"
same g d7 "daemon on a state dir with only a guid2lid"

# 4. a state directory whose parents are missing
umask 022
once o6 "$work/x/y/state"
same o1 o6 "once in a new state directory"
modes=$(stat -c '%a' "$work/x" "$work/x/y" "$work/x/y/state" | tr '\n' ' ')
[ "$modes" = "755 755 750 " ] || bad "state directory modes: $modes (expected 755 755 750)"
mkdir -m 0711 "$work/e"
once o7 "$work/e"
[ "$(stat -c '%a' "$work/e")" = 711 ] || bad "an existing state directory's mode was changed"

# 5. one plane given as --plane mock:DUMP
if "$smd" --once -q --plane "mock:$cold" --state-dir "$work/f" >"$work/p.out" 2>"$work/p.err"; then
	lids g2l "$work/f/guid2lid" >"$work/p.lids"
	same o1 p "once --plane mock:DUMP"
else
	bad "smd --once --plane mock:DUMP (one plane) failed"
	cat "$work/p.err"
fi

# 6. two planes (host LIDs shared by the planes): --once then the daemon, the daemon then --once
"$smctl" topo gen fat-tree --radix 8 --hosts 8 --planes 2 --split --no-lids -o "$work/mp" >/dev/null ||
	bad "topo gen --planes 2"
pl="--plane mock:$work/mp.0 --plane mock:$work/mp.1"
# shellcheck disable=SC2086
"$smd" --once -q $pl --state-dir "$work/m1" >"$work/m1.out" 2>"$work/m1.err" || bad "two planes: --once failed"
lids g2l "$work/m1/guid2lid" "$work/mp.0" "$work/mp.1" >"$work/m1.lids"
n=$(wc -l <"$work/m1.lids")
[ "$n" -ge 20 ] || bad "two planes, once: only $n LID ports"
rm -f "$sock"
# shellcheck disable=SC2086
if dmn_start m2 $pl --state-dir "$work/m1" --socket "$sock"; then
	"$smctl" --socket "$sock" --json nodes >"$work/m2.json"
	dmn_stop || bad "two planes: the daemon did not exit 0"
	lids nodes "$work/m2.json" >"$work/m2.lids"
	same m1 m2 "two planes: once then daemon"
else
	bad "two planes: the daemon did not come up"
fi
rm -f "$sock"
# shellcheck disable=SC2086
if dmn_start m3 $pl --state-dir "$work/m3" --socket "$sock"; then
	"$smctl" --socket "$sock" --json nodes >"$work/m3.json"
	dmn_stop || bad "two planes: the daemon did not exit 0"
	lids nodes "$work/m3.json" >"$work/m3.lids"
	same m1 m3 "two planes: cold numbering (once vs daemon)"
else
	bad "two planes: the cold daemon did not come up"
fi
# shellcheck disable=SC2086
"$smd" --once -q $pl --state-dir "$work/m3" >"$work/m4.out" 2>"$work/m4.err" || bad "two planes: --once after the daemon failed"
lids g2l "$work/m3/guid2lid" "$work/mp.0" "$work/mp.1" >"$work/m4.lids"
same m3 m4 "two planes: daemon then once"

sanitizer_check "" "$work"/*.err
[ "$fail" -eq 0 ] && echo "PASS: lid_policy" || echo "FAIL: lid_policy ($failures)"
exit "$fail"
