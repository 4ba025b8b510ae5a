#!/bin/sh
# SPDX-License-Identifier: MIT
# The next scale (issue 17): smd near the 49,151-LID limit, and OpenSM under
# ibsim on the largest fabric it stays usable on. BENCHMARKS.md "The next scale".
#
# usage: bench/scale40k.sh [PARTS]      (from a build directory; PARTS default "route mock dryrun ibsim")
# env:   HOSTS (40960) hosts per plane of the 3-level radix-64 fat tree, PLANES (8) for the dry-run,
#        BUILD (.), OUT (a temp dir), LATENCY_US (20) the mock's per-answer latency,
#        IBSIM_HOSTS ("4096 16384 40960") fabric sizes for smd and OpenSM under ibsim (one fresh ibsim
#        each), IBSIM_RUN_TIMEOUT (1800) seconds before an SM run under ibsim is called unusable,
#        DUMP_PLANES (1) planes also written in dump_lfts form (11.7 GB per plane) to DUMP_TO
#        (a file in OUT; /dev/null if the disk has no room), with the disk floor (dd) beside it,
#        SMD_QOS (off) smd's qos.enabled under ibsim: off as OpenSM's default (on, ibsim's switches take
#        one SL2VL Set per port pair: 5.5 M of 7.0 M SMPs at 16,384 hosts).
#
# Parts:
#   route   bench/route_bench: ftree on one plane (CPU, best of 3), the validator, the metrics
#           (shifts sampled above 2^26 flows: routing/metrics.h), peak RSS.
#   mock    bench/scale_bench on plane 0 with the LATENCY_US model: cold bring-up (phases, SMPs,
#           LFT blocks against the floor of one block per 64 LIDs per switch), a heavy sweep, one
#           link down and the incremental sweep that reroutes, VmHWM, the emulator's CPU apart.
#   daemon  smd -f on the mock (plane 0 of the same tree, answers at once), its memory apart from
#           the emulator's: VmRSS sampled every 0.2 s minus the Rss of the mapping that holds the
#           emulated LFTs (/memfd:smd-mock-lft in /proc/PID/smaps) and minus MOCK_FIXED_MB (what
#           loading the mock adds: scale_bench prints it as mock_fixed_mb); per step (cold bring-up,
#           `smctl sweep --heavy`, `smctl link down` of scale_bench's link and its incremental
#           sweep): peak and after. Needs LINK="GUID PORT" (scale_bench's link_down line).
#   dryrun  smd --dry-run of PLANES planes with --lfts-out (compact form to a file; dump form of
#           DUMP_PLANES planes to DUMP_TO), /usr/bin/time (wall, user, sys, max RSS), the LFT
#           writer's CPU (SMD-2021), and the disk floor for the same bytes (dd with and without
#           conv=fdatasync).
#   ibsim   smd --once and opensm --once -R ftree under ibsim (-N/-S/-P raised), fresh ibsim per
#           run: wall, CPU and max RSS of the SM process, ibsim's own VmHWM.
# Every number is printed with the 1-minute load average beside it.
set -u
PARTS=${1:-route mock daemon dryrun ibsim}
HOSTS=${HOSTS:-40960}
PLANES=${PLANES:-8}
BUILD=${BUILD:-$(pwd)}
LATENCY_US=${LATENCY_US:-20}
IBSIM_HOSTS=${IBSIM_HOSTS:-4096 16384 40960}
DUMP_PLANES=${DUMP_PLANES:-1}
export IBSIM_RUN_TIMEOUT=${IBSIM_RUN_TIMEOUT:-1800}
export IBSIM_START_TIMEOUT=${IBSIM_START_TIMEOUT:-600}
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/.." && pwd)}
SMD=$BUILD/smd/smd
SMCTL=$BUILD/smd/smctl
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/smd-scale40k.XXXXXX")}
mkdir -p "$OUT"
for b in "$SMD" "$SMCTL" "$BUILD/bench/route_bench" "$BUILD/bench/scale_bench"; do
	[ -x "$b" ] || { echo "scale40k.sh: build $b first (make check builds the benches)" >&2; exit 2; }
done
load() { cut -d' ' -f1 /proc/loadavg; }
# The disk's floor for N bytes in $OUT: dd of that size through the page cache, and to the
# disk (conv=fdatasync); the dry-run writes through the page cache and does not sync.
disk_floor() {
	mb=$((($1 + 1048575) / 1048576))
	for conv in "" fdatasync; do
		r=$(dd if=/dev/zero of="$OUT/dd.floor" bs=1M count=$mb ${conv:+conv=$conv} 2>&1 | tail -1)
		rm -f "$OUT/dd.floor"
		echo "# floor, dd bs=1M count=$mb ${conv:+conv=$conv}: $r (load $(load))"
	done
}
echo "# output in $OUT; $(date -u +%FT%TZ)"
echo "# machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(uname -r)"
echo "# opensm: $(dpkg-query -W -f '${Version}' opensm 2>/dev/null), ibsim: $(dpkg-query -W -f '${Version}' ibsim-utils 2>/dev/null)"

