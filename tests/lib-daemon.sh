# SPDX-License-Identifier: MIT
# tests/lib-daemon.sh: the preamble the script tests share, and smd -f.
#
# Source it from a POSIX sh test, after setting top_srcdir and top_builddir:
#   set -u
#   : "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
#   : "${top_builddir:=$(pwd)}"
#   . "$top_srcdir/tests/lib-daemon.sh"
#
# Sets smd and smctl (the built programs), fail=0 and failures=0. Functions:
#
#   skip REASON            prints "SKIP: REASON" and exits 77 (automake: skipped)
#   need_python            skip unless python3 is on PATH
#   need_tools HINT CMD... "FAIL: CMD not installed (HINT)" and exit 1 for the first missing one
#   bad MSG                prints "FAIL: MSG", sets fail=1 and counts it in failures (the test goes on)
#   same_lines A B WHAT    bad "WHAT: ..." unless files A and B are identical and A is not empty
#   json FILE EXPR         prints the Python expression EXPR, r being FILE parsed as JSON
#   json_num FILE KEY      the first number "KEY":N in FILE (no python needed)
#
#   scratch NAME           makes the scratch directory $work (TMPDIR/smd-NAME.XXXXXX) and traps
#                          EXIT to clean up (HUP, INT, TERM exit with 128 + the signal):
#                          cleanup_hook runs if the test defines it, every daemon started with
#                          dmn_start (and $pid) is killed by its PID, ibsim is stopped when
#                          lib-ibsim.sh is loaded, and $work is removed unless KEEP is set
#   mock_ft                a generated fat tree in $work/ft (8-port switches, 16 hosts, no LIDs) for
#                          --backend mock; "FAIL: generator" and exit 1 when smctl cannot make it
#   mock_setup NAME        scratch NAME, mock_ft, $conf = $work/smd.yaml (sweep_interval 0, log_level
#                          notice: append to it) and $sock = $work/smd.sock: a mock daemon's set-up
#   scratch_ibsim ARGS...  ibsim_start ARGS (lib-ibsim.sh), then the scratch trap again (ibsim_start
#                          installs its own); returns ibsim_start's status
#   umad2sim_supp          the ASan suppression for umad2sim's interceptors
#                          (tests/data/mad/asan-umad2sim.supp) added to ASAN_OPTIONS (exported)
#   umad_setup             for the umad transport tests: loads lib-ibsim.sh; FAIL without ibsim, smpquery or opensm;
#                          probe (tests/mad_probe), net (ibsim's net.2sw2path4hca), umad2sim_supp
#
#   dmn_start NAME ARGS... `smd -f ARGS` in the background, stdout and stderr to $work/NAME.out
#                          and $work/NAME.err, PID in $pid; then dmn_up $work/st.json 100; on
#                          failure prints NAME.err and returns 1
#   dmn_up JSON TRIES      polls `smctl --socket $sock --json status` into JSON every 0.1 s until
#                          a cycle completed (sweeps >= 1): 0; 1 when $pid exits or after TRIES
#   dmn_stop               SIGTERM to $pid, waits for it, clears pid; returns its exit status
#   ibsim_dmn_start HOST INTERVAL
#                          `smd -f` under ibsim (ibsim_run, lib-ibsim.sh) on plane ibsim:HOST with socket
#                          $work/smd.sock ($sock), state $work/state, sweep_interval INTERVAL,
#                          trap_holdoff_ms 10, log $work/smd.log; $pid is the ibsim_run wrapper
#                          (timeout(1)), $spid smd itself; prints the log and returns 1 when it does
#                          not come up
#   ibsim_dmn_stop         SIGTERM to $spid, waits for $pid; returns smd's exit status
#   ibsim_smd_start AT ARGS...
#                          `smd -f --socket $sock --state-dir $work/state ARGS` on the running ibsim
#                          (scratch_ibsim), bounded at ${SMD_TIMEOUT:-600} s, stdout and stderr to
#                          $work/smd.out, PID in $pid (and dmn_pids), $sock defaulting to
#                          $work/smd.sock. AT HOST: on plane ibsim:HOST, smd's own ibsim transport;
#                          AT umad:HOST: --backend umad as an ibsim client at HOST (ibsim_spawn).
#                          Then waits for a completed cycle (dmn_up, 30 s) and the SA ("SA: answering"
#                          in smd.out, 10 s more); prints smd.out and returns 1 when either does not come
#   pkey_blocks_differ A B prints how many 32-entry P_Key blocks differ between two dumps (lines
#                          "NAME ... port P" each followed by `smpquery pkeys` output), and lists
#                          them ("NAME ... port P block B") on stderr; needs python3
#   wait_line FILE PATTERN TENTHS
#                          0 once FILE has a line matching PATTERN (grep), polled every 0.1 s;
#                          1 after TENTHS polls
#   q EXPR                 prints the Python expression EXPR, r being `smctl --json status` ("no status")
#   sanitizer_check WHAT FILE...
#                          bad "WHAT: sanitizer report" ("sanitizer report" when WHAT is empty)
#                          and prints the reports when a FILE has one (--enable-sanitizers)

