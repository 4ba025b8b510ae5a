#!/bin/sh
# Golden outputs of smctl against a running smd: `smd -f --backend mock` on
# tests/data/net4.ibnd (2 switches, 4 CAs) and on a generated 2-plane fat
# tree, each with a private socket and state dir and no periodic sweeps, so
# every sweep count is exact. Every command runs in text and --json form;
# volatile fields (times, durations, ages, pids, the version, temp paths)
# are normalised, then stdout, stderr and the exit status are compared with
# tests/data/smctl/NAME. Any other difference fails.
# A stand-in daemon (python, canned replies) shows how smctl renders broken
# routes (loop, black hole, dead end, wrong destination, planes missing)
# and that it refuses malformed replies with exit 1.
# Also: `dump topology` is read back by smd's own ibnetdiscover reader
# (topo info, and topo convert gives the same text again); the comparison
# itself is checked to fail on a changed line.
# SMD_UPDATE_GOLDEN=1 rewrites the golden files instead (review the diff!).
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
top_srcdir=$(cd "$top_srcdir" && pwd)
smd="$top_builddir/smd/smd"
smctl="$top_builddir/smd/smctl"
gold="$top_srcdir/tests/data/smctl"
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }

w=$(mktemp -d "${TMPDIR:-/tmp}/smd-golden.XXXXXX")
pid=
fpid=
cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	[ -n "$fpid" ] && kill -KILL "$fpid" 2>/dev/null
	rm -rf "$w"
}
trap cleanup EXIT INT TERM
fail=0
n_checked=0
bad() { echo "FAIL: $*"; fail=1; }
version=$("$smctl" --version | sed 's/^smctl //')
version_re=$(printf '%s' "$version" | sed 's/[.]/[.]/g')

# volatile JSON members (times, ages, durations, pid, version) -> "<T>"; paths -> @W@/@SRC@
norm_json() {
	python3 -c '
import json, re, sys
w, src, ver = sys.argv[1], sys.argv[2], sys.argv[3]
vol = re.compile(r"(_s|_us|seconds|^pid|^uptime.*|^smd)$")
timed = re.compile(r"^smd_(uptime_seconds|last_sweep_duration_seconds|last_sweep_age_seconds|plane_last_sweep_duration_seconds)$")
def fix(v, key=None):
	if isinstance(v, dict):
		if timed.match(str(v.get("name", ""))):
			for s in v.get("samples", []):
				s["value"] = "<T>"
		return {k: ("<T>" if vol.search(k) and not isinstance(x, (dict, list)) and x is not None else fix(x, k))
			for k, x in v.items()}
	if isinstance(v, list):
		return [fix(x) for x in v]
	if isinstance(v, str):
		v = re.sub(r"no plugin [^)]*/", "no plugin @PLUGINDIR@/", v)
		return v.replace(w, "@W@").replace(src, "@SRC@").replace(ver, "@VERSION@") if v != ver else "@VERSION@"
	return v
for line in sys.stdin:
	line = line.strip()
	if not line:
		continue
	try:
		print(json.dumps(fix(json.loads(line)), separators=(",", ":"), ensure_ascii=False))
	except ValueError:
		print("NOT JSON: " + line)
' "$w" "$top_srcdir" "$version"
}

norm_text() {
	# (planes prints the spec cut to 32 columns, so its text depends on the path's length: masked)
	sed -E -e "s#$w#@W@#g" -e "s#$top_srcdir#@SRC@#g" -e "s#\b$version_re\b#@VERSION@#g" \
		-e 's/^([0-9]+ +)mock:[^ ]* +/\1<SPEC> /' \
		-e 's#no plugin [^)]*/#no plugin @PLUGINDIR@/#' \
		-e 's/[0-9]+\.[0-9]+ s\b/<T> s/g' \
		-e 's/^pid .*/pid        <PID>/' \
		-e 's/ +[0-9]+\.[0-9]{3} ([a-z-]+)$/ <T> \1/' \
		-e 's/^(smd_(uptime_seconds|last_sweep_duration_seconds|last_sweep_age_seconds|plane_last_sweep_duration_seconds)(\{[^}]*\})?) .*/\1 <T>/'
}

# check NAME ARGS...: run smctl on $sock, normalise, compare with the golden file
check() {
	name=$1
	shift
	"$smctl" --socket "$sock" "$@" >"$w/out" 2>"$w/err"
	rc=$?
	{
		case " $* " in
		*" --json "*) norm_json <"$w/out" ;;
		*) norm_text <"$w/out" ;;
		esac
		echo "--- stderr"
		norm_text <"$w/err"
		echo "--- exit $rc"
	} >"$w/got.$name"
	n_checked=$((n_checked + 1))
	if [ "${SMD_UPDATE_GOLDEN:-0}" = 1 ]; then
		cp "$w/got.$name" "$gold/$name"
		return
	fi
	if [ ! -f "$gold/$name" ]; then
		bad "$name: no golden file $gold/$name"
		return
	fi
	if ! diff -u "$gold/$name" "$w/got.$name" >"$w/diff"; then
		bad "smctl $*: output differs from $name"
		head -40 "$w/diff"
	fi
}

