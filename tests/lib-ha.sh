# SPDX-License-Identifier: MIT
# Helpers of the master/standby tests under ibsim (ha_*.sh); sourced after
# lib-daemon.sh and umad_setup, with $work set.
now() { date +%s.%N; }
elapsed() { python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$(now)"; }
# sminfo from a third node (Hca3): the SM at the SM LID, or at the LID/modifier given
sminfo_at() { SIM_HOST=Hca3 ibsim_run sminfo "$@" 2>&1 | head -1; }
# smd at an ibsim host with a config: start_smd NAME HOST YAML
start_smd() {
	SIM_HOST=$2 ibsim_run "$smd" -f -c "$3" --backend umad --socket "$work/$1.sock" \
		--state-dir "$work/$1.state" >"$work/$1.out" 2>"$work/$1.err" &
}
# OpenSM runs under a subshell and timeout(1): its own PID, found by walking
# down from the PID we started through /proc (no ps/pgrep): osm_pid WRAPPER_PID
osm_pid() {
	_p=$1
	_i=0
	while [ "$(cat /proc/"$_p"/comm 2>/dev/null)" != opensm ] && [ $_i -lt 3 ]; do
		_p=$(cat /proc/"$_p"/task/*/children 2>/dev/null | tr ' ' '\n' | sed '/^$/d' | head -1)
		[ -n "$_p" ] || break
		_i=$((_i + 1))
	done
	echo "${_p:-0}"
}
# wait_note FILE TEXT [TENTHS]: up to 10 s (or TENTHS/10 s) for a line of the log
wait_note() {
	_i=0
	while ! grep -q "$2" "$1" 2>/dev/null && [ $_i -lt "${3:-100}" ]; do sleep 0.1; _i=$((_i + 1)); done
	grep -q "$2" "$1"
}
# OpenSM (priority 10) at Hca1, and up to 60 s for sminfo to show it master; osm_wrap: the PID started
osm_master_hca1() {
	SIM_HOST=Hca1 ibsim_run opensm -p 10 -f "$IBSIM_DIR/opensm.log" >/dev/null 2>&1 &
	osm_wrap=$!
	_i=0
	while [ $_i -lt 300 ]; do
		sminfo_at | grep -q "sm guid 0x100001, .*state 3 SMINFO_MASTER" && break
		sleep 0.2
		_i=$((_i + 1))
	done
}
