#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 18, rehearsing failures: the mock's fault injection reachable from the daemon.
#  - smd.yaml's mock: keys (loss, corrupt, delay, delay_ms, seed) reach a mock plane, --seed
#    overrides mock.seed, smctl faults shows and changes them and counts what was lost;
#  - the same seed gives the same faults (smd --once, SMPs retried), another seed others;
#  - a --once that loses answers after its retries (80% loss, no retries configured) is
#    incomplete: it says so (SMD-0312, SMD-0409 per plane; INCOMPLETE, plane state incomplete) and exits 1;
#  - smctl link down|up and switch down|up take a mock plane's cable (or all of a switch's)
#    down and back: the switches send Trap 128, the daemon's trap path runs the sweep
#    (last cause "trap"), the fabric shrinks and comes back whole, and no LID changes;
#  - an up with nothing down, an unknown node, a bad port: refused with the reason, exit 1;
#  - a plane that is not a mock plane refuses, with the reason.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
need_python
mock_setup rehearse
printf 'mock:\n  loss: 10%%\n  delay: 0.5%%\n  delay_ms: 300\n  seed: 3\n' >>"$conf"

# ---- the same seed, the same faults (smd --once) ----
once() {
	"$smd" --once --backend mock --topology "$work/ft" -c "$conf" --state-dir "$work/once$1" --seed "$2" 2>&1 |
		sed -n 's/^smps: \([0-9]*\) sent, \([0-9]*\) retried.*/\1 \2/p'
}
a=$(once a 7)
b=$(once b 7)
c=$(once c 8)
[ -n "$a" ] && [ "$a" = "$b" ] || bad "--once --seed 7 twice: '$a' and '$b' (want the same SMPs sent and retried)"
[ "${a#* }" != 0 ] || bad "--once with mock.loss 10%: nothing retried ('$a')"
[ "$a" != "$c" ] || bad "--seed 7 and --seed 8 gave the same faults ('$a')"

# ---- an incomplete --once (answers lost after the retries, Sets failed) says so and exits 1 ----
# 80% loss, no retries but the adaptive ones: seed 20 loses Sets on both paths (one plane, two planes;
# the seed picks which SMPs are lost, so it changes when the bring-up's SMPs do: seed 2 until session 7)
printf 'sweep_interval: 0\nmad:\n  retries: 0\n  timeout_ms: 20\nmock:\n  loss: 80%%\n  seed: 20\n' >"$work/lossy.yaml"
"$smd" --once --backend mock --topology "$work/ft" -c "$work/lossy.yaml" --state-dir "$work/lossy1" \
	>"$work/lossy1.out" 2>"$work/lossy1.err"
rc=$?
[ $rc = 1 ] && grep -q "SMD-0312: bring-up incomplete: [1-9][0-9]* answers\? lost or Sets\? failed" "$work/lossy1.err" &&
	grep -q "^INCOMPLETE: " "$work/lossy1.out" || bad "an incomplete --once: exit $rc, $(grep -v '^  ' "$work/lossy1.err" | tail -2)"
"$smd" --once --json -q --plane "mock:$work/ft" --plane "mock:$work/ft" -c "$work/lossy.yaml" --state-dir "$work/lossy2" \
	>"$work/lossy2.json" 2>"$work/lossy2.err"
rc=$?
[ $rc = 1 ] && [ "$(grep -c "SMD-0409: plane [01] (mock:.*): bring-up incomplete" "$work/lossy2.err")" = 2 ] &&
	[ "$(json "$work/lossy2.json" '(r["up"], r["failed"], r["incomplete"], [p["state"] for p in r["planes"]])')" = \
		"(0, 0, 2, ['incomplete', 'incomplete'])" ] || bad "an incomplete two-plane --once: exit $rc, $(tail -2 "$work/lossy2.err")"

# ---- the daemon ----
dmn_start one --backend mock --topology "$work/ft" -c "$conf" --seed 5 --socket "$sock" --state-dir "$work/state" ||
	{ echo "FAIL: smd -f did not come up"; exit 1; }
"$smctl" --socket "$sock" --json faults >"$work/f.json" || bad "smctl faults failed"
[ "$(json "$work/f.json" '(r["planes"][0]["loss"], r["planes"][0]["delay"], r["planes"][0]["delay_ms"], r["planes"][0]["seed"])')" = "('10%', '0.5%', 300, 5)" ] ||
	bad "faults from the config and --seed: $(cat "$work/f.json")"
[ "$(json "$work/f.json" 'r["planes"][0]["lost"] > 0')" = True ] || bad "10% loss lost nothing: $(cat "$work/f.json")"
"$smctl" --socket "$sock" faults --loss 0 --delay 0 >"$work/f.txt" || bad "smctl faults --loss 0 failed"
grep -q "loss 0%, corrupt 0%, delay 0%" "$work/f.txt" || bad "faults --loss 0: $(cat "$work/f.txt")"
"$smctl" --socket "$sock" faults --loss 250% >/dev/null 2>"$work/f.err"
[ $? = 1 ] && grep -q "percentage" "$work/f.err" || bad "faults --loss 250%: want exit 1 and the reason: $(cat "$work/f.err")"
"$smctl" --socket "$sock" resweep --heavy >/dev/null || bad "resweep without faults failed"
"$smctl" --socket "$sock" --json status >"$work/st0.json"
"$smctl" --socket "$sock" --json nodes >"$work/n0.json"
[ "$(json "$work/st0.json" '(r["state"], r["cas"])')" = "('up', 16)" ] || bad "not up with 16 CAs: $(cat "$work/st0.json")"
lids() { json "$1" 'sorted((n["guid"], n["lid"]) for p in r["planes"] for n in p["nodes"])'; }
lids "$work/n0.json" >"$work/lids0"

