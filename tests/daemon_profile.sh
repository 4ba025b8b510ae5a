#!/bin/sh
# A traffic profile applied to a running smd (`smctl profile load`): the sweep
# it triggers rewrites only LFT blocks that change (as many as the hotpath
# engine reports changed), a bad profile is refused with FILE:LINE and the
# running one kept, loading it again writes nothing, clearing it restores the
# plain routes. smctl sends the file's content (the daemon keeps it as
# STATE_DIR/profile), so a file the daemon cannot see works; the old "path"
# request still works; content over 4 MiB is refused by smctl and by smd, and
# only a request that begins with {"version":1,"cmd":"profile" may be longer
# than 4096 bytes.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
B="$top_builddir"
w=$(mktemp -d "${TMPDIR:-/tmp}/smd-dprof.XXXXXX")
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$w"; }
trap cleanup EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
"$B/smd/smctl" topo gen fat-tree --hosts 128 --radix 16 -o "$w/f" >/dev/null || exit 1
# a random permutation over the hosts (fixed seed), as a text profile
awk 'BEGIN { srand(5); n = 128; for (i = 0; i < n; i++) p[i] = i;
	for (i = n - 1; i > 0; i--) { j = int(rand() * (i + 1)); t = p[i]; p[i] = p[j]; p[j] = t }
	for (i = 0; i < n; i++) if (p[i] != i) printf "\"host%05d mlx5_0\" \"host%05d mlx5_0\" 1\n", i, p[i] }' >"$w/perm"
printf '"host00000 mlx5_0" "host00001 mlx5_0" -2\n' >"$w/bad"
sock="$w/smd.sock"
"$B/smd/smd" -f --backend mock --topology "$w/f" -R hotpath,ftree --socket "$sock" --state-dir "$w/st" 2>"$w/log" &
pid=$!
i=0
until "$B/smd/smctl" --socket "$sock" --json status 2>/dev/null | grep -q '"state": *"up"'; do
	i=$((i + 1)); [ $i -gt 100 ] && { bad "daemon not up"; cat "$w/log"; exit 1; }; sleep 0.1
done
get() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
"$B/smd/smctl" --socket "$sock" --json profile load "$w/perm" >"$w/r1" || bad "profile load failed"
blocks=$(get lft_blocks_written <"$w/r1")
changed=$(sed -n 's/.*LFT entries changed in \([0-9]*\) blocks.*/\1/p' "$w/log" | tail -1)
[ -n "$changed" ] && [ "$changed" -gt 0 ] || bad "hotpath reported no change"
[ "$blocks" = "$changed" ] || bad "profile load wrote $blocks LFT blocks, hotpath changed $changed"
grep -q "busiest link [0-9.]* -> 1 " "$w/log" || bad "the permutation does not reach max link load 1"
if "$B/smd/smctl" --socket "$sock" profile load "$w/bad" 2>"$w/e"; then bad "a bad profile was accepted"; fi
grep -q "bad:1:" "$w/e" || { bad "refusal does not name FILE:LINE"; cat "$w/e"; }
"$B/smd/smctl" --socket "$sock" --json profile load "$w/perm" >"$w/r2" || bad "second load failed"
[ "$(get lft_blocks_written <"$w/r2")" = 0 ] || bad "loading the same profile again rewrote blocks"
"$B/smd/smctl" --socket "$sock" --json profile clear >"$w/r3" || bad "profile clear failed"
[ "$(get lft_blocks_written <"$w/r3")" = "$blocks" ] || bad "clearing did not restore exactly the pinned blocks"
"$B/smd/smctl" --socket "$sock" profile load relative-missing 2>/dev/null && bad "a missing file was accepted"
# raw requests, as a script could send them: refused with a reason, the daemon keeps answering
raw() { python3 - "$sock" "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n"); print(s.recv(65536).decode().strip())
PY
}
cmp -s "$w/perm" "$w/st/profile" || bad "the daemon did not keep the content as STATE_DIR/profile"
# the content goes over the socket: a file smd could not open is fine (here: gone once sent)
cp "$w/perm" "$w/perm2"
"$B/smd/smctl" --socket "$sock" --json profile load "$w/perm2" >"$w/r4" || bad "profile load (content) failed"
rm -f "$w/perm2"
"$B/smd/smctl" --socket "$sock" --json sweep --heavy >"$w/r5" || bad "a sweep after the sent file was removed failed"
[ "$(get lft_blocks_written <"$w/r4")" = "$blocks" ] || bad "loading by content did not pin the same blocks"
# the old request with a path still works (protocol compatibility)
r=$(raw "{\"version\":1,\"cmd\":\"profile\",\"path\":\"$w/perm\"}") || bad "no reply to the path request"
echo "$r" | grep -q '"ok": *true' || bad "the path request: $r"
# the bound: 4 MiB of content; smctl refuses a larger file before sending it
awk 'BEGIN { for (i = 0; i < 90000; i++) printf "# padding line %09d to exceed the content limit\n", i }' >"$w/huge"
"$B/smd/smctl" --socket "$sock" profile load "$w/huge" 2>"$w/e" && bad "a profile over 4 MiB was sent"
grep -q "larger than 4194304 bytes" "$w/e" || bad "smctl over the limit: $(cat "$w/e")"
big() { python3 - "$sock" "$1" "$2" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(20); s.connect(sys.argv[1])
body = json.dumps({"name": "x", "content": "# " + "y" * int(sys.argv[3]) + "\n"}, separators=(',', ':'))
s.sendall(sys.argv[2].encode() + b"," + body[1:].encode() + b"\n")
d = b''
while not d.endswith(b'\n'):
	c = s.recv(65536)
	if not c:
		break
	d += c
print(d.decode().strip())
PY
}
r=$(big '{"version":1,"cmd":"profile"' 4200000)
echo "$r" | grep -q 'larger than the limit of 4194304 bytes' || bad "smd over the content limit: $(echo "$r" | cut -c1-200)"
r=$(big '{"cmd":"profile","version":1' 5000)
echo "$r" | grep -q 'longer than 4096 bytes' || bad "a big request without the prefix: $(echo "$r" | cut -c1-200)"
r=$(big '{"version":1,"cmd":"status"' 5000)
echo "$r" | grep -q 'longer than 4096 bytes' || bad "a big status request: $(echo "$r" | cut -c1-200)"
for req in '{"version":1,"cmd":"profile"}' '{"version":1,"cmd":"profile","path":"relative.txt"}' \
	'{"version":1,"cmd":"profile","path":42}' '{"version":1,"cmd":"profile","content":7}' \
	'{"version":1,"cmd":"profile","name":"n","content":"\\"a\\" \\"b\\" -2"}' "{\"version\":1,\"cmd\":\"profile\",\"path\":\"$w/nope\"}"; do
	r=$(raw "$req") || bad "no reply to $req"
	echo "$r" | grep -q '"ok": *false' || bad "accepted: $req -> $r"
done
"$B/smd/smctl" --socket "$sock" status >/dev/null || bad "daemon stopped answering after bad requests"
kill "$pid"; wait "$pid"; rc=$?; pid=
[ $rc = 0 ] || bad "daemon exited $rc"
[ $fail = 0 ] && echo "PASS: live profile ($blocks blocks rewritten, only the changed ones)"
exit $fail