# start ARGS...: smd -f in the background; wait for its first sweep
start() {
	"$smd" -f "$@" --socket "$sock" 2>"$w/smd.log" &
	pid=$!
	i=0
	until "$smctl" --socket "$sock" --json status 2>/dev/null | grep -q '"sweeps":[1-9]'; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$pid" 2>/dev/null; then
			cat "$w/smd.log"
			return 1
		fi
		sleep 0.1
	done
}

stop() {
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	pid=
	[ $rc = 0 ] || bad "smd exited $rc"
	if grep -q "runtime error\|Sanitizer" "$w/smd.log"; then
		bad "sanitizer report"
		grep -A5 "runtime error\|Sanitizer" "$w/smd.log" | head -20
	fi
}

[ "${SMD_UPDATE_GOLDEN:-0}" = 1 ] && mkdir -p "$gold"
printf 'sweep_interval: 0\nlog_level: notice\n' >"$w/smd.yaml"

# ---- one plane: net4 ----
sock="$w/one.sock"
start -c "$w/smd.yaml" --backend mock --topology "$top_srcdir/tests/data/net4.ibnd" --state-dir "$w/st1" ||
	{ echo "FAIL: smd did not come up"; exit 1; }
for fmt in "" --json; do
	sfx=${fmt:+.json}
	sfx=${sfx:-.txt}
	check "status$sfx" $fmt status
	check "planes$sfx" $fmt planes
	check "version$sfx" $fmt version
	check "nodes$sfx" $fmt nodes
	check "links$sfx" $fmt links
	check "route$sfx" $fmt route Hca1 Hca4
	check "route-guid-switch$sfx" $fmt route 0x100004 Switch1
	check "route-lid$sfx" $fmt route 4 lid:1
	check "route-unknown$sfx" $fmt route Hca1 nosuch
	check "lft$sfx" $fmt lft Switch1
	check "lft-by-lid$sfx" $fmt lft 6
	check "lft-not-switch$sfx" $fmt lft Hca1
	check "dump$sfx" $fmt dump topology
	check "metrics$sfx" $fmt metrics
done
check "usage-route" route Hca1
check "usage-dump" dump links
check "usage-plane" nodes --plane x
check "plane-out-of-range.json" --json nodes --plane 3
check "resweep.txt" resweep
check "resweep.json" --json resweep
check "resweep-heavy.json" --json resweep --heavy
check "sweep-alias.txt" sweep --reread
check "engine-set.json" --json engine set minhop
check "engine-status.txt" status
check "engine-bad.txt" engine set nosuchengine
check "engine-bad-chain.json" --json engine set "minhop,,ftree"
check "engine-kept.json" --json status
check "engine-back.txt" engine set ftree,minhop
check "metrics-after.txt" metrics

# the topology dump is read back by smd's own reader, and written again identically
"$smctl" --socket "$sock" dump topology >"$w/dump.ibnd" || bad "dump topology failed"
"$smctl" --json topo info "$w/dump.ibnd" >"$w/info.json" 2>&1 || bad "smd's reader refused the dump: $(cat "$w/info.json")"
grep -q '"switches": *2' "$w/info.json" && grep -q '"cas": *4' "$w/info.json" ||
	bad "the dump read back is not 2 switches + 4 CAs: $(cat "$w/info.json")"
"$smctl" topo convert "$w/dump.ibnd" -o "$w/again.ibnd" --format ibnd >/dev/null 2>&1 || bad "topo convert of the dump failed"
cmp -s "$w/dump.ibnd" "$w/again.ibnd" || { bad "dump -> reader -> writer is not the same text"; diff "$w/dump.ibnd" "$w/again.ibnd" | head; }
stop

# ---- two planes: a generated fat tree, one file per plane ----
"$smctl" topo gen fat-tree --radix 4 --hosts 4 --planes 2 --split --no-lids -o "$w/mp" >/dev/null ||
	{ echo "FAIL: generator"; exit 1; }
sock="$w/two.sock"
start -c "$w/smd.yaml" --plane "mock:$w/mp.0" --plane "mock:$w/mp.1" --state-dir "$w/st2" ||
	{ echo "FAIL: 2-plane smd did not come up"; exit 1; }