# a host's cable (not the SM's own: the first host): down (the leaf traps, a trap sweep loses the host), then up (it comes back)
host=$(json "$work/n0.json" '[n["desc"] for n in r["planes"][0]["nodes"] if n["type"] != "Switch"][1]')
"$smctl" --socket "$sock" link down "$host" 1 --wait >"$work/l1.txt" 2>&1 || bad "link down $host 1: $(cat "$work/l1.txt")"
grep -q "1 link, [1-9][0-9]* trap.* sent; a trap sweep follows" "$work/l1.txt" &&
	grep -q "(trap): up, .* 15 CAs" "$work/l1.txt" || bad "link down: $(cat "$work/l1.txt")"
"$smctl" --socket "$sock" link down "$host" 1 >/dev/null 2>"$work/l2.err"
[ $? = 1 ] && grep -q "no link up to take down" "$work/l2.err" || bad "link down twice: $(cat "$work/l2.err")"
"$smctl" --socket "$sock" link up "$host" 1 --wait >"$work/l3.txt" 2>&1 || bad "link up: $(cat "$work/l3.txt")"
grep -q "(trap): up, .* 16 CAs" "$work/l3.txt" || bad "link up: $(cat "$work/l3.txt")"

# a whole switch (a spine): down, up
spine=$(json "$work/n0.json" '[n["guid"] for n in r["planes"][0]["nodes"] if n["type"] == "Switch"][-1]')
"$smctl" --socket "$sock" switch down "$spine" --wait >"$work/s1.txt" 2>&1 || bad "switch down: $(cat "$work/s1.txt")"
grep -q "switch $spine down: [1-9][0-9]* links" "$work/s1.txt" && grep -q "(trap): up" "$work/s1.txt" ||
	bad "switch down: $(cat "$work/s1.txt")"
"$smctl" --socket "$sock" --json status >"$work/st1.json"
[ "$(json "$work/st1.json" '(r["switches"], r["cas"], r["last_reason"])')" = \
	"($(($(json "$work/st0.json" 'r["switches"]') - 1)), 16, 'trap')" ] || bad "switch down: $(cat "$work/st1.json")"
"$smctl" --socket "$sock" switch up "$spine" --wait >"$work/s2.txt" 2>&1 || bad "switch up: $(cat "$work/s2.txt")"
"$smctl" --socket "$sock" switch up "$spine" >/dev/null 2>"$work/s3.err"
[ $? = 1 ] && grep -q "no link taken down" "$work/s3.err" || bad "switch up twice: $(cat "$work/s3.err")"
"$smctl" --socket "$sock" --json status >"$work/st2.json"
"$smctl" --socket "$sock" --json nodes >"$work/n2.json"
[ "$(json "$work/st2.json" '(r["state"], r["switches"], r["cas"])')" = \
	"$(json "$work/st0.json" '(r["state"], r["switches"], r["cas"])')" ] || bad "after switch up: $(cat "$work/st2.json")"
lids "$work/n2.json" >"$work/lids2"
same_lines "$work/lids2" "$work/lids0" "LIDs after the rehearsal"
[ "$(json "$work/st2.json" 'r["traps"] >= 4')" = True ] || bad "traps not counted: $(cat "$work/st2.json")"
"$smctl" --socket "$sock" route "$host" "$(json "$work/n0.json" '[n["desc"] for n in r["planes"][0]["nodes"] if n["type"] != "Switch"][-1]')" \
	>"$work/r.txt" || bad "route after the rehearsal: $(cat "$work/r.txt")"

# refused with the reason
"$smctl" --socket "$sock" switch down nosuch >/dev/null 2>"$work/e1.err"
[ $? = 1 ] && grep -q "nosuch" "$work/e1.err" || bad "switch down nosuch: $(cat "$work/e1.err")"
"$smctl" --socket "$sock" link down "$spine" 99 >/dev/null 2>"$work/e2.err"
[ $? = 1 ] && grep -q "has ports 1-" "$work/e2.err" || bad "link down port 99: $(cat "$work/e2.err")"
"$smctl" --socket "$sock" link sideways "$spine" 1 >/dev/null 2>&1
[ $? = 2 ] || bad "link sideways: want exit 2 (usage)"
grep -q "rehearsal: switch" "$work/one.err" || bad "the rehearsal is not logged"
dmn_stop || bad "smd -f did not stop cleanly"

# ---- not a mock plane: refused ----
printf 'sweep_interval: 0\nplanes:\n  - umad:nosuch_hca:1\n' >"$work/umad.yaml"
"$smd" -f -c "$work/umad.yaml" --socket "$sock" --state-dir "$work/state2" >"$work/two.out" 2>"$work/two.err" &
pid=$!
dmn_pids="$dmn_pids $pid"
i=0
while ! "$smctl" --socket "$sock" status >/dev/null 2>&1 && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
"$smctl" --socket "$sock" link down L1 1 >/dev/null 2>"$work/u1.err"
[ $? = 1 ] && grep -q "not a mock plane" "$work/u1.err" || bad "link down on a umad plane: $(cat "$work/u1.err")"
"$smctl" --socket "$sock" faults --loss 10% >/dev/null 2>"$work/u2.err"
[ $? = 1 ] && grep -q "no mock plane" "$work/u2.err" || bad "faults on a umad plane: $(cat "$work/u2.err")"
dmn_stop >/dev/null

sanitizer_check "" "$work/one.err" "$work/two.err"
[ $fail = 0 ] && echo "PASS: rehearsing failures on a mock plane"
exit $fail