smd="$top_builddir/smd/smd"
smctl="$top_builddir/smd/smctl"
fail=0
failures=0
pid=""
dmn_pids=""

skip() { echo "SKIP: $*"; exit 77; }
need_python() { command -v python3 >/dev/null || skip "python3 not found"; }
need_tools() {
	_hint=$1
	shift
	for _t in "$@"; do
		command -v "$_t" >/dev/null 2>&1 || { echo "FAIL: $_t not installed ($_hint)"; exit 1; }
	done
}
bad() { echo "FAIL: $*"; fail=1; failures=$((failures + 1)); }
json() {
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null
}
same_lines() {
	if [ ! -s "$1" ]; then
		bad "$3: nothing read ($1)"
	elif ! diff "$1" "$2" >"$1.diff"; then
		bad "$3: $1 and $2 differ"
		head -20 "$1.diff"
	fi
}
json_num() { grep -o "\"$2\":[0-9]*" "$1" | head -1 | sed 's/.*://'; }

_scratch_cleanup() {
	command -v cleanup_hook >/dev/null 2>&1 && cleanup_hook
	for _p in $pid $dmn_pids; do
		kill -KILL "$_p" 2>/dev/null
	done
	command -v ibsim_stop >/dev/null 2>&1 && ibsim_stop
	[ -n "${KEEP:-}" ] || rm -rf "$work"
}
scratch_trap() {
	trap _scratch_cleanup EXIT
	trap 'exit 129' HUP
	trap 'exit 130' INT
	trap 'exit 143' TERM
}
scratch() {
	work=$(mktemp -d "${TMPDIR:-/tmp}/smd-$1.XXXXXX") || exit 1
	scratch_trap
}

mock_ft() {
	"$smctl" topo gen fat-tree --radix 8 --hosts 16 --no-lids -o "$work/ft" >/dev/null || { echo "FAIL: generator"; exit 1; }
}

mock_setup() {
	scratch "$1"
	mock_ft
	conf="$work/smd.yaml"
	printf 'sweep_interval: 0\nlog_level: notice\n' >"$conf"
	sock="$work/smd.sock"
}

scratch_ibsim() {
	ibsim_start "$@"
	_rc=$?
	scratch_trap
	return $_rc
}

umad2sim_supp() {
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}suppressions=$top_srcdir/tests/data/mad/asan-umad2sim.supp"
	export ASAN_OPTIONS
}

umad_setup() {
	. "$top_srcdir/tests/lib-ibsim.sh"
	need_tools "ibsim-utils, infiniband-diags, opensm" ibsim smpquery opensm
	probe="$top_builddir/tests/mad_probe"
	net=/usr/share/doc/ibsim-utils/net-examples/net.2sw2path4hca
	umad2sim_supp
}

