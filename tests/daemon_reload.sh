#!/bin/sh
# Issue 16, operations: a reload that tells the truth and config checks.
# smd --check-config (ok / FILE:LINE, exit 0/1), --print-defaults and
# --print-config (the output reads back to the same config); on a mock
# daemon: `smctl reload` exits 0 on a good file and 1 with FILE:LINE on a
# bad one, the running config (`smctl config`) kept; RELOADING=1 / READY=1
# go to a stand-in NOTIFY_SOCKET as on SIGHUP; a daemon without -c refuses.
# A plane that stays down for 21 sweeps is logged once (SMD-0520, and one
# sweep line SMD-0522), then with "(repeated 20 times)" once
# log_repeat_interval has passed, and its coming back once (SMD-0526).
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
need_python
scratch reload

# ---- check and print, no daemon ----
conf="$work/smd.yaml"
printf 'sweep_interval: 0\nlog_level: notice\nrouting_engine: minhop\n' >"$conf"
out=$("$smd" --check-config -c "$conf" 2>&1)
[ $? = 0 ] && [ "$out" = "$conf: ok" ] || bad "--check-config of a good file: $out"
printf 'sweep_interval: 0\nlmc: 9\n' >"$work/bad.yaml"
out=$("$smd" --check-config -c "$work/bad.yaml" 2>&1)
[ $? = 1 ] || bad "--check-config of a bad file: want exit 1"
echo "$out" | grep -q "^smd: $work/bad.yaml:2: lmc: 9 is out of range" || bad "--check-config bad lmc: $out"
printf 'routing_engine: nosuch\n' >"$work/bad2.yaml"
out=$("$smd" --check-config -c "$work/bad2.yaml" 2>&1)
[ $? = 1 ] || bad "--check-config of an unknown engine: want exit 1"
echo "$out" | grep -q "bad2.yaml:1: .*unknown engine 'nosuch'" || bad "--check-config unknown engine: $out"
"$smd" --check-config -c "$work/missing.yaml" >/dev/null 2>&1
[ $? = 1 ] || bad "--check-config of a missing file: want exit 1"
"$smd" --print-defaults >"$work/defaults.yaml" || bad "--print-defaults failed"
grep -q "^routing_engine: ftree,minhop$" "$work/defaults.yaml" &&
	grep -q "^  window: 64$" "$work/defaults.yaml" && grep -q "^sweep_interval: 10$" "$work/defaults.yaml" ||
	bad "--print-defaults: $(cat "$work/defaults.yaml")"
# every key of the table is printed (a comment when it has no value)
for k in $("$smd" --dump-config-keys | cut -f1 | sed 's/.*\.//'); do
	grep -q "^ *#* *$k:" "$work/defaults.yaml" || bad "--print-defaults lacks $k"
done
out=$("$smd" --check-config -c "$work/defaults.yaml" 2>&1) || bad "the defaults printed do not check: $out"
"$smd" --print-config -c "$conf" >"$work/eff.yaml" || bad "--print-config failed"
grep -q "^routing_engine: minhop$" "$work/eff.yaml" && grep -q "^sweep_interval: 0$" "$work/eff.yaml" ||
	bad "--print-config: $(cat "$work/eff.yaml")"
"$smd" --print-config -c "$work/eff.yaml" | tail -n +2 >"$work/eff2.yaml"
tail -n +2 "$work/eff.yaml" | cmp -s - "$work/eff2.yaml" || bad "--print-config does not read back to itself"
"$smd" --print-config -c "$conf" -R updn | grep -q "^routing_engine: updn$" || bad "--print-config ignores -R"

