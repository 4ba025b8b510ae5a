#!/bin/sh
# SPDX-License-Identifier: MIT
# Link-pull benchmark (issue 7): smd -f vs OpenSM (daemon mode, -R ftree) under ibsim.
#
# usage: bench/linkpull.sh [RUNS]      (from a build directory; default 5 rounds)
# env:   HOSTS (512) RADIX (32) BUILD (.) OUT (a temp dir) LINK (the ibsim console
#        argument of Unlink, default leaf 10's first uplink; a node name alone,
#        e.g. '"S-0002c91000000030"', unlinks every link of that switch) POLL_MS (10)
#        SWITCH (a switch's description, e.g. p0-spine00015: LINK is that whole switch)
#        KEEP (non-empty: keep every round's ibsim folder in OUT)
#        RELINK (non-empty: issue 17, "a link that comes back": the pull of
#        step 3 is done and settled first (the SM's cycle, 1 s, a dump_lfts
#        read-back), then the measured event is `ReLink LINK`; step 5 also
#        says whether every LFT is again what the cold bring-up of step 2
#        wrote, "restored yes|NO")
#
# Per round and per SM (alternating which goes first), on a FRESH ibsim with its
# console on a FIFO:
#  1. the SM runs as a daemon under umad2sim at the first CA (smd -f with default
#     config: chain ftree,minhop, sweep_interval 10; opensm -R ftree -d2, default
#     10 s sweep interval; -d2 only flushes its log after each line) until the
#     fabric is up, then 1 s of quiet;
#  2. every LFT is read back with dump_lfts (infiniband-diags, from another CA);
#  3. t0, `Unlink LINK` on ibsim's console (both ends go DOWN; switches trap 128)
#     (with RELINK: Unlink, settle, read back, then t0, `ReLink LINK`: both ends INIT);
#  4. the script polls (every POLL_MS) until the SM says it is done, then takes
#     the time the SM itself gives for that moment, t1: smd: the end of the first
#     cycle after t0 (its sweep_history entry: wall clock right after `smctl
#     status` returned minus the entry's age_s, so if anything late); OpenSM: the
#     time stamp of the first "SUBNET UP" line after t0 in its log (microseconds).
#     Time = t1 - t0: the SM's reaction to the trap, rediscovery, routing,
#     programming; the polling itself is not in it;
#  5. after 1 more second, the LFTs are read back again with dump_lfts, the
#     topology with ibnetdiscover, and bench/lft_eval checks every CA pair
#     (unreachable and loops must both be 0: "every pair routed again");
#  6. LFT blocks rewritten, counted two ways: (a) Set LinearForwardingTable MADs
#     the SM process sent between t0 and step 5, counted by a umad_send() shim
#     (a shared counter file) preloaded in front of umad2sim; (b) (switch, 64-LID
#     block) pairs whose entries differ between the two dump_lfts read-backs;
#     SMPs the SM sent over the same span (the shim).
# Prints per-round lines, medians and the median per-round ratio smd/OpenSM.
set -u
RUNS=${1:-5}
HOSTS=${HOSTS:-512}
RADIX=${RADIX:-32}
BUILD=${BUILD:-$(pwd)}
POLL_MS=${POLL_MS:-10}
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/.." && pwd)}
. "$top_srcdir/tests/lib-ibsim.sh"
_ibsim_find_umad2sim || exit 1
SMD=$BUILD/smd/smd
SMCTL=$BUILD/smd/smctl
EVAL=$BUILD/bench/lft_eval
for t in ibsim opensm dump_lfts ibnetdiscover python3 cc; do
	command -v $t >/dev/null || { echo "linkpull: $t not installed" >&2; exit 1; }
done
[ -x "$EVAL" ] || { echo "linkpull: $EVAL missing (make check builds it)" >&2; exit 1; }

OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/smd-linkpull.XXXXXX")}
mkdir -p "$OUT"
echo "# output in $OUT"
echo "# machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# opensm: $(dpkg-query -W -f '${Version}' opensm 2>/dev/null), ibsim: $(dpkg-query -W -f '${Version}' ibsim-utils 2>/dev/null), infiniband-diags: $(dpkg-query -W -f '${Version}' infiniband-diags 2>/dev/null)"

