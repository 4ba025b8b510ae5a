#!/bin/sh
# Control socket access: the daemon checks every connection's credentials
# (SO_PEERCRED). Run as root, with smctl run as `nobody` through setpriv:
#  - no socket_group, the socket file opened to everyone (chmod 0666, so the
#    file mode does not stop nobody): nobody is refused with an error reply,
#    exit 1, and a log line naming uid and pid; root still gets answers;
#  - SIGHUP with socket_group: users: the socket file gets group users;
#    nobody with the supplementary group users connects (file mode 0660)
#    and is served; nobody without it is refused;
#  - socket_group naming a group that does not exist: smd refuses to start
#    with FILE:LINE.
# Needs root (to switch users) and setpriv; otherwise SKIP with the reason.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
[ "$(id -u)" = 0 ] || skip "needs root to run smctl as another user"
command -v setpriv >/dev/null || skip "setpriv (util-linux) not found"
getent passwd nobody >/dev/null && getent group users >/dev/null && getent group nogroup >/dev/null ||
	skip "no nobody user or users/nogroup group"

scratch auth
w=$work
chmod 0755 "$w"
# a copy nobody can run wherever the build tree is
cp "$top_builddir/smd/smctl" "$w/smctl"
chmod 0755 "$w/smctl"
smctl="$w/smctl"
sock="$w/smd.sock"
as_nobody() { setpriv --reuid=nobody --regid=nogroup "$@"; }

printf 'sweep_interval: 0\n' >"$w/smd.yaml"
"$smd" -f -c "$w/smd.yaml" --backend mock --topology "$top_srcdir/tests/data/net4.ibnd" --socket "$sock" \
	--state-dir "$w/st" 2>"$w/log" &
pid=$!
i=0
until "$smctl" --socket "$sock" status >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -gt 100 ] && { cat "$w/log"; echo "FAIL: smd not up"; exit 1; }
	sleep 0.1
done
[ "$(stat -c %a "$sock")" = 660 ] || bad "socket mode is $(stat -c %a "$sock"), not 660"

# ---- no group: nobody is refused by credentials even when the file lets it connect ----
chmod 0666 "$sock"
as_nobody --clear-groups "$smctl" --socket "$sock" status >"$w/out" 2>"$w/err"
rc=$?
[ $rc = 1 ] || bad "nobody without a group: exit $rc, want 1"
grep -q "permission denied: uid 65534" "$w/err" || bad "nobody without a group: $(cat "$w/err")"
[ -s "$w/out" ] && bad "nobody got output: $(cat "$w/out")"
grep -q "SMD-0530.*refused a control connection from uid 65534 pid [0-9]" "$w/log" ||
	bad "no log line naming the refused uid and pid: $(cat "$w/log")"
as_nobody --clear-groups "$smctl" --socket "$sock" --json nodes >"$w/out" 2>&1 && bad "nobody was served nodes"
"$smctl" --socket "$sock" status >/dev/null || bad "root refused / daemon stopped answering after a refused peer"
chmod 0660 "$sock"
# with the file mode back, the kernel refuses the connection itself
as_nobody --clear-groups "$smctl" --socket "$sock" status >/dev/null 2>"$w/err" && bad "nobody connected to a 0660 socket"
# ... and smctl says so, not "is smd running?"
grep -q "permission denied (the control socket is for root and the members of smd.yaml's socket_group)" "$w/err" ||
	bad "refused by the file mode: $(cat "$w/err")"
grep -q "is smd running" "$w/err" && bad "refused by the file mode, smctl asks whether smd runs: $(cat "$w/err")"

# ---- socket_group: users (applied by a reload) ----
printf 'sweep_interval: 0\nsocket_group: users\n' >"$w/smd.yaml"
kill -HUP "$pid"
i=0
until [ "$(stat -c %G "$sock")" = users ]; do
	i=$((i + 1))
	# the group is applied at the next round of the daemon's loop: a request makes one
	"$smctl" --socket "$sock" status >/dev/null 2>&1
	[ $i -gt 50 ] && { bad "socket group is $(stat -c %G "$sock") after the reload, not users"; break; }
	sleep 0.1
done
[ "$(stat -c %a "$sock")" = 660 ] || bad "socket mode changed to $(stat -c %a "$sock")"
as_nobody --groups users "$smctl" --socket "$sock" --json status >"$w/out" 2>"$w/err" ||
	bad "nobody in group users was not served: $(cat "$w/err")"
grep -q '"ok":true' "$w/out" || bad "nobody in group users: $(cat "$w/out")"
as_nobody --groups users "$smctl" --socket "$sock" route Hca1 Hca4 >/dev/null 2>"$w/err" ||
	bad "nobody in group users: route failed: $(cat "$w/err")"
# not in the group: the file mode stops it; opened up, the credential check does
chmod 0666 "$sock"
as_nobody --clear-groups "$smctl" --socket "$sock" status >/dev/null 2>"$w/err"
[ $? = 1 ] && grep -q "not root, smd's user (uid 0) or a member of group 'users'" "$w/err" ||
	bad "nobody outside the group: $(cat "$w/err")"
chmod 0660 "$sock"
"$smctl" --socket "$sock" status >/dev/null || bad "daemon stopped answering"
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ $rc = 0 ] || bad "smd exited $rc"

# ---- a group that does not exist: refused at start with FILE:LINE ----
printf 'sweep_interval: 0\nsocket_group: no-such-group-smd\n' >"$w/bad.yaml"
"$smd" -f -c "$w/bad.yaml" --backend mock --topology "$top_srcdir/tests/data/net4.ibnd" --socket "$w/b.sock" \
	--state-dir "$w/st" 2>"$w/badlog" &
bpid=$!
i=0
while kill -0 "$bpid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 "$bpid" 2>/dev/null; then
	kill -KILL "$bpid"
	bad "smd started with a socket_group that does not exist"
fi
wait "$bpid"
[ $? != 0 ] || bad "smd exited 0 with a bad socket_group"
grep -q "bad.yaml:2:.*socket_group: no such group 'no-such-group-smd'" "$w/badlog" ||
	bad "bad socket_group message: $(cat "$w/badlog")"

# under --enable-sanitizers: any report fails the test
if grep -q "runtime error\|Sanitizer" "$w/log"; then
	bad "sanitizer report"
	grep -A5 "runtime error\|Sanitizer" "$w/log" | head -20
fi
[ $fail = 0 ] && echo "PASS: control socket access (refused peer logged with uid/pid, told permission denied, group by reload, supplementary group)"
exit $fail