# ---- a daemon ----
mock_ft
sock="$work/smd.sock"
"$top_builddir/tests/notify_recv" "$work/notify" "$work/notify.log" 60 &
dmn_pids="$dmn_pids $!"
i=0
while [ ! -S "$work/notify" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
NOTIFY_SOCKET="$work/notify" dmn_start one --backend mock --topology "$work/ft" -c "$conf" --socket "$sock" \
	--state-dir "$work/state" || { echo "FAIL: smd -f did not come up"; exit 1; }

"$smctl" --socket "$sock" config >"$work/run.yaml" || bad "smctl config failed"
grep -q "^# smd configuration: $conf$" "$work/run.yaml" && grep -q "^routing_engine: minhop$" "$work/run.yaml" ||
	bad "smctl config: $(cat "$work/run.yaml")"
"$smctl" --socket "$sock" --json config >"$work/cfg.json" || bad "smctl --json config failed"
[ "$(json "$work/cfg.json" '(r["ok"], r["cmd"], r["source"])')" = "(True, 'config', '$conf')" ] ||
	bad "config reply: $(cat "$work/cfg.json")"

# a good file: exit 0, applied
printf 'sweep_interval: 0\nlog_level: notice\nrouting_engine: updn\n' >"$conf"
out=$("$smctl" --socket "$sock" reload 2>&1)
[ $? = 0 ] || bad "smctl reload of a good file: want exit 0 ($out)"
[ "$out" = "reloaded $conf" ] || bad "smctl reload: $out"
"$smctl" --socket "$sock" config | grep -q "^routing_engine: updn$" || bad "reload did not apply updn"
# notify_recv: one field per line; after READY=1 of the first sweep, RELOADING=1 then READY=1 again
[ "$(grep -c "^RELOADING=1$" "$work/notify.log")" = 1 ] && grep -q "^STATUS=reloading $conf$" "$work/notify.log" ||
	bad "no RELOADING=1 for the reload command: $(cat "$work/notify.log")"
[ "$(grep -c "^READY=1$" "$work/notify.log")" = 2 ] && grep -q "^STATUS=configuration reloaded; " "$work/notify.log" ||
	bad "no READY=1 after the reload command: $(cat "$work/notify.log")"
grep -q "control socket: reloading $conf" "$work/one.err" || bad "the reload command is not logged"

# a bad file: exit 1 with FILE:LINE, the running config kept
printf 'sweep_interval: 0\nrouting_engine: minhop\nmad:\n  window: 0\n' >"$conf"
out=$("$smctl" --socket "$sock" reload 2>&1)
[ $? = 1 ] || bad "smctl reload of a bad file: want exit 1"
echo "$out" | grep -q "^smctl: smd: $conf:4: mad.window: 0 is out of range (1-4096); the running configuration is kept$" ||
	bad "smctl reload of a bad file: $out"
"$smctl" --socket "$sock" config | grep -q "^routing_engine: updn$" || bad "a refused reload changed the config"
[ "$(grep -c "^READY=1$" "$work/notify.log")" = 3 ] &&
	grep -q "^STATUS=reload failed, running configuration kept" "$work/notify.log" ||
	bad "no READY=1 after a refused reload: $(cat "$work/notify.log")"
# an engine that refuses its settings is refused by reload too
printf 'sweep_interval: 0\nrouting_engine: nosuch\n' >"$conf"
"$smctl" --socket "$sock" --json reload >"$work/rl.json" 2>/dev/null
[ $? = 1 ] || bad "smctl reload of an unknown engine: want exit 1"
[ "$(json "$work/rl.json" 'r["ok"]')" = False ] || bad "reload reply: $(cat "$work/rl.json")"
# SIGHUP still works as before
printf 'sweep_interval: 0\nrouting_engine: minhop\n' >"$conf"
kill -HUP "$pid"
i=0
until "$smctl" --socket "$sock" config | grep -q "^routing_engine: minhop$" || [ $i -ge 50 ]; do
	sleep 0.1; i=$((i + 1))
done
[ $i -lt 50 ] || bad "SIGHUP did not reload"
grep -q "SIGHUP: reloading $conf" "$work/one.err" || bad "SIGHUP reload is not logged as before"
dmn_stop || bad "smd exit status after SIGTERM"

# without -c: nothing to reload is a failure
dmn_start two --backend mock --topology "$work/ft" --socket "$sock" --state-dir "$work/state" ||
	{ echo "FAIL: smd -f without -c did not come up"; exit 1; }
out=$("$smctl" --socket "$sock" reload 2>&1)
[ $? = 1 ] || bad "smctl reload without -c: want exit 1"
echo "$out" | grep -q "without a config file" || bad "smctl reload without -c: $out"
"$smctl" --socket "$sock" config | grep -q "^# smd configuration: (defaults)$" || bad "smctl config without -c"
dmn_stop || bad "smd (no -c) exit status after SIGTERM"

# ---- a plane that stays down: logged once, then once per log_repeat_interval ----
printf 'sweep_interval: 0\nlog_repeat_interval: 600\n' >"$conf"
dmn_start three -c "$conf" --plane "mock:$work/ft" --plane "mock:$work/gone" --socket "$sock" \
	--state-dir "$work/state3" || { echo "FAIL: smd -f with a missing plane did not come up"; exit 1; }
n=0
while [ $n -lt 20 ]; do
	"$smctl" --socket "$sock" sweep --heavy >/dev/null 2>&1
	n=$((n + 1))
done
[ "$(grep -c "SMD-0520.*plane 1 (mock:$work/gone) is not up" "$work/three.err")" = 1 ] ||
	bad "a plane down for 21 sweeps is not logged once: $(grep -c SMD-0520 "$work/three.err") lines"
[ "$(grep -c "SMD-0522" "$work/three.err")" = 1 ] ||
	bad "21 degraded sweeps give $(grep -c SMD-0522 "$work/three.err") sweep lines, want 1"
# a short interval: the next repeat says how many were not logged
printf 'sweep_interval: 0\nlog_repeat_interval: 1\n' >"$conf"
"$smctl" --socket "$sock" reload >/dev/null || bad "reload (log_repeat_interval: 1)"
sleep 1.1
"$smctl" --socket "$sock" sweep --heavy >/dev/null 2>&1
grep -q "SMD-0520.*plane 1 (mock:$work/gone) is not up: .*(repeated 20 times)$" "$work/three.err" ||
	bad "no '(repeated 20 times)': $(grep SMD-0520 "$work/three.err")"
grep -q "SMD-0522: sweep 22 .*1/2 planes up.*(repeated 20 times)$" "$work/three.err" ||
	bad "no sweep line with '(repeated 20 times)': $(grep SMD-0522 "$work/three.err")"
# the plane comes back: said once
cp "$work/ft" "$work/gone"
"$smctl" --socket "$sock" sweep --heavy >/dev/null 2>&1 || bad "sweep with the plane back failed"
grep -q "SMD-0526.*plane 1 (mock:$work/gone) is up again after 22 failed sweeps" "$work/three.err" ||
	bad "the plane coming back is not logged: $(tail -5 "$work/three.err")"
dmn_stop || bad "smd (plane down) exit status after SIGTERM"
sanitizer_check "" "$work/one.err" "$work/two.err" "$work/three.err"

[ $fail = 0 ] && echo "PASS: daemon_reload" || echo "FAIL: daemon_reload ($failures)"
exit $fail