topo=$OUT/ft$HOSTS
case " $PARTS " in
*" mock "* | *" daemon "* | *" dryrun "*)
	[ -r "$topo.0" ] || "$SMCTL" topo gen fat-tree --hosts "$HOSTS" --levels 3 --radix 64 --planes "$PLANES" \
		--split -o "$topo" || exit 2
	;;
esac

for part in $PARTS; do
	case $part in
	route)
		echo "## route: bench/route_bench --levels 3 --hosts $HOSTS --repeat 3 (load $(load))"
		"$BUILD/bench/route_bench" --levels 3 --radix 64 --hosts "$HOSTS" --repeat 3 --perms 20
		echo "# load after: $(load)"
		;;
	mock)
		echo "## mock: bench/scale_bench $topo.0 $LATENCY_US (load $(load))"
		"$BUILD/bench/scale_bench" "$topo.0" "$LATENCY_US"
		echo "# load after: $(load)"
		;;
	daemon)
		sock=$OUT/smd.sock
		rm -rf "$OUT/dstate" "$OUT/daemon.rss"
		echo "## daemon: smd -f --backend mock --topology $topo.0 (load $(load))"
		"$SMD" -f --backend mock --topology "$topo.0" --socket "$sock" --state-dir "$OUT/dstate" \
			>"$OUT/daemon.out" 2>"$OUT/daemon.err" &
		dpid=$!
		# sampler: seconds, step, VmRSS kB, the emulated LFTs' Rss kB
		(
			while kill -0 $dpid 2>/dev/null; do
				step=$(cat "$OUT/daemon.step" 2>/dev/null)
				awk -v t="$(date +%s.%N)" -v s="$step" '
					FILENAME ~ /status$/ && /^VmRSS/ { rss = $2 }
					FILENAME ~ /smaps$/ && /^[0-9a-f]+-[0-9a-f]+ / { inarena = /smd-mock-lft/ }
					FILENAME ~ /smaps$/ && inarena && /^Rss:/ { lft += $2 }
					END { if (rss && s != "") print t, s, rss, lft + 0 }' \
					/proc/$dpid/status /proc/$dpid/smaps 2>/dev/null >>"$OUT/daemon.rss"
				sleep 0.2
			done
		) &
		spid=$!
		echo cold >"$OUT/daemon.step"
		i=0
		until "$SMCTL" --socket "$sock" --json status 2>/dev/null | grep -q '"sweeps": *[1-9]'; do
			sleep 1
			i=$((i + 1))
			[ $i -lt 3600 ] && kill -0 $dpid 2>/dev/null || { echo "daemon: no first sweep"; break; }
		done
		sleep 5
		echo heavy >"$OUT/daemon.step"
		"$SMCTL" --socket "$sock" sweep --heavy --timeout 3600 >/dev/null || echo "daemon: sweep --heavy failed"
		sleep 5
		if [ -n "${LINK:-}" ]; then
			echo link_down >"$OUT/daemon.step"
			"$SMCTL" --socket "$sock" link down $LINK --wait >/dev/null || echo "daemon: link down failed"
			sleep 5
		fi
		echo end >"$OUT/daemon.step"
		kill -TERM $dpid
		wait $dpid
		wait $spid
		awk -v fixed="${MOCK_FIXED_MB:-0}" '
			$2 == "end" { next }
			{ sm = $3 / 1024 - $4 / 1024 - fixed; st = $2
			  if (!(st in pk) || sm > pk[st]) pk[st] = sm; last[st] = sm; lft[st] = $4 / 1024
			  if (!(st in rp) || $3 > rp[st]) rp[st] = $3; if (!(st in seen)) { seen[st] = 1; order[++n] = st } }
			END { for (i = 1; i <= n; i++) { s = order[i]
				printf "daemon step=%s sm_peak_mb=%.1f sm_after_mb=%.1f rss_peak_mb=%.1f mock_lft_mb=%.1f mock_fixed_mb=%s\n",
					s, pk[s], last[s], rp[s] / 1024, lft[s], fixed } }' "$OUT/daemon.rss"
		echo "# load after: $(load)"
		;;
	dryrun)
		dumps=
		p=0
		while [ $p -lt "$PLANES" ]; do dumps="$dumps -t $topo.$p"; p=$((p + 1)); done
		echo "## dryrun: smd --dry-run ($PLANES planes) -R ftree -v --lfts-out FILE --lfts-format compact (load $(load))"
		/usr/bin/time -f "wall_s=%e user_s=%U sys_s=%S maxrss_kb=%M" "$SMD" --dry-run $dumps -R ftree -v \
			--lfts-out "$OUT/lfts.compact" --lfts-format compact 2>&1 | grep -v SMD-2011
		bytes=$(stat -c %s "$OUT/lfts.compact")
		echo "# LFT file: $bytes bytes; load after: $(load)"
		rm -f "$OUT/lfts.compact"
		disk_floor "$bytes"
		echo "## dryrun: plane 0 with --report --json: the route metrics (load $(load))"
		/usr/bin/time -f "wall_s=%e user_s=%U sys_s=%S maxrss_kb=%M" "$SMD" --dry-run -t "$topo.0" -R ftree -q \
			--report "$OUT/dryrun.json" --json
		python3 -c 'import json,sys
