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

# the fabric of once and dmn (word-split), and the dumps its port GUIDs are read from
fab="--backend mock --topology $cold"
dumps=$cold

# once NAME STATE [ARGS...]: smd --once on $fab, LIDs to $work/NAME.lids
once() {
	_n=$1 _st=$2
	shift 2
	# shellcheck disable=SC2086
	if ! "$smd" --once -q $fab --state-dir "$_st" "$@" >"$work/$_n.out" 2>"$work/$_n.err"; then
		bad "$_n: smd --once failed"
		cat "$work/$_n.err"
	fi
	# shellcheck disable=SC2086
	lids g2l "$_st/guid2lid" $dumps >"$work/$_n.lids"
}

# dmn NAME STATE [ARGS...]: smd -f on $fab until its first cycle, LIDs to $work/NAME.lids, stopped
dmn() {
	_n=$1 _st=$2
	shift 2
	rm -f "$sock"
	# shellcheck disable=SC2086
	if ! dmn_start "$_n" $fab --state-dir "$_st" --socket "$sock" "$@"; then
		bad "$_n: the daemon did not come up"
		return
	fi
	"$smctl" --socket "$sock" --json nodes >"$work/$_n.json" || bad "$_n: smctl nodes failed"
	dmn_stop || bad "$_n: the daemon did not exit 0"
	lids nodes "$work/$_n.json" >"$work/$_n.lids"
}

# same A B WHAT: the LID lists A and B are identical (and not empty)
same() { same_lines "$work/$1.lids" "$work/$2.lids" "$3"; }

# cross FIRST SECOND TAG: FIRST, SECOND, SECOND again, FIRST again on the state dir $work/TAG,
# LIDs in TAG1..TAG4.lids: all the same
cross() {
	$1 "${3}1" "$work/$3"
	$2 "${3}2" "$work/$3"
	same "${3}1" "${3}2" "$3: $1 then $2"
	$2 "${3}3" "$work/$3"
	same "${3}1" "${3}3" "$3: $2 restart after $1"
	$1 "${3}4" "$work/$3"
	same "${3}1" "${3}4" "$3: $1 after $2"
}

# 1. --once first, then the daemon, then each again; 2. the daemon first
cross once dmn a
n=$(wc -l <"$work/a1.lids")
[ "$n" -eq 24 ] || bad "once cold: $n LID ports, expected 24 (8 switches, 16 CA ports)"
cross dmn once b
same a1 b1 "cold numbering (once vs daemon)"

# hosts first: the lowest LIDs are the CA ports'
python3 - "$work/a1.lids" <<'EOF' || bad "cold numbering: the CA ports do not hold LIDs 1..16"
import sys
ca = sorted(int(l.split()[2]) for l in open(sys.argv[1]) if l.split()[1] != '0')
sys.exit(0 if ca == list(range(1, 17)) else 1)
EOF

# 3. --guid2lid FILE (OpenSM's format, LIDs of its own) given to the daemon and to --once
awk '/^0x/ { n++; printf "%s 0x%04x 0x%04x\n", $1, n + 99, n + 99 }' "$work/a/guid2lid" >"$work/opensm.g2l"
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
same a1 o6 "once in a new state directory"
modes=$(stat -c '%a' "$work/x" "$work/x/y" "$work/x/y/state" | tr '\n' ' ')
[ "$modes" = "755 755 750 " ] || bad "state directory modes: $modes (expected 755 755 750)"
mkdir -m 0711 "$work/e"
once o7 "$work/e"
[ "$(stat -c '%a' "$work/e")" = 711 ] || bad "an existing state directory's mode was changed"

# 5. one plane given as --plane mock:DUMP
if "$smd" --once -q --plane "mock:$cold" --state-dir "$work/f" >"$work/p.out" 2>"$work/p.err"; then
	lids g2l "$work/f/guid2lid" >"$work/p.lids"
	same a1 p "once --plane mock:DUMP"
else
	bad "smd --once --plane mock:DUMP (one plane) failed"
	cat "$work/p.err"
fi

# 6. two planes (host LIDs shared by the planes): --once then the daemon, the daemon then --once
"$smctl" topo gen fat-tree --radix 8 --hosts 8 --planes 2 --split --no-lids -o "$work/mp" >/dev/null ||
	bad "topo gen --planes 2"
fab="--plane mock:$work/mp.0 --plane mock:$work/mp.1"
dumps="$work/mp.0 $work/mp.1"
cross once dmn m
n=$(wc -l <"$work/m1.lids")
[ "$n" -ge 20 ] || bad "two planes, once: only $n LID ports"
cross dmn once n
same m1 n1 "two planes: cold numbering (once vs daemon)"

sanitizer_check "" "$work"/*.err
[ "$fail" -eq 0 ] && echo "PASS: lid_policy" || echo "FAIL: lid_policy ($failures)"
exit "$fail"