net=$OUT/ft$HOSTS.net
"$SMCTL" topo gen fat-tree --hosts "$HOSTS" --radix "$RADIX" --levels 2 --format ibsim -o "$net" >/dev/null || exit 1
cas=$(sed -n 's/^Ca[[:space:]]*[0-9]*[[:space:]]*"\([^"]*\)".*/\1/p' "$net")
SM_HOST=$(echo "$cas" | sed -n 1p)
DIAG_HOST=$(echo "$cas" | sed -n 2p)
if [ -z "${LINK:-}" ] && [ -n "${SWITCH:-}" ]; then
	LINK="\"$(sed -n "s/^Switch[[:space:]]*[0-9]*[[:space:]]*\"\([^\"]*\)\".*\"$SWITCH\".*/\1/p" "$net")\""
	[ "$LINK" != '""' ] || { echo "linkpull: no switch $SWITCH in $net" >&2; exit 1; }
fi
# default: leaf 10's first uplink (the port after its hosts)
if [ -z "${LINK:-}" ]; then
	leaf=$(sed -n 's/^Switch[[:space:]]*[0-9]*[[:space:]]*"\([^"]*\)".*p0-leaf00010.*/\1/p' "$net")
	down=$(awk -v s="$leaf" '$0 ~ "\"" s "\"" && /^Switch/ { on = 1; next } on && /^$/ { exit } on && /"H-/ { n++ } END { print n }' "$net")
	LINK="\"$leaf\"[$((down + 1))]"
fi
echo "# fabric: $HOSTS hosts, radix $RADIX, 2 levels ($(grep -c '^Switch' "$net") switches); link pulled: Unlink $LINK"

# ---- the counting shim: Set LinearForwardingTable and all MADs, in a shared file ----
cat >"$OUT/umad_count.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/umad.h>
/* [0] all MADs sent, [1] Set LinearForwardingTable, [2] SMPs (class 0x81/0x01) */
static uint64_t *cnt;
static int (*real_send)(int, int, void *, int, int, int);
__attribute__((constructor)) static void init(void)
{
	const char *p = getenv("UMAD_COUNT_MAP");
	int fd = p ? open(p, O_RDWR | O_CREAT, 0644) : -1;
	if (fd < 0 || ftruncate(fd, 4096) < 0)
		return;
	void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m != MAP_FAILED)
		cnt = m;
}
int umad_send(int fd, int agent, void *umad, int len, int timeout_ms, int retries)
{
	if (!real_send)
		real_send = (int (*)(int, int, void *, int, int, int))dlsym(RTLD_NEXT, "umad_send");
	const uint8_t *mad = umad_get_mad(umad);
	if (cnt) {
		__atomic_fetch_add(&cnt[0], 1, __ATOMIC_RELAXED);
		if (len >= 24 && (mad[1] == 0x81 || mad[1] == 0x01)) {
			__atomic_fetch_add(&cnt[2], 1, __ATOMIC_RELAXED);
			if (mad[3] == 0x02 && mad[16] == 0 && mad[17] == 0x19)
				__atomic_fetch_add(&cnt[1], 1, __ATOMIC_RELAXED);
		}
	}
	return real_send(fd, agent, umad, len, timeout_ms, retries);
}
EOF
cc -O2 -shared -fPIC -o "$OUT/umad_count.so" "$OUT/umad_count.c" -libumad -ldl || exit 1
counts() { python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); print(*struct.unpack("<3Q", d))' "$1"; }

# ---- block-wise diff of two dump_lfts outputs ----
cat >"$OUT/lftdiff.py" <<'EOF'
import re, sys
def load(p):
    t, sw = {}, None
    for line in open(p):
        m = re.match(r'Unicast lids .* guid (0x[0-9a-f]+)', line)
        if m:
            sw = m.group(1); continue
        m = re.match(r'(0x[0-9a-f]+) (\d+) ', line)
        if m and sw:
            t[(sw, int(m.group(1), 16))] = int(m.group(2))
    return t