r=json.load(open(sys.argv[1])); t=r.get("seconds", r.get("timing"))
print("# report timing:", t)' "$OUT/dryrun.json" 2>/dev/null
		echo "# load after: $(load)"
		if [ "$DUMP_PLANES" -gt 0 ]; then
			dumps=
			p=0
			while [ $p -lt "$DUMP_PLANES" ]; do dumps="$dumps -t $topo.$p"; p=$((p + 1)); done
			# to a file: 11.7 GB per plane (DUMP_TO=/dev/null when the disk has no room)
			dump_to=${DUMP_TO:-$OUT/lfts.dump}
			echo "## dryrun: $DUMP_PLANES plane(s), dump_lfts form to $dump_to (load $(load))"
			t0=$(date +%s.%N)
			/usr/bin/time -f "wall_s=%e user_s=%U sys_s=%S maxrss_kb=%M" "$SMD" --dry-run $dumps -R ftree -v \
				--lfts-out "$dump_to" 2>&1 | grep -v SMD-2011
			if [ -f "$dump_to" ]; then
				bytes=$(stat -c %s "$dump_to")
				sync "$dump_to" 2>/dev/null || sync
				echo "# dump file: $bytes bytes; on disk (sync included) $(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.1f", a - b }') s after the start"
				rm -f "$dump_to"
				disk_floor "$bytes"
			fi
			echo "# load after: $(load)"
		fi
		;;
	ibsim)
		. "$top_srcdir/tests/lib-ibsim.sh"
		printf 'qos:\n  enabled: %s\n' "$([ "${SMD_QOS:-off}" = on ] && echo true || echo false)" >"$OUT/smd.yaml"
		for h in $IBSIM_HOSTS; do
			net=$OUT/ib$h.net
			[ -r "$net" ] || "$SMCTL" topo gen fat-tree --hosts "$h" --levels 3 --radix 64 --format ibsim \
				--no-lids -o "$net" >/dev/null || exit 2
			# the generator writes the limits the file needs in its header
			args=$(sed -n '1,5s/.*run ibsim \(-N .*\)$/\1/p' "$net")
			for sm in smd opensm; do
				t0=$(date +%s.%N)
				if ! ibsim_start "$net" $args; then
					echo "$h hosts: ibsim could not start with $args"
					continue 2
				fi
				ts=$(date +%s.%N)
				if [ $sm = smd ]; then
					ibsim_run /usr/bin/time -f "wall_s=%e user_s=%U sys_s=%S maxrss_kb=%M" -o "$OUT/$sm$h.time" \
						"$SMD" --once -q --json -c "$OUT/smd.yaml" --state-dir "$OUT/state$h" >"$OUT/$sm$h.out" 2>&1
				else
					ibsim_run /usr/bin/time -f "wall_s=%e user_s=%U sys_s=%S maxrss_kb=%M" -o "$OUT/$sm$h.time" \
						opensm --once -R ftree -f "$OUT/$sm$h.log" >"$OUT/$sm$h.out" 2>&1
				fi
				rc=$?
				hwm=$(grep VmHWM "/proc/$IBSIM_PID/status" 2>/dev/null | awk '{print $2}')
				ibsim_stop
				echo "$h hosts: $sm rc=$rc $(tail -1 "$OUT/$sm$h.time" 2>/dev/null) ibsim_start_s=$(awk -v a="$ts" -v b="$t0" 'BEGIN { printf "%.3f", a - b }') ibsim_vmhwm_kb=${hwm:-?} load=$(load)"
				[ $sm = smd ] && python3 -c 'import json,sys
s=json.loads(open(sys.argv[1]).read().splitlines()[-1])
print("   smd: smps=%d lft_blocks=%d" % (s["smps"]["sent"], s["lft_blocks_written"]),
      " ".join("%s_s=%.2f" % kv for kv in s["seconds"].items()))' \
					"$OUT/$sm$h.out" 2>/dev/null
				[ $rc = 124 ] && echo "$h hosts: $sm did not finish within ${IBSIM_RUN_TIMEOUT}s"
			done
		done
		;;
	*)
		echo "scale40k.sh: unknown part $part" >&2
		exit 2
		;;
	esac
done