dmn_up() {
	_i=0
	while [ $_i -lt "$2" ]; do
		if "$smctl" --socket "$sock" --json status >"$1" 2>/dev/null &&
			[ "$(json "$1" 'r["sweeps"] >= 1')" = True ]; then
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

dmn_start() {
	_name=$1
	shift
	"$smd" -f "$@" >"$work/$_name.out" 2>"$work/$_name.err" &
	pid=$!
	dmn_pids="$dmn_pids $pid"
	dmn_up "$work/st.json" 100 && return 0
	cat "$work/$_name.err"
	return 1
}

dmn_stop() {
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	_rc=$?
	pid=""
	return $_rc
}

sanitizer_check() {
	_what=$1
	shift
	if grep -q "runtime error\|Sanitizer" "$@"; then
		bad "${_what:+$_what: }sanitizer report"
		grep -h -A5 "runtime error\|Sanitizer" "$@" | head -30
	fi
}

q() {
	"$smctl" --socket "$sock" --json status 2>/dev/null | python3 -c 'import json,sys
try: r = json.load(sys.stdin)
except Exception: print("no status"); sys.exit()
print(eval(sys.argv[1]))' "$1"
}

ibsim_dmn_start() {
	sock=$work/smd.sock
	printf 'sweep_interval: %s\ntrap_holdoff_ms: 10\n' "$2" >"$work/smd.yaml"
	ibsim_run "$smd" -f -c "$work/smd.yaml" --plane "ibsim:$1" --socket "$sock" --state-dir "$work/state" \
		>"$work/smd.out" 2>"$work/smd.log" &
	pid=$!
	dmn_pids=$pid
	dmn_up "$work/st.json" 300 || { cat "$work/smd.log"; return 1; }
	spid=$(q "r['pid']")
}

ibsim_dmn_stop() {
	kill "$spid"
	wait "$pid"
	_rc=$?
	pid=
	dmn_pids=
	return $_rc
}

wait_line() {
	_i=0
	until grep -q "$2" "$1" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -le "$3" ] || return 1
		sleep 0.1
	done
}

ibsim_smd_start() {
	_at=$1
	shift
	sock=${sock:-$work/smd.sock}
	case $_at in
	umad:*)
		ibsim_spawn "${_at#umad:}" "${SMD_TIMEOUT:-600}" "$work/smd.out" "$smd" -f --backend umad \
			--socket "$sock" --state-dir "$work/state" "$@"
		pid=$IBSIM_SPAWN_PID
		;;
	*)
		IBSIM_SOCKNAME=$IBSIM_SOCKNAME timeout "${SMD_TIMEOUT:-600}" "$smd" -f --plane "ibsim:$_at" \
			--socket "$sock" --state-dir "$work/state" "$@" >"$work/smd.out" 2>&1 &
		pid=$!
		;;
	esac
	dmn_pids="$dmn_pids $pid"
	dmn_up "$work/st.json" 300 && wait_line "$work/smd.out" "SA: answering" 100 && return 0
	cat "$work/smd.out"
	return 1
}

pkey_blocks_differ() {
	python3 - "$1" "$2" <<'EOF'
import re, sys
def tables(path):
    t, key = {}, None
    for line in open(path):
        if ' port ' in line and not line.startswith(' '):
            key = line.strip(); t[key] = []
        elif re.match(r'\s*\d+:', line):
            t[key] += [int(x, 16) for x in line.split(':', 1)[1].split()]
    return t
a, b = tables(sys.argv[1]), tables(sys.argv[2])
d = [(k, i // 32) for k in a for i in range(0, max(len(a[k]), len(b.get(k, []))), 32) if a[k][i:i + 32] != b.get(k, [])[i:i + 32]]
sys.stderr.write(''.join('%s block %d\n' % x for x in d))
print(len(d))
EOF
}
