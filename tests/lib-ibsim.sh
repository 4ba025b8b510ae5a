# SPDX-License-Identifier: MIT
# tests/lib-ibsim.sh: run one private ibsim fabric simulator for a shell test.
#
# Source it from a POSIX sh test:   . "$top_srcdir/tests/lib-ibsim.sh"
#
# Functions (all return 0 on success, non-zero on failure; none calls exit
# except the signal trap):
#
#   ibsim_start NETFILE [IBSIM_ARGS...]
#       Makes a scratch dir (exported as IBSIM_DIR), picks a unique abstract
#       socket name (exported as IBSIM_SOCKNAME, "smd-PID-SEQ-RAND"), starts
#       `ibsim -s -n [IBSIM_ARGS...] NETFILE` in the background from IBSIM_DIR
#       (stdout+stderr to $IBSIM_DIR/ibsim.log), and waits until its control
#       socket is bound (clients can attach). Sets IBSIM_PID. Extra args go to
#       ibsim, e.g. -N 4096 -S 512 -P 40000 for big fabrics. Only one
#       simulator per shell at a time: call ibsim_stop before starting another.
#       Waits at most IBSIM_START_TIMEOUT seconds (default 60).
#
#   ibsim_run CMD [ARGS...]
#       Runs CMD as an ibsim client: from IBSIM_DIR (umad2sim creates ./sys-PID
#       there), with LD_PRELOAD=libumad2sim.so (appended to any LD_PRELOAD
#       already set), IBSIM_SOCKNAME, OSM_TMP_DIR and OSM_CACHE_DIR = IBSIM_DIR
#       (OpenSM keeps its guid2lid etc. there), ASAN_OPTIONS extended with
#       verify_asan_link_order=0 (a sanitizer build refuses to run when
#       umad2sim is preloaded first otherwise), and SIM_HOST passed on when it
#       is set (the node to attach at; default: the first node of the file).
#       Stdin/stdout/stderr are the caller's. Killed after IBSIM_RUN_TIMEOUT
#       seconds (default 300; exit status 124 then). Returns CMD's status.
#       Relative paths in ARGS are relative to IBSIM_DIR, so pass absolute ones.
#
#   ibsim_at HOST CMD [ARGS...]
#       ibsim_run at HOST (SIM_HOST), killed with SIGKILL after ${T:-10}
#       seconds (exit status 137 then): the client tools (saquery, smpquery,
#       the test clients) wait for ever on a MAD umad2sim lost, and one stuck
#       in umad2sim may not die of SIGTERM. E.g.  T=30 ibsim_at host05 saquery -g
#
#   ibsim_spawn HOST SECONDS OUT CMD [ARGS...]
#       ibsim_run at HOST in the background, bounded at SECONDS (SIGTERM),
#       stdout and stderr to OUT; IBSIM_SPAWN_PID is timeout(1)'s PID, which
#       passes a SIGTERM on to CMD (so killing it stops CMD).
#
#   ibsim_opensm_once [OPENSM_ARGS...]
#       ibsim_run opensm --once -f $IBSIM_DIR/opensm.log [OPENSM_ARGS...]:
#       one OpenSM sweep that assigns LIDs and routes, then exits.
#
#   ibsim_console CMD...
#       Only after ibsim_start with IBSIM_CONSOLE=1 in the environment (then
#       ibsim runs without -n and reads its console from the FIFO
#       $IBSIM_DIR/console, held open on fd 9): writes one console command,
#       e.g.  ibsim_console 'Unlink "S-0002c91000000000"[5]'.
#       Link changes make the switches send trap 128 to the SM.
#
#   ibsim_stop
#       Kills the simulator this library started (by its PID only), waits for
#       it, and removes IBSIM_DIR. Safe to call twice or without a start.
#
#   ibsim_cleanup
#       ibsim_stop for use in traps. ibsim_start installs
#       `trap ibsim_cleanup EXIT` and traps HUP/INT/TERM to clean up and exit
#       128+signal. A test that sets its own EXIT trap afterwards must call
#       ibsim_cleanup from it.
#
# Variables read: UMAD2SIM (path of libumad2sim.so; searched if unset),
# IBSIM (ibsim binary, default "ibsim"), IBSIM_CONSOLE, IBSIM_START_TIMEOUT,
# IBSIM_RUN_TIMEOUT, IBSIM_KEEP (non-empty: keep IBSIM_DIR for debugging),
# SIM_HOST, TMPDIR.
# Variables set: IBSIM_DIR, IBSIM_PID, IBSIM_SOCKNAME, IBSIM_LOG, IBSIM_SPAWN_PID.

