#!/bin/sh
# SPDX-License-Identifier: MIT
# SA PathRecord load under ibsim, smd's SA against OpenSM's on the same
# fabric in the same run (issue 13; results in BENCHMARKS.md, "SA").
#
# usage: sh ../bench/sa_ibsim.sh [SECONDS]    (from a build directory; default 5 s per case)
# env:   HOSTS (128) RADIX (16) ROUNDS (1: OpenSM then smd, ROUNDS times) FORM ("" SLID/DLID,
#        -g rdma_cm's SGID/DGID) CLIENTS (4) BUILD (.) OUT (a temp dir, kept)
#        SMD_BACKENDS ("umad ibsim") HEAVY (1: the heavy-sweep cases, 0: not)
#
# For each SM, on a fresh ibsim instance of one generated fat tree: the SM
# at host 0 (OpenSM: `opensm` in the foreground, its defaults, under
# umad2sim; smd: sweep_interval 0, once per transport in SMD_BACKENDS:
# "umad" is `smd -f --backend umad` under umad2sim as OpenSM, "ibsim" is
# `smd -f --plane ibsim:HOST`, smd's own ibsim client, whose socket the
# loop epolls: no umad2sim threads in the SM's process). Then
# bench/sa_load (libibumad, under umad2sim) at other hosts, one per leaf,
# keeps 1 or 32 PathRecord Gets in flight between random pairs of the
# fabric's CA LIDs for SECONDS:
#   1x1, 1x32     one client, 1 / 32 in flight
#   Nx1, Nx32     CLIENTS clients at once (each at its own host)
#   fair          one client floods with 256 in flight, another keeps 1:
#                 the second's latency and rate
#   heavy 1/32    smd only: `smctl resweep --heavy` in a loop meanwhile
# q/s = answers with status 0 per second (summed over clients); p50/p99
# of the slowest client; SM us/q = the SM process's utime+stime
# (/proc/PID/stat) over the case / answers (in "fair", to both clients); ibsim us/q the same for the
# simulator; SA us/q (smd only) = the SA's own thread CPU time answering
# (status "cpu_s": decode, query, encode, the transport's recv/send calls)
# per answer. Clients, simulator and SM share the machine's cores.
set -u
SECS=${1:-5}
SMD_BACKENDS=${SMD_BACKENDS:-umad ibsim}
HEAVY=${HEAVY:-1}
smsock=
HOSTS=${HOSTS:-128}
RADIX=${RADIX:-16}
ROUNDS=${ROUNDS:-1}
FORM=${FORM:-}
CLIENTS=${CLIENTS:-4}
BUILD=${BUILD:-$(pwd)}
BUILD=$(cd "$BUILD" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=$(cd "$here/.." && pwd)
SMCTL=$BUILD/smd/smctl
SMD=$BUILD/smd/smd
LOAD=$BUILD/bench/sa_load
PROBE=$BUILD/tests/sa_client
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/smd-sa-ibsim.XXXXXX")}
IBSIM_RUN_TIMEOUT=$((SECS * 40 + 120))
export IBSIM_RUN_TIMEOUT
for p in "$SMCTL" "$SMD" "$LOAD" "$PROBE"; do
	[ -x "$p" ] || { echo "sa_ibsim: $p not built (make check builds it)" >&2; exit 1; }
done
command -v opensm >/dev/null || { echo "sa_ibsim: opensm not found" >&2; exit 1; }
. "$top_srcdir/tests/lib-ibsim.sh"
_ibsim_find_umad2sim || exit 1

net=$OUT/ft.net
"$SMCTL" topo gen fat-tree --hosts "$HOSTS" --radix "$RADIX" --levels 2 --format ibsim -o "$net" >/dev/null || exit 1
# host node names in file order; the SM at the first, diagnostics at the
# second, clients at hosts spread over the leaves
grep -E '^(Ca|Hca)' "$net" | sed 's/.*"\(H-[0-9a-f]*\)".*/\1/' >"$OUT/hosts"
nh=$(wc -l <"$OUT/hosts")
smnode=$(sed -n 1p "$OUT/hosts")
diag=$(sed -n 2p "$OUT/hosts")
# next_host: a host no client has used yet in this ibsim instance (ibsim
# refuses, now and then, a client at a node whose previous client just left),
# stepping over the leaves
hostno=0
next_host() {
	hostno=$((hostno + 1))
	sed -n "$(( (hostno * 9) % (nh - 2) + 3 ))p" "$OUT/hosts"
}
TCK=$(getconf CLK_TCK)

bgpids=
cleanup() {
	for p in $bgpids; do kill "$p" 2>/dev/null; done
	ibsim_cleanup
}
trap cleanup EXIT

# cpu PID: utime+stime in ticks
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
# pid_of WRAPPER COMM: the process named COMM at or below WRAPPER (ibsim_run's subshell, timeout)
pid_of() {
	_p=$1
	_i=0
	while [ "$(cat /proc/"$_p"/comm 2>/dev/null)" != "$2" ] && [ $_i -lt 4 ]; do
		_p=$(cat /proc/"$_p"/task/*/children 2>/dev/null | tr ' ' '\n' | sed '/^$/d' | head -1)
		[ -n "$_p" ] || return 1
		_i=$((_i + 1))
	done
	echo "$_p"
}
# wait until a PathRecord query from the diagnostics host is answered
sa_ready() {
	_i=0
	while [ $_i -lt 120 ]; do
		SIM_HOST=$diag ibsim_run "$PROBE" -t 300 "$1" >/dev/null 2>&1 && return 0
		sleep 0.5
		_i=$((_i + 1))
	done
	return 1
}

# run_case SM NAME "HOST:INFLIGHT ..."  -> one result row
run_case() {
	_sm=$1 _name=$2
	c0=$(cpu "$smpid") i0=$(cpu "$IBSIM_PID") a0=$(sa_cpu_ns)
	_k=0 _pids=
	# shellcheck disable=SC2086 # FORM is empty or one option
	for spec in $3; do
		_k=$((_k + 1))
		SIM_HOST=${spec%:*} ibsim_run "$LOAD" -f "$OUT/lids" -n "${spec#*:}" -d "$SECS" $FORM \
			-N "c$_k" >"$OUT/$_sm.$_name.$_k" 2>&1 &
		_pids="$_pids $!"
	done
	for p in $_pids; do wait "$p"; done
	c1=$(cpu "$smpid") i1=$(cpu "$IBSIM_PID") a1=$(sa_cpu_ns)
	cat "$OUT/$_sm.$_name".* >>"$OUT/raw.txt"
	# the last client's line is the measured one in "fair" (the quiet host)
	cat "$OUT/$_sm.$_name".* | awk -v sm="$_sm" -v name="$_name" -v dc=$((c1 - c0)) -v di=$((i1 - i0)) \
		-v tck="$TCK" -v fair="${4:-}" -v da=$((a1 - a0)) '
		{ for (i = 1; i < NF; i++) v[$i] = $(i + 1)
		  if (fair && NR == 1) { fq = v["qps"]; fb = v["busy"]; fo = v["ok"]; next }
		  q += v["qps"]; ok += v["ok"]; b += v["busy"]; t += v["timeouts"]; e += v["err"]; l += v["late"]
		  if (v["p99_us"] > p99) p99 = v["p99_us"]; if (v["p50_us"] > p50) p50 = v["p50_us"] }
		END { tot = ok + fo   # CPU per answer to anyone
		      printf "| %s | %s | %.0f | %.0f / %.0f | %s | %s | %s | %d / %d / %d / %d%s |\n", sm, name, q, p50, p99,
		        (tot ? sprintf("%.1f", dc * 1e6 / tck / tot) : "-"),
		        (tot && da > 0 ? sprintf("%.2f", da / 1e3 / tot) : "-"),
		        (tot ? sprintf("%.1f", di * 1e6 / tck / tot) : "-"),
		        b, t, e, l, (fair ? sprintf(" (flooder: %.0f q/s, %d BUSY)", fq, fb) : "") }' | tee -a "$OUT/rows"
}

# the SA's own CPU time (ns) from smd's status, 0 for OpenSM
sa_cpu_ns() {
	[ -n "${smsock:-}" ] || { echo 0; return; }
	"$SMCTL" --socket "$smsock" --json status 2>/dev/null |
		sed -n 's/.*"cpu_s":\([0-9.e-]*\).*/\1/p' | head -1 | awk '{ printf "%.0f", $1 * 1e9 }'
}

# idle SM: its CPU over SECS with no client
idle() {
	c0=$(cpu "$smpid")
	sleep "$SECS"
	c1=$(cpu "$smpid")
	echo "$1 idle: $(awk -v d=$((c1 - c0)) -v t="$TCK" -v s="$SECS" 'BEGIN { printf "%.1f", d * 1000 / t / s }') ms CPU per second" |
		tee -a "$OUT/rows"
}

cases() {
	_sm=$1
	idle "$_sm"
	run_case "$_sm" 1x1 "$(next_host):1"
	run_case "$_sm" 1x32 "$(next_host):32"
	all=
	for _ in $(seq 1 "$CLIENTS"); do all="$all $(next_host):1"; done
	run_case "$_sm" "${CLIENTS}x1" "$all"
	all=
	for _ in $(seq 1 "$CLIENTS"); do all="$all $(next_host):32"; done
	run_case "$_sm" "${CLIENTS}x32" "$all"
	run_case "$_sm" "fair 1 vs 256" "$(next_host):256 $(next_host):1" fair
}

echo "sa_ibsim: $HOSTS hosts (radix $RADIX), $SECS s per case, ${FORM:-SLID/DLID} form, $CLIENTS clients, out $OUT"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| SM | case | q/s | p50 / p99 us | SM us/q | SA us/q | ibsim us/q | BUSY / timeouts / errors / late |"
echo "|---|---|---|---|---|---|---|---|"
for _ in $(seq 1 "$ROUNDS"); do
	# ---- OpenSM ----
	ibsim_start "$net" || exit 1
	trap cleanup EXIT
	hostno=0
	SIM_HOST=$smnode ibsim_run opensm -f "$OUT/opensm.log" >"$OUT/opensm.out" 2>&1 &
	w=$!
	bgpids="$bgpids $w"
	sleep 1
	smpid=$(pid_of "$w" opensm) || { echo "sa_ibsim: no OpenSM process" >&2; exit 1; }
	SIM_HOST=$diag ibsim_run ibnetdiscover -p 2>/dev/null | awk '$1 == "CA" { print $2, $4 }' | sort -u >"$OUT/lids"
	g=$(awk 'NR == 5 { print $2 }' "$OUT/lids")
	sa_ready "$g" || { echo "sa_ibsim: OpenSM's SA never answered" >&2; exit 1; }
	# LIDs only now: OpenSM assigned them during the wait
	SIM_HOST=$diag ibsim_run ibnetdiscover -p 2>/dev/null | awk '$1 == "CA" { print $2, $4 }' | sort -u >"$OUT/lids"
	cases opensm
	kill "$smpid" 2>/dev/null
	wait "$w" 2>/dev/null
	ibsim_stop

	# ---- smd, once per transport ----
	for be in $SMD_BACKENDS; do
	ibsim_start "$net" || exit 1
	trap cleanup EXIT
	hostno=0
	printf 'sweep_interval: 0\n' >"$OUT/smd.yaml"
	rm -rf "$OUT/state"
	smsock=$OUT/smd.sock
	if [ "$be" = umad ]; then
		SIM_HOST=$smnode ibsim_run "$SMD" -f -c "$OUT/smd.yaml" --backend umad --socket "$smsock" \
			--state-dir "$OUT/state" >"$OUT/smd.out" 2>"$OUT/smd.err" &
	else
		IBSIM_SOCKNAME=$IBSIM_SOCKNAME timeout "$IBSIM_RUN_TIMEOUT" "$SMD" -f -c "$OUT/smd.yaml" \
			--plane "ibsim:$smnode" --socket "$smsock" --state-dir "$OUT/state" >"$OUT/smd.out" 2>"$OUT/smd.err" &
	fi
	w=$!
	bgpids="$bgpids $w"
	sleep 1
	smpid=$(pid_of "$w" smd) || { echo "sa_ibsim: no smd process" >&2; exit 1; }
	sa_ready "$g" || { echo "sa_ibsim: smd's SA never answered" >&2; exit 1; }
	SIM_HOST=$diag ibsim_run ibnetdiscover -p 2>/dev/null | awk '$1 == "CA" { print $2, $4 }' | sort -u >"$OUT/lids"
	cases "smd-$be"
	if [ "$HEAVY" = 1 ]; then
		# heavy sweeps back to back while the clients ask
		s0=$("$SMCTL" --socket "$smsock" --json status | sed -n 's/.*"sweeps":\([0-9]*\).*/\1/p')
		(while :; do "$SMCTL" --socket "$smsock" resweep --heavy >/dev/null 2>&1 || sleep 0.1; done) &
		hl=$!
		bgpids="$bgpids $hl"
		run_case "smd-$be" "1x1, heavy sweeps" "$(next_host):1"
		run_case "smd-$be" "1x32, heavy sweeps" "$(next_host):32"
		kill "$hl" 2>/dev/null
		wait "$hl" 2>/dev/null
		s1=$("$SMCTL" --socket "$smsock" --json status | sed -n 's/.*"sweeps":\([0-9]*\).*/\1/p')
		echo "smd-$be: heavy sweeps during the last two cases: $((s1 - s0)) in $((2 * SECS)) s"
	fi
	"$SMCTL" --socket "$smsock" --json status >"$OUT/smd-$be.status.json"
	kill "$smpid" 2>/dev/null
	wait "$w" 2>/dev/null
	smsock=
	ibsim_stop
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
