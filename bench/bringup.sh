#!/bin/sh
# SPDX-License-Identifier: MIT
# Cold bring-up benchmark: smd --once vs opensm --once -R ftree under ibsim.
#
# usage: bench/bringup.sh [RUNS]        (from a build directory; default 5 runs)
# env:   HOSTS (2048) RADIX (64) BUILD (.) MOCK_BIG (16384; 0 skips) MOCK (1; 0 skips the
#        mock part) OUT (a temp dir) OSM_ARGS (more opensm options, e.g. --qos). RUNS 0 only
#        counts SMPs.
#
# 1. Generates a HOSTS-host 2-level fat tree of radix RADIX (smctl topo gen).
# 2. RUNS rounds; each round brings the fabric up once with smd and once with
#    OpenSM, each on a FRESH ibsim instance (every port INIT, no LIDs, empty
#    LFTs, no state files), alternating which goes first. Wall time of the SM
#    process (date +%s%N around it, process start-up included).
# 3. Prints both medians and the median ratio smd/OpenSM.
# 4. SMPs by method and attribute for both, counted by a umad_send() shim
#    preloaded in front of umad2sim (every MAD either SM hands to libibumad;
#    retries by the kernel MAD layer do not exist under umad2sim).
# 5. The mock backend on the same fabric and on a MOCK_BIG-host 3-level tree.
set -u
RUNS=${1:-5}
HOSTS=${HOSTS:-2048}
RADIX=${RADIX:-64}
BUILD=${BUILD:-$(pwd)}
MOCK_BIG=${MOCK_BIG:-16384}
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/.." && pwd)}
. "$top_srcdir/tests/lib-ibsim.sh"
SMD=$BUILD/smd/smd
SMCTL=$BUILD/smd/smctl
IBSIM_ARGS="-N 8192 -S 1024 -P 65536"
export IBSIM_RUN_TIMEOUT=600

OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/smd-bench.XXXXXX")}
mkdir -p "$OUT"
echo "# output in $OUT"
echo "# machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(uname -r)"
echo "# opensm: $(dpkg-query -W -f '${Version}' opensm 2>/dev/null), ibsim: $(dpkg-query -W -f '${Version}' ibsim-utils 2>/dev/null)"

net=$OUT/ft$HOSTS.net
"$SMCTL" topo gen fat-tree --hosts "$HOSTS" --radix "$RADIX" --levels 2 --format ibsim -o "$net" || exit 1
# both SMs run on the first CA of the file (host 0)
SIM_HOST=$(sed -n 's/^Ca[[:space:]]*[0-9]*[[:space:]]*"\([^"]*\)".*/\1/p' "$net" | head -1)
export SIM_HOST

now_ns() { date +%s%N; }

run_smd() { # $1 = tag
	rm -rf "$OUT/state-$1"
	t0=$(now_ns)
	ibsim_run "$SMD" --once -q --json --state-dir "$OUT/state-$1" >"$OUT/smd-$1.json" 2>"$OUT/smd-$1.err"
	rc=$?
	t1=$(now_ns)
	[ $rc = 0 ] || { echo "smd failed ($rc):" >&2; cat "$OUT/smd-$1.err" >&2; }
	echo $(( (t1 - t0) / 1000000 ))
}

run_osm() { # $1 = tag
	t0=$(now_ns)
	ibsim_run opensm --once -R ftree ${OSM_ARGS:-} -f "$OUT/opensm-$1.log" >"$OUT/opensm-$1.out" 2>&1
	rc=$?
	t1=$(now_ns)
	[ $rc = 0 ] || { echo "opensm failed ($rc):" >&2; tail "$OUT/opensm-$1.out" >&2; }
	echo $(( (t1 - t0) / 1000000 ))
}

median() { sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

: >"$OUT/smd.ms"
: >"$OUT/osm.ms"
: >"$OUT/ratio"
i=1
while [ $i -le "$RUNS" ]; do
	for who in $( [ $((i % 2)) = 1 ] && echo "smd osm" || echo "osm smd" ); do
		ibsim_start "$net" $IBSIM_ARGS || exit 1
		if [ $who = smd ]; then ms=$(run_smd $i); echo "$ms" >>"$OUT/smd.ms"; s=$ms
		else ms=$(run_osm $i); echo "$ms" >>"$OUT/osm.ms"; o=$ms; fi
		ibsim_stop
	done
	echo "run $i: smd $s ms, opensm $o ms"
	awk -v s="$s" -v o="$o" 'BEGIN { printf "%.3f\n", s / o }' >>"$OUT/ratio"
	i=$((i + 1))
done
if [ "$RUNS" -gt 0 ]; then
	echo "median: smd $(median <"$OUT/smd.ms") ms, opensm $(median <"$OUT/osm.ms") ms, ratio smd/opensm $(median <"$OUT/ratio")"
	echo "smd phases (last run):"
	sed 's/.*"seconds":/  /' "$OUT/smd-$RUNS.json"
fi

# ---- SMP counts through a umad_send() shim ----
cat >"$OUT/umad_count.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <infiniband/umad.h>
static unsigned long cnt[256][256];
static int (*real_send)(int, int, void *, int, int, int);
int umad_send(int fd, int agent, void *umad, int len, int timeout_ms, int retries)
{
	if (!real_send)
		real_send = (int (*)(int, int, void *, int, int, int))dlsym(RTLD_NEXT, "umad_send");
	const uint8_t *mad = umad_get_mad(umad);
	if (len >= 24 && (mad[1] == 0x81 || mad[1] == 0x01) && mad[16] == 0)
		cnt[mad[3]][mad[17]]++;
	return real_send(fd, agent, umad, len, timeout_ms, retries);
}
static const char *attr(unsigned a)
{
	switch (a) {
	case 0x02: return "Notice"; case 0x10: return "NodeDescription"; case 0x11: return "NodeInfo";
	case 0x12: return "SwitchInfo"; case 0x15: return "PortInfo"; case 0x16: return "P_KeyTable";
	case 0x17: return "SLtoVLMappingTable"; case 0x18: return "VLArbitrationTable";
	case 0x19: return "LinearForwardingTable"; case 0x1b: return "MulticastForwardingTable";
	case 0x20: return "SMInfo"; default: return "other";
	}
}
__attribute__((destructor)) static void dump(void)
{
	/* every process of the run loads the shim (timeout, too): only one that sent MADs writes */
	const char *o = getenv("UMAD_COUNT_OUT");
	unsigned long tot = 0;
	for (unsigned m = 0; m < 256; m++)
		for (unsigned a = 0; a < 256; a++)
			tot += cnt[m][a];
	FILE *f = o && tot ? fopen(o, "w") : NULL;
	if (!f)
		return;
	tot = 0;
	for (unsigned m = 0; m < 256; m++)
		for (unsigned a = 0; a < 256; a++)
			if (cnt[m][a]) {
				fprintf(f, "%-4s %-26s %lu\n", m == 1 ? "Get" : m == 2 ? "Set" : "other", attr(a), cnt[m][a]);
				tot += cnt[m][a];
			}
	fprintf(f, "total %lu\n", tot);
	fclose(f);
}
EOF
if cc -O2 -shared -fPIC -o "$OUT/umad_count.so" "$OUT/umad_count.c" -libumad -ldl; then
	for who in smd osm; do
		ibsim_start "$net" $IBSIM_ARGS || exit 1
		rm -f "$OUT/smps-$who.txt"
		export UMAD_COUNT_OUT="$OUT/smps-$who.txt"
		export LD_PRELOAD="$OUT/umad_count.so"
		if [ $who = smd ]; then run_smd count >/dev/null; else run_osm count >/dev/null; fi
		unset UMAD_COUNT_OUT LD_PRELOAD
		ibsim_stop
		echo "SMPs sent by $who (umad_send shim):"
		sed 's/^/  /' "$OUT/smps-$who.txt"
	done
	echo "smd's own counters for that run:"
	sed 's/.*"smps":\({[^}]*}[^}]*}*\).*/  \1/' "$OUT/smd-count.json" | head -c 2000
	echo
else
	echo "cannot build the umad_send shim; no SMP counts"
fi

# ---- mock backend ----
[ "${MOCK:-1}" = 0 ] && exit 0
# mock_runs NET NAME: 3 smd --once runs on the mock backend, wall time and phases of each
mock_runs() {
	for k in 1 2 3; do
		rm -rf "$OUT/mstate"
		t0=$(now_ns)
		"$SMD" --once --backend mock --topology "$1" --state-dir "$OUT/mstate" -q --json >"$OUT/$2-$k.json" || echo "mock run failed"
		t1=$(now_ns)
		echo "  $(( (t1 - t0) / 1000000 )) ms wall; $(sed 's/.*"seconds":/phases /' "$OUT/$2-$k.json")"
	done
}
echo "mock backend, $HOSTS hosts (3 runs):"
mock_runs "$net" mock
if [ "$MOCK_BIG" -gt 0 ]; then
	big=$OUT/ft$MOCK_BIG.net
	if "$SMCTL" topo gen fat-tree --hosts "$MOCK_BIG" --radix "$RADIX" --levels 3 --format ibsim -o "$big"; then
		echo "mock backend, $MOCK_BIG hosts, 3 levels (3 runs):"
		mock_runs "$big" mockbig
		head -c 600 "$OUT/mockbig-3.json"; echo
	fi
fi