_ibsim_seq=0
_ibsim_console=
IBSIM_PID=
IBSIM_DIR=

_ibsim_find_umad2sim()
{
	if [ -n "${UMAD2SIM:-}" ]; then
		[ -f "$UMAD2SIM" ] && return 0
		echo "lib-ibsim: UMAD2SIM=$UMAD2SIM does not exist" >&2
		return 1
	fi
	for _d in /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib \
		/usr/local/lib; do
		if [ -f "$_d/umad2sim/libumad2sim.so" ]; then
			UMAD2SIM="$_d/umad2sim/libumad2sim.so"
			return 0
		fi
	done
	echo "lib-ibsim: libumad2sim.so not found (Debian package ibsim-utils)" >&2
	return 1
}

# Is the abstract unix socket "@NAME:ctl" bound? ibsim binds it only after
# the net file is parsed, and clients connect to exactly that name. The
# kernel lists abstract names with a leading '@' and shows the trailing NUL
# that ibsim includes in the address length as '@' too.
_ibsim_bound()
{
	grep -q " @$1:ctl@*\$" /proc/net/unix 2>/dev/null
}

ibsim_cleanup()
{
	ibsim_stop
}

_ibsim_signal()
{
	ibsim_stop
	trap - EXIT
	exit "$1"
}

