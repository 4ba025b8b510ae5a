#!/bin/sh
# smctl against smd running a fabric in ibsim, checked with infiniband-diags:
#  - `smctl lft LID` prints every switch's LFT exactly as `ibroute LID` reads
#    it from the (simulated) switch, so admins can diff the two;
#  - `smctl route SRC DST` follows the same switches and ports as
#    `ibtracert SRC DST`;
#  - progress: ibsim is stopped (SIGSTOP) while `smctl resweep --heavy`
#    waits; after a second smctl prints progress lines on stderr (daemon
#    state, how long the sweep has run, the phase it is in: discover); ibsim continued (SIGCONT), the
#    sweep completes and smctl exits 0.
# Only PIDs started here are signalled; everything is removed on exit.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
smd="$top_builddir/smd/smd"
smctl="$top_builddir/smd/smctl"
command -v ibroute >/dev/null && command -v ibtracert >/dev/null ||
	{ echo "FAIL: ibroute/ibtracert not found (Debian package infiniband-diags)"; exit 1; }
. "$top_srcdir/tests/lib-ibsim.sh"

w=$(mktemp -d "${TMPDIR:-/tmp}/smd-smctl-ibsim.XXXXXX")
spid=
fail=0
bad() { echo "FAIL: $*"; fail=1; }
"$smctl" topo gen fat-tree --radix 8 --hosts 16 --format ibsim -o "$w/ft.net" >/dev/null || { echo "FAIL: generator"; exit 1; }
ibsim_start "$w/ft.net" || { echo "FAIL: ibsim did not start"; exit 1; }
cleanup() {
	[ -n "$spid" ] && kill -KILL "$spid" 2>/dev/null
	[ -n "$IBSIM_PID" ] && kill -CONT "$IBSIM_PID" 2>/dev/null
	ibsim_cleanup
	[ -n "${KEEP:-}" ] || rm -rf "$w"
}
trap cleanup EXIT
ibpid=$IBSIM_PID

sock="$w/smd.sock"
# long MAD timeouts: SMPs sent while ibsim is stopped are answered once it continues
printf 'sweep_interval: 0\nmad:\n  timeout_ms: 8000\n  retries: 0\n' >"$w/smd.yaml"
"$smd" -f -c "$w/smd.yaml" --plane ibsim:H-0002c92000000000 --socket "$sock" --state-dir "$w/st" 2>"$w/smd.log" &
spid=$!
i=0
until "$smctl" --socket "$sock" --json status 2>/dev/null | grep -q '"state":"up"'; do
	i=$((i + 1))
	[ $i -gt 300 ] && { cat "$w/smd.log"; echo "FAIL: smd did not come up under ibsim"; exit 1; }
	sleep 0.1
done

# diags attached at another host
diag() { SIM_HOST=H-0002c92000000006 ibsim_run "$@"; }

# ---- lft: byte for byte what ibroute reads back from each switch ----
"$smctl" --socket "$sock" --json nodes >"$w/nodes.json" || bad "nodes failed"
swlids=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(" ".join(str(n["lid"]) for n in r["planes"][0]["nodes"] if n["type"]=="Switch"))' "$w/nodes.json")
[ -n "$swlids" ] || bad "no switch in smctl nodes"
nsw=0
for lid in $swlids; do
	"$smctl" --socket "$sock" lft "$lid" >"$w/lft.smctl" || bad "smctl lft $lid failed"
	diag ibroute "$lid" >"$w/lft.ibroute" 2>"$w/diag.err" || bad "ibroute $lid failed: $(cat "$w/diag.err")"
	if ! diff -u "$w/lft.ibroute" "$w/lft.smctl" >"$w/lft.diff"; then
		bad "smctl lft $lid differs from ibroute $lid"
		head -20 "$w/lft.diff"
	fi
	nsw=$((nsw + 1))
done

# ---- route: the same hops as ibtracert (switch GUIDs and ports) ----
"$smctl" --socket "$sock" route host00000 host00015 >"$w/route.smctl" || bad "smctl route failed: $(cat "$w/route.smctl")"
src=$(sed -n 's/.*From ca {[^}]*} portnum [0-9]* lid \([0-9]*\) .*/\1/p' "$w/route.smctl")
dst=$(sed -n 's/.*To ca {[^}]*} portnum [0-9]* lid \([0-9]*\) .*/\1/p' "$w/route.smctl")
diag ibtracert "$src" "$dst" >"$w/route.ib" 2>"$w/diag.err" || bad "ibtracert $src $dst failed: $(cat "$w/diag.err")"
# "[out] -> switch port {guid}[in]" of both, without lids and names
hops() { sed -n 's/^ *\(\[[0-9]*\] -> [a-z]* port {0x[0-9a-f]*}\[[0-9]*\]\).*/\1/p' "$1"; }
hops "$w/route.smctl" >"$w/hops.smctl"
hops "$w/route.ib" >"$w/hops.ib"
[ -s "$w/hops.ib" ] || bad "no hops parsed from ibtracert: $(cat "$w/route.ib")"
diff -u "$w/hops.ib" "$w/hops.smctl" || bad "smctl route and ibtracert disagree"

# ---- progress while a sweep waits ----
kill -STOP "$ibpid"
"$smctl" --socket "$sock" resweep --heavy >"$w/sw.out" 2>"$w/sw.err" &
swpid=$!
sleep 2.5
kill -CONT "$ibpid"
wait "$swpid"
rc=$?
[ $rc = 0 ] || bad "resweep --heavy with ibsim stopped for 2.5 s: exit $rc: $(cat "$w/sw.out" "$w/sw.err")"
grep -q "^smctl: sweep: waiting [0-9]* s; daemon sweeping, sweep [0-9]* running for [0-9.]* s (discover)" "$w/sw.err" ||
	bad "no progress line on stderr: $(cat "$w/sw.err")"
grep -q "^sweep [0-9]* (heavy): up" "$w/sw.out" || bad "resweep result: $(cat "$w/sw.out")"
np=$(grep -c "^smctl: sweep: waiting" "$w/sw.err")

kill -TERM "$spid"
wait "$spid" || bad "smd exited $?"
spid=
# under --enable-sanitizers: any report fails the test
if grep -q "runtime error\|Sanitizer" "$w/smd.log"; then
	bad "sanitizer report"
	grep -A5 "runtime error\|Sanitizer" "$w/smd.log" | head -20
fi
[ $fail = 0 ] && echo "PASS: lft of $nsw switches = ibroute, route = ibtracert, $np progress line(s) while a sweep waited"
exit $fail
