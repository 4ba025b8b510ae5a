#!/bin/sh
# The daemon drops root after its first cycle (issue 8, privilege): with
# `user: nobody` / `group: nogroup` in the config, smd -f on a mock fabric
# comes up, logs SMD-0803, and from then on /proc/PID/status shows every UID
# and GID (real, effective, saved, fs) as nobody/nogroup, no supplementary
# group but the user's, no capability (CapEff/CapPrm 0) and NoNewPrivs 1.
# The state directory and its files now belong to nobody, the daemon still
# answers and runs a requested sweep, and stops with exit 0 on SIGTERM,
# removing its socket. An unknown user is refused with FILE:LINE. Needs
# root (skips otherwise: the switch itself needs it) and the nobody user.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
need_python
[ "$(id -u)" = 0 ] || skip "not root (dropping privileges needs root)"
id nobody >/dev/null 2>&1 || skip "no user nobody"
grp=$(id -gn nobody)
nuid=$(id -u nobody)
ngid=$(id -g nobody)

scratch priv
chmod 755 "$work"    # nobody must reach the state directory and the socket

mock_ft
# the socket's directory must be the user's for the socket to be removed at
# exit (as with systemd's RuntimeDirectory= and User=)
mkdir "$work/run"
chown nobody "$work/run"
sock="$work/run/smd.sock"
state="$work/state"
cat >"$work/smd.yaml" <<EOC
state_dir: $state
socket: $sock
user: nobody
group: $grp
m_key: random
EOC

# smd -f with config $1 in the background ($pid); returns once it logged the drop (or gave up:
# 30 s, a bound for a sanitized build on a loaded machine, not an expected time)
start_dropping() {
	# the last daemon's log goes first: the redirection below truncates it in the
	# child, which may run after the first grep (it then saw the old SMD-0803)
	rm -f "$work/err"
	"$smd" -f -c "$1" --backend mock --topology "$work/ft" >"$work/out" 2>"$work/err" &
	pid=$!
	i=0
	while [ $i -lt 300 ] && ! grep -q SMD-0803 "$work/err" 2>/dev/null; do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	grep -q "SMD-0803" "$work/err"
}
start_dropping "$work/smd.yaml" || { bad "no privilege drop logged"; cat "$work/err"; }
st="/proc/$pid/status"
if [ -r "$st" ]; then
	uids=$(awk '/^Uid:/ {print $2, $3, $4, $5}' "$st")
	gids=$(awk '/^Gid:/ {print $2, $3, $4, $5}' "$st")
	[ "$uids" = "$nuid $nuid $nuid $nuid" ] || bad "Uid: $uids, want $nuid x4"
	[ "$gids" = "$ngid $ngid $ngid $ngid" ] || bad "Gid: $gids, want $ngid x4"
	groups=$(awk '/^Groups:/ {$1=""; print}' "$st" | tr -s ' ' | sed 's/^ //;s/ $//')
	for g in $groups; do
		[ "$g" = "$ngid" ] || id -G nobody | tr ' ' '\n' | grep -qx "$g" || bad "supplementary group $g kept"
	done
	[ "$(awk '/^CapEff:/ {print $2}' "$st")" = 0000000000000000 ] || bad "effective capabilities left: $(grep Cap "$st")"
	[ "$(awk '/^CapPrm:/ {print $2}' "$st")" = 0000000000000000 ] || bad "permitted capabilities left"
	[ "$(awk '/^NoNewPrivs:/ {print $2}' "$st")" = 1 ] || bad "NoNewPrivs not set"
	# every thread, not only the main one
	for t in /proc/$pid/task/*/status; do
		[ "$(awk '/^Uid:/ {print $3}' "$t")" = "$nuid" ] || bad "thread $t still has euid $(awk '/^Uid:/ {print $3}' "$t")"
	done
else
	bad "daemon gone: $(cat "$work/err")"
fi
[ "$(stat -c %u "$state")" = "$nuid" ] || bad "state directory not given to nobody"
for f in "$state"/*; do
	[ "$(stat -c %u "$f")" = "$nuid" ] || bad "$f not given to nobody"
done
[ "$(stat -c %a "$state/keys")" = 600 ] || bad "keys file mode $(stat -c %a "$state/keys")"
"$smctl" --socket "$sock" sweep >/dev/null 2>&1 || bad "sweep after the drop failed"
"$smctl" --socket "$sock" --json status >"$work/st.json" 2>/dev/null
[ "$(json "$work/st.json" 'r["sweeps"] >= 2 and r["planes_up"] == 1')" = True ] ||
	bad "not up after the drop: $(cat "$work/st.json")"
dmn_stop
rc=$?
[ $rc = 0 ] || bad "exit $rc after SIGTERM"
[ -e "$sock" ] && bad "socket left behind"

# user: and socket_group: both set: the socket is the user's and keeps the
# socket group, so the group's members (here uid 4242 with group users,
# nobody's primary group being another) still connect after the drop, and
# after a reload
if getent group users >/dev/null && command -v setpriv >/dev/null && [ "$(id -gn nobody)" != users ]; then
	cat >"$work/sg.yaml" <<EOC
state_dir: $state
socket: $sock
user: nobody
socket_group: users
EOC
	start_dropping "$work/sg.yaml" || bad "socket_group: no privilege drop logged: $(cat "$work/err")"
	cp "$smctl" "$work/smctl-copy" && chmod 755 "$work/smctl-copy"
	for when in "after the drop" "after a reload"; do
		owner=$(stat -c %U:%G "$sock")
		[ "$owner" = "nobody:users" ] || bad "socket_group $when: the socket is $owner, want nobody:users"
		setpriv --reuid=4242 --regid=4242 --groups=users "$work/smctl-copy" --socket "$sock" status \
			>/dev/null 2>"$work/sg.err" || bad "a member of socket_group refused $when: $(cat "$work/sg.err")"
		[ "$when" = "after the drop" ] && { "$smctl" --socket "$sock" reload >/dev/null 2>&1 || bad "reload failed"; }
	done
	dmn_stop
fi

# an unknown user is a configuration error: smd exits 1 before it starts anything (it used to be given
# 0.5 s to do so, which a sanitized build on a loaded machine could outlast: timeout(1) bounds it now)
printf 'user: no-such-user-smd\n' >"$work/bad.yaml"
timeout -s KILL 60 "$smd" -f -c "$work/bad.yaml" --backend mock --topology "$work/ft" --socket "$work/b.sock" \
	>/dev/null 2>"$work/bad.err"
rc=$?
[ $rc = 1 ] || bad "an unknown user: exit $rc, want 1$([ $rc = 137 ] && echo ' (still running after 60 s: accepted)')"
grep -q "bad.yaml:1: user: no such user" "$work/bad.err" || bad "no FILE:LINE for the unknown user: $(cat "$work/bad.err")"
sanitizer_check "" "$work/err"
[ $fail = 0 ] && echo "PASS: root dropped to nobody:$grp after the first cycle (uid/gid/caps/no_new_privs checked)"
exit $fail