ibsim_start()
{
	if [ $# -lt 1 ]; then
		echo "lib-ibsim: usage: ibsim_start NETFILE [IBSIM_ARGS...]" >&2
		return 2
	fi
	if [ -n "$IBSIM_PID" ]; then
		echo "lib-ibsim: a simulator is already running (pid $IBSIM_PID); ibsim_stop first" >&2
		return 1
	fi
	_ibsim_net=$1
	shift
	case $_ibsim_net in
	/*) ;;
	*) _ibsim_net="$(pwd)/$_ibsim_net" ;;
	esac
	if [ ! -r "$_ibsim_net" ]; then
		echo "lib-ibsim: cannot read net file $_ibsim_net" >&2
		return 1
	fi
	_ibsim_find_umad2sim || return 1
	if ! command -v "${IBSIM:-ibsim}" >/dev/null 2>&1; then
		echo "lib-ibsim: ${IBSIM:-ibsim} not found (Debian package ibsim-utils)" >&2
		return 1
	fi

	trap ibsim_cleanup EXIT
	trap '_ibsim_signal 129' HUP
	trap '_ibsim_signal 130' INT
	trap '_ibsim_signal 143' TERM

	IBSIM_DIR=$(mktemp -d "${TMPDIR:-/tmp}/smd-ibsim.XXXXXX") || return 1
	_ibsim_seq=$((_ibsim_seq + 1))
	# $$ is the test shell; seq separates restarts; the random part guards
	# against PID reuse across containers sharing one network namespace.
	IBSIM_SOCKNAME="smd-$$-$_ibsim_seq-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
	IBSIM_LOG=$IBSIM_DIR/ibsim.log
	export IBSIM_DIR IBSIM_SOCKNAME IBSIM_LOG

	if [ -n "${IBSIM_CONSOLE:-}" ]; then
		# console on a FIFO: the two opens meet (each blocks until the other)
		mkfifo "$IBSIM_DIR/console" || return 1
		(cd "$IBSIM_DIR" && exec "${IBSIM:-ibsim}" -s "$@" "$_ibsim_net") \
			<"$IBSIM_DIR/console" >"$IBSIM_LOG" 2>&1 &
		IBSIM_PID=$!
		exec 9>"$IBSIM_DIR/console"
		_ibsim_console=1
	else
		(cd "$IBSIM_DIR" && exec "${IBSIM:-ibsim}" -s -n "$@" "$_ibsim_net") \
			</dev/null >"$IBSIM_LOG" 2>&1 &
		IBSIM_PID=$!
	fi

	_ibsim_t=0
	_ibsim_max=$(( ${IBSIM_START_TIMEOUT:-60} * 10 ))
	while ! _ibsim_bound "$IBSIM_SOCKNAME"; do
		if ! kill -0 "$IBSIM_PID" 2>/dev/null; then
			echo "lib-ibsim: ibsim exited during start-up; its log:" >&2
			cat "$IBSIM_LOG" >&2
			wait "$IBSIM_PID" 2>/dev/null
			IBSIM_PID=
			ibsim_stop
			return 1
		fi
		_ibsim_t=$((_ibsim_t + 1))
		if [ "$_ibsim_t" -gt "$_ibsim_max" ]; then
			echo "lib-ibsim: ibsim did not bind its socket within ${IBSIM_START_TIMEOUT:-60}s; log:" >&2
			cat "$IBSIM_LOG" >&2
			ibsim_stop
			return 1
		fi
		sleep 0.1
	done
	return 0
}

_ibsim_started()
{
	if [ -z "$IBSIM_PID" ] || [ -z "$IBSIM_DIR" ]; then
		echo "lib-ibsim: $1 without ibsim_start" >&2
		return 1
	fi
}

# _ibsim_exec CMD...: in a subshell, exec CMD as an ibsim client (the environment ibsim_run describes)
_ibsim_exec()
{
	_ibsim_pre=$UMAD2SIM
	[ -n "${LD_PRELOAD:-}" ] && _ibsim_pre="$LD_PRELOAD:$UMAD2SIM"
	_ibsim_asan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
	cd "$IBSIM_DIR" || exit 1
	if [ -n "${SIM_HOST:-}" ]; then
		export SIM_HOST
	fi
	LD_PRELOAD=$_ibsim_pre IBSIM_SOCKNAME=$IBSIM_SOCKNAME \
	OSM_TMP_DIR=$IBSIM_DIR OSM_CACHE_DIR=$IBSIM_DIR ASAN_OPTIONS=$_ibsim_asan \
		exec "$@"
}

ibsim_run()
{
	_ibsim_started ibsim_run || return 1
	(_ibsim_exec timeout "${IBSIM_RUN_TIMEOUT:-300}" "$@")
}

ibsim_at()
{
	_ibsim_started ibsim_at || return 1
	(
		SIM_HOST=$1
		shift
		_ibsim_exec timeout -s KILL "${T:-10}" "$@"
	)
}

ibsim_spawn()
{
	_ibsim_started ibsim_spawn || return 1
	(
		SIM_HOST=$1
		_ibsim_t=$2
		_ibsim_out=$3
		shift 3
		exec >"$_ibsim_out" 2>&1
		_ibsim_exec timeout "$_ibsim_t" "$@"
	) &
	IBSIM_SPAWN_PID=$!
}

# ibsim_diag CMD...: a diagnostic (ibtracert, iblinkinfo, smpquery...) as ibsim_run, bounded at
# IBSIM_DIAG_TIMEOUT seconds (30) and run again, at most twice, only when it was killed by that
# bound. umad2sim never times a MAD out: a MAD the simulator dropped (a full client socket on a
# loaded machine, an error rate not yet reset) leaves the tool waiting for ever, where on a real
# HCA libibmad's timeout and retry would send it again. A tool that answers with an error (no
# route, a bad LID) is not run again: that failure stands.
ibsim_diag()
{
	_ibsim_try=1
	while :; do
		IBSIM_RUN_TIMEOUT=${IBSIM_DIAG_TIMEOUT:-30} ibsim_run "$@"
		_ibsim_rc=$?
		[ "$_ibsim_rc" -eq 124 ] && [ "$_ibsim_try" -lt 3 ] || return "$_ibsim_rc"
		echo "lib-ibsim: $1 killed after ${IBSIM_DIAG_TIMEOUT:-30} s (a MAD lost in umad2sim, which never times out): run again" >&2
		_ibsim_try=$((_ibsim_try + 1))
	done
}

ibsim_opensm_once()
{
	ibsim_run opensm --once -f "$IBSIM_DIR/opensm.log" "$@" >"$IBSIM_DIR/opensm.out" 2>&1
	_ibsim_rc=$?
	if [ "$_ibsim_rc" -ne 0 ]; then
		echo "lib-ibsim: opensm --once failed ($_ibsim_rc):" >&2
		cat "$IBSIM_DIR/opensm.out" >&2
	fi
	return "$_ibsim_rc"
}

ibsim_console()
{
	if [ -z "${_ibsim_console:-}" ] || [ -z "$IBSIM_PID" ]; then
		echo "lib-ibsim: ibsim_console needs ibsim_start with IBSIM_CONSOLE=1" >&2
		return 1
	fi
	printf '%s\n' "$*" >&9
}

ibsim_stop()
{
	if [ -n "${_ibsim_console:-}" ]; then
		exec 9>&-
		_ibsim_console=
	fi
	if [ -n "$IBSIM_PID" ]; then
		kill "$IBSIM_PID" 2>/dev/null
		wait "$IBSIM_PID" 2>/dev/null
		IBSIM_PID=
	fi
	if [ -n "$IBSIM_DIR" ] && [ -d "$IBSIM_DIR" ] && [ -z "${IBSIM_KEEP:-}" ]; then
		rm -rf "$IBSIM_DIR"
	fi
	IBSIM_DIR=
	return 0
}