a, b = load(sys.argv[1]), load(sys.argv[2])
blocks = {(s, l // 64) for (s, l) in set(a) | set(b) if a.get((s, l)) != b.get((s, l))}
ents = sum(1 for k in set(a) | set(b) if a.get(k) != b.get(k))
print(len(blocks), ents, len({s for (s, _) in blocks}))
EOF

now_ns() { date +%s%N; }
sleep_poll() { sleep "$(awk -v m="$POLL_MS" 'BEGIN { printf "%.3f", m / 1000 }')"; }

start_ibsim() {
	TMPDIR=$OUT IBSIM_CONSOLE=1 ibsim_start "$net" -N 8192 -S 1024 -P 65536
}
# each round's ibsim folder (dumps, logs) is removed unless KEEP is set (2,048 hosts: ~35 MB a round)
stop_ibsim() {
	rm -rf "$IBSIM_DIR/sys-"* 2>/dev/null
	IBSIM_KEEP=${KEEP:-} ibsim_stop
}
# run_sm CMD...: the SM under umad2sim + the shim at SM_HOST, in the background; SM_PID
run_sm() {
	(cd "$IBSIM_DIR" && SIM_HOST=$SM_HOST LD_PRELOAD="$OUT/umad_count.so:$UMAD2SIM" \
		UMAD_COUNT_MAP="$IBSIM_DIR/count.map" IBSIM_SOCKNAME=$IBSIM_SOCKNAME \
		OSM_TMP_DIR=$IBSIM_DIR OSM_CACHE_DIR=$IBSIM_DIR exec "$@" >"$IBSIM_DIR/sm.out" 2>"$IBSIM_DIR/sm.err") &
	SM_PID=$!
}
stop_sm() {
	kill "$SM_PID" 2>/dev/null
	i=0
	while kill -0 "$SM_PID" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	kill -9 "$SM_PID" 2>/dev/null
	wait "$SM_PID" 2>/dev/null
	SM_PID=
}
diag() { SIM_HOST=$DIAG_HOST ibsim_run "$@"; }

smd_status() { "$SMCTL" --socket "$IBSIM_DIR/smd.sock" --json status 2>/dev/null; }
# smd_field JSON-EXPR: evaluate over the status reply (r)
smd_q() { smd_status | python3 -c 'import json,sys
try: r = json.load(sys.stdin)
except Exception: print("ERR"); sys.exit()
print(eval(sys.argv[1]))' "$1"; }

# sm_up WHO: wait until the first bring-up is done (120 s max)
sm_up() {
	i=0
	while [ $i -lt 12000 ]; do
		if [ "$1" = smd ]; then
			[ "$(smd_q 'r.get("sweeps", 0) >= 1 and r.get("state") == "up"')" = True ] && return 0
		else
			grep -q "SUBNET UP" "$IBSIM_DIR/osm.log" 2>/dev/null && return 0
		fi
		kill -0 "$SM_PID" 2>/dev/null || { echo "$1 exited:" >&2; tail "$IBSIM_DIR/sm.err" "$IBSIM_DIR/sm.out" >&2; return 1; }
		sleep 0.01
		i=$((i + 1))
	done
	return 1
}

# smd_t1 STATUS_JSON: the end (ns) of the first cycle after n0 that ended after t0, "" none yet
# (the status was read just before: its entries' ages are taken from now)
smd_t1() {
	python3 -c 'import json,sys
r = json.load(open(sys.argv[1])); n0, t0, now = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
e = [now - int(h["age_s"] * 1e9) for h in r.get("sweep_history", []) if h["seq"] > n0]
e = [t for t in e if t > t0]
print(min(e) if e else "")' "$1" "$n0" "$t0" "$(now_ns)"
}

# one WHO ROUND: prints "ms sets blocks_differ entries_differ switches unreachable loops extra"
one() {
	who=$1 round=$2
	start_ibsim || return 1
	if [ "$who" = smd ]; then
		printf 'sweep_interval: 10\n' >"$IBSIM_DIR/smd.yaml"
		run_sm "$SMD" -f -c "$IBSIM_DIR/smd.yaml" --socket "$IBSIM_DIR/smd.sock" \
			--state-dir "$IBSIM_DIR/state"
	else
		run_sm opensm -R ftree -d2 -f "$IBSIM_DIR/osm.log"
	fi
	sm_up "$who" || { stop_sm; stop_ibsim; return 1; }
	sleep 1
	diag dump_lfts >"$IBSIM_DIR/before.txt" 2>"$IBSIM_DIR/before.err"
	# completed cycles (smd: -1 while one runs or the status does not answer)
	cycles() {
		if [ "$who" = smd ]; then
			c=$(smd_q 'r["sweeps"] if r.get("state") != "sweeping" else -1')
			case $c in ''|*[!0-9-]*) echo -1 ;; *) echo "$c" ;; esac
		else
			grep -c "SUBNET UP" "$IBSIM_DIR/osm.log"
		fi
	}
	if [ -n "${RELINK:-}" ]; then
		# the pull first, settled: the SM's cycle, then quiet, then the read-back the return is compared with
		n0=-1
		while [ "$n0" -lt 0 ]; do n0=$(cycles); [ "$n0" -lt 0 ] && sleep_poll; done
		ibsim_console "Unlink $LINK"
		i=0
		while [ $i -lt 6000 ] && [ "$(cycles)" -le "$n0" ]; do sleep_poll; i=$((i + 1)); done
		sleep 1
		cp "$IBSIM_DIR/before.txt" "$IBSIM_DIR/cold.txt"
		diag dump_lfts >"$IBSIM_DIR/before.txt" 2>"$IBSIM_DIR/before.err"
	fi
	n0=-1   # no cycle running (the pull's may still be: its end must not be taken for the relink's)
	while [ "$n0" -lt 0 ]; do n0=$(cycles); [ "$n0" -lt 0 ] && sleep_poll; done
	set -- $(counts "$IBSIM_DIR/count.map")
	sets0=$2 smps0=$3
	t0=$(now_ns)
	if [ -n "${RELINK:-}" ]; then
		ibsim_console "ReLink $LINK"
	else
		ibsim_console "Unlink $LINK"
	fi
	done_=0
	i=0
	while [ $i -lt 6000 ]; do
		if [ "$who" = smd ]; then
			smd_status >"$IBSIM_DIR/poll.json"
			n=$(sed -n 's/.*"sweeps":\([0-9]*\).*/\1/p' "$IBSIM_DIR/poll.json")
			# a cycle after n0 that ended after t0 (a late one of the pull's may end in between)
			[ -n "$n" ] && [ "$n" -gt "$n0" ] && [ -n "$(smd_t1 "$IBSIM_DIR/poll.json")" ] && { done_=1; break; }
		else
			[ "$(grep -c "SUBNET UP" "$IBSIM_DIR/osm.log")" -gt "$n0" ] && { done_=1; break; }
		fi
		sleep_poll
		i=$((i + 1))
	done
	if [ "$who" = smd ]; then
		"$SMCTL" --socket "$IBSIM_DIR/smd.sock" --json status >"$IBSIM_DIR/done.json" 2>/dev/null
		t1=$(smd_t1 "$IBSIM_DIR/done.json")
	else
		t1=$(grep "SUBNET UP" "$IBSIM_DIR/osm.log" | sed -n "$((n0 + 1))p" | python3 -c 'import sys, time, datetime
f = sys.stdin.read().split()
d = datetime.datetime.strptime("%s %s %s %d" % (f[0], f[1], f[2], datetime.date.today().year), "%b %d %H:%M:%S %Y")
print(int(time.mktime(d.timetuple())) * 1000000000 + int(f[3]) * 1000)')
	fi
	ms=$(( (t1 - t0) / 1000000 ))
	[ $done_ = 1 ] || ms=timeout
	sleep 1
	if [ "$who" = smd ]; then
		extra=$(smd_q "'cycles %d, last %s/%s, smd counted %d blocks written %d read' % (r['sweeps'] - $n0, r['last_sweep']['kind'], r['last_sweep']['reason'], r['lft_blocks_written'], r['last_sweep']['lft_blocks_read'])")
		smd_status >"$OUT/status-smd-$round.json"
	else
		extra="SUBNET UP lines $(( $(grep -c "SUBNET UP" "$IBSIM_DIR/osm.log") - n0 ))"
		cp "$IBSIM_DIR/osm.log" "$OUT/osm-$round.log"
	fi
	set -- $(counts "$IBSIM_DIR/count.map")
	sets=$(( $2 - sets0 )) smps=$(( $3 - smps0 ))
	diag dump_lfts >"$IBSIM_DIR/after.txt" 2>"$IBSIM_DIR/after.err"
	diag ibnetdiscover >"$IBSIM_DIR/topo.ibnd" 2>"$IBSIM_DIR/topo.err"
	"$EVAL" --perms 0 --no-shift "$IBSIM_DIR/topo.ibnd" "$IBSIM_DIR/after.txt" >"$IBSIM_DIR/eval.txt" 2>&1
	unr=$(sed -n 's/.* unreachable \([0-9]*\) loops \([0-9]*\).*/\1/p' "$IBSIM_DIR/eval.txt")
	loops=$(sed -n 's/.* unreachable \([0-9]*\) loops \([0-9]*\).*/\2/p' "$IBSIM_DIR/eval.txt")
	diff=$(python3 "$OUT/lftdiff.py" "$IBSIM_DIR/before.txt" "$IBSIM_DIR/after.txt")
	cp "$IBSIM_DIR/eval.txt" "$OUT/eval-$who-$round.txt"
	restored=
	if [ -n "${RELINK:-}" ]; then
		set -- $(python3 "$OUT/lftdiff.py" "$IBSIM_DIR/cold.txt" "$IBSIM_DIR/after.txt")
		[ "$2" = 0 ] && restored="restored yes" || restored="restored NO ($2 entries differ from the cold bring-up's)"
	fi
	stop_sm
	stop_ibsim
	echo "$ms $sets $diff ${unr:-?} ${loops:-?} smps $smps $restored $extra"
}

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

: >"$OUT/smd.ms"; : >"$OUT/osm.ms"; : >"$OUT/ratio"; : >"$OUT/smd.sets"; : >"$OUT/osm.sets"
: >"$OUT/smd.smps"; : >"$OUT/osm.smps"
echo "# columns: ms-to-done, LFT Sets sent (shim), blocks differing / entries differing / switches (dump_lfts diff), unreachable pairs, loops (lft_eval), SMPs sent (shim), notes"
r=1
while [ $r -le "$RUNS" ]; do
	for who in $( [ $((r % 2)) = 1 ] && echo "smd osm" || echo "osm smd" ); do
		line=$(one $who $r) || { echo "round $r: $who failed" >&2; line="fail"; }
		echo "round $r $who: $line"
		set -- $line
		if [ "$1" != fail ] && [ "$1" != timeout ]; then
			echo "$1" >>"$OUT/$who.ms"
			echo "$2" >>"$OUT/$who.sets"
			echo "$9" >>"$OUT/$who.smps"
			[ $who = smd ] && s=$1 || o=$1
		fi
	done
	[ -n "${s:-}" ] && [ -n "${o:-}" ] && awk -v s="$s" -v o="$o" 'BEGIN { printf "%.3f\n", s / o }' >>"$OUT/ratio"
	s= o=
	r=$((r + 1))
done
echo "median time to done: smd $(median <"$OUT/smd.ms") ms, OpenSM $(median <"$OUT/osm.ms") ms;" \
	"median per-round ratio smd/OpenSM $(median <"$OUT/ratio")"
ev=${RELINK:+relink}
echo "median LFT Sets after the ${ev:-pull}: smd $(median <"$OUT/smd.sets"), OpenSM $(median <"$OUT/osm.sets");" \
	"SMPs: smd $(median <"$OUT/smd.smps"), OpenSM $(median <"$OUT/osm.smps")"