check "mp-nodes.txt" nodes
check "mp-nodes-plane1.json" --json nodes --plane 1
check "mp-links-plane0.txt" links --plane 0
check "mp-route.txt" route host00000 host00003
check "mp-route.json" --json route host00000 host00003
check "mp-route-plane1.txt" route host00001 host00002 --plane 1
check "mp-lft.txt" lft 5
check "mp-lft-ca.txt" lft 1
check "mp-dump-plane1.txt" dump topology --plane 1
check "mp-metrics.txt" metrics
# one plane's dump reads back on its own (several planes share LIDs: one file per plane)
"$smctl" --socket "$sock" dump topology --plane 1 >"$w/p1.ibnd" || bad "dump --plane 1 failed"
"$smctl" --json topo info "$w/p1.ibnd" >"$w/p1.json" 2>&1 || bad "plane 1's dump does not read back: $(cat "$w/p1.json")"
grep -q '"switches": *4' "$w/p1.json" && grep -q '"cas": *4' "$w/p1.json" || bad "plane 1's dump read back: $(cat "$w/p1.json")"
# ftree -> minhop: the next cycle reroutes (blocks written), then back to ftree
check "mp-engine-minhop.json" --json engine set minhop
check "mp-route-minhop.txt" route host00000 host00003
check "mp-engine-ftree.txt" engine set ftree
stop

# ---- a stand-in daemon with canned replies: broken routes and bad replies as smctl renders them ----
sock="$w/fake.sock"
python3 - "$sock" <<'PY' &
import json, socket, sys
end = lambda t, g, p, lid, d: {"type": t, "guid": g, "port_guid": g, "port": p, "lid": lid, "desc": d}
src = end("Ca", "0x0000000000000a00", 1, 1, "hostA mlx5_0")
dst = end("Ca", "0x0000000000000b00", 1, 2, "hostB mlx5_0")
hop = lambda g, lid, d, i, o: {"guid": g, "lid": lid, "desc": d, "in_port": i, "out_port": o}
s1 = ("0x0000000000005100", 3, "S1")
s2 = ("0x0000000000005200", 4, "S2")
def plane(n, result, hops, **kw):
	e = {"plane": n, "cycle": 7, "result": result, "dlid": 2, "src": src, "dst": dst, "hops": hops}
	e.update(kw)
	return e
routes = {
	"loop": [plane(0, "loop", [hop(*s1, 1, 3), hop(*s2, 3, 3)])],
	"hole": [plane(0, "no route", [hop(*s1, 1, 3), hop(*s2, 3, None)])],
	"dead": [plane(0, "dead end", [hop(*s1, 1, 4)])],
	"wrong": [plane(0, "wrong destination", [hop(*s1, 1, 1)], arrived=src)],
	"mixed": [plane(0, "ok", [hop(*s1, 1, 3), hop(*s2, 3, 1)]), {"plane": 1, "error": "this plane has not come up yet"},
		  {"plane": 2, "cycle": 7, "result": "not in plane", "error": "no node named 'hostA'"}],
}
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(sys.argv[1])
srv.listen(8)
srv.settimeout(30)
while True:
	try:
		c, _ = srv.accept()
	except socket.timeout:
		break
	req = json.loads(c.makefile().readline())
	cmd = req["cmd"]
	if cmd == "quit":
		c.close()
		break
	if cmd == "route":
		ps = routes[req["dst"]]
		ok = sum(1 for p in ps if p.get("result") == "ok")
		bad = sum(1 for p in ps if p.get("result") not in (None, "ok", "not in plane"))
		rep = json.dumps({"version": 1, "ok": True, "cmd": "route", "planes": ps, "routed": ok, "broken": bad})
	elif cmd == "metrics":
		rep = json.dumps({"version": 1, "ok": True, "cmd": "metrics", "metrics": [{"name": "bad name", "type": "gauge", "help": "", "samples": []}]})
	else:
		rep = "this is not JSON"
	c.sendall(rep.encode() + b"\n")
	c.close()
PY
fpid=$!
i=0
until [ -S "$sock" ] || [ $i -gt 50 ]; do sleep 0.1; i=$((i + 1)); done
check "fake-route-loop.txt" route hostA loop
check "fake-route-hole.txt" route hostA hole
check "fake-route-dead.txt" route hostA dead
check "fake-route-wrong.txt" route hostA wrong
check "fake-route-mixed.txt" route hostA mixed
check "fake-route-loop.json" --json route hostA loop
check "fake-metrics-bad.txt" metrics
check "fake-not-json.txt" status
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"{\"cmd\":\"quit\"}\n")' "$sock"
wait "$fpid"
fpid=

# no daemon on the socket: exit 1, the message names the socket
sock="$w/none.sock"
check "no-daemon.txt" status
check "no-daemon.json" --json route Hca1 Hca4

# the comparison must catch a real change: one changed line in a golden copy
if [ "${SMD_UPDATE_GOLDEN:-0}" != 1 ]; then
	sed '3s/[0-9]/9/' "$gold/nodes.txt" >"$w/changed"
	cmp -s "$w/changed" "$gold/nodes.txt" && bad "self-check: sed did not change the golden copy"
	diff -u "$w/changed" "$w/got.nodes.txt" >/dev/null && bad "self-check: a changed golden file still compares equal"
fi

[ $fail = 0 ] || echo "An intended change of smctl or of a reply? Regenerate with
  SMD_UPDATE_GOLDEN=1 make check TESTS=tests/smctl_golden.sh
and review 'git diff tests/data/smctl' before committing it."
[ $fail = 0 ] && echo "PASS: $n_checked smctl outputs match their golden files; dump topology reads back"
exit $fail
