#!/bin/sh
# LIDs that survive anything (issue 18), on a mock fabric:
#   1. a state file of zeros, an emptied one, a damaged sealed one (a bit
#      flipped) are refused loudly, naming the file, by --once and the daemon,
#      and left as they are: never read as an empty table (which renumbered
#      2,143 of 2,144 LIDs);
#   2. an older smd's file (no smd-state header) is read, once, and rewritten
#      sealed with the same LIDs; the sealed guid2lid is still read by an
#      emulation of OpenSM's osm_db parser (every entry, the same LIDs);
#   3. a second daemon, or smd --once, on a state directory a daemon holds is
#      refused (SMD-0805), and the first daemon's files are untouched;
#   4. a full disk (fsfail_preload.so, ENOSPC on write) then room again: the
#      daemon retries with back-off (fewer SMD-0521 lines than cycles) and
#      says when the save succeeded (SMD-0807), on a light sweep.
# Only the PIDs started here are signalled; everything is removed on exit.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
need_python
shim="$top_builddir/tests/fsfail_preload.so"
[ -f "$shim" ] || { echo "FAIL: $shim not built"; exit 1; }
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
scratch stguard
sock="$work/sock"

"$smctl" topo gen fat-tree --radix 8 --hosts 32 --no-lids -o "$work/ft" >/dev/null || { echo "FAIL: generator"; exit 1; }
fab="--backend mock --topology $work/ft"
# shellcheck disable=SC2086
once() { "$smd" --once -q $fab "$@"; }

mkdir "$work/ref"
once --state-dir "$work/ref" >/dev/null 2>"$work/ref.err" || { echo "FAIL: reference run"; cat "$work/ref.err"; exit 1; }
head -c 30 "$work/ref/guid2lid" | grep -q '^# smd-state v1 crc32=[0-9a-f]\{8\}$' || bad "guid2lid is not sealed: $(head -1 "$work/ref/guid2lid")"
head -1 "$work/ref/plane-lids" | grep -q '^# smd-state v1 crc32=' || bad "plane-lids is not sealed"

# ---- 1. damaged files are refused, named, and left alone ----
# refused WHAT FILE (guid2lid or plane-lids) MAKER: the file made by MAKER (a shell snippet on $f)
refused() {
	_w=$1 _file=$2 _make=$3
	for mode in once dmn; do
		d="$work/r-$_w-$mode"
		cp -r "$work/ref" "$d"
		f="$d/$_file"
		eval "$_make"
		cp "$f" "$work/before"
		if [ $mode = once ]; then
			once --state-dir "$d" >"$d.out" 2>"$d.err"
		else
			rm -f "$sock"
			"$smd" -f $fab --state-dir "$d" --socket "$sock" >"$d.out" 2>"$d.err"
		fi
		rc=$?
		[ $rc = 1 ] || bad "$_w ($mode): exit $rc, expected 1 (refused)"
		grep -q "$f:[0-9]*: .*" "$d.err" || { bad "$_w ($mode): the error does not name $f"; cat "$d.err"; }
		cmp -s "$work/before" "$f" || bad "$_w ($mode): the damaged file was changed"
		grep -q "SMD-0522\|is up" "$d.err" && bad "$_w ($mode): the fabric was swept anyway"
	done
}
refused zeros guid2lid 'head -c "$(stat -c %s "$f")" /dev/zero >"$f"'
refused zeros-planes plane-lids 'head -c 4096 /dev/zero >"$f"'
refused empty guid2lid ': >"$f"'
refused bitflip guid2lid 'python3 -c "import sys; b = bytearray(open(sys.argv[1], \"rb\").read()); b[len(b) // 2] ^= 4; open(sys.argv[1], \"wb\").write(b)" "$f"'
refused torn plane-lids 'head -c 200 "$work/ref/plane-lids" >"$f"'
refused garbage guid2lid 'head -c 3000 /dev/urandom | tr "\\000" x >"$f"'
grep -q "NUL byte" "$work/r-zeros-once.err" || bad "zeros: the error does not say why: $(cat "$work/r-zeros-once.err")"
grep -q "checksum mismatch" "$work/r-bitflip-dmn.err" || bad "bit flip: no 'checksum mismatch': $(cat "$work/r-bitflip-dmn.err")"

# ---- 2. an older smd's files (unsealed, one entry a line) are read once and rewritten sealed ----
mkdir "$work/old"
for f in guid2lid plane-lids; do
	grep '^0x' "$work/ref/$f" >"$work/old/$f"
done
once --state-dir "$work/old" >/dev/null 2>"$work/old.err" || bad "legacy files: refused: $(cat "$work/old.err")"
for f in guid2lid plane-lids; do
	cmp -s "$work/ref/$f" "$work/old/$f" || bad "legacy $f: not rewritten as the sealed table with the same LIDs"
done
# OpenSM's parser (opensm/osm_db_files.c osm_db_restore + osm_db_pack.c unpack_lids), emulated
python3 - "$work/ref/guid2lid" <<'PY' || bad "OpenSM's parser does not read every entry of our guid2lid"
import sys
lines = open(sys.argv[1]).read().split('\n')
ours = {int(l.split()[0], 16): int(l.split()[1], 16) for l in lines if l.startswith('0x')}
got, key, val = {}, None, None
for l in [x + '\n' for x in lines[:-1]] + ['\n']:
    if key is None:
        if l[0] not in ' \t\n':
            w = l.split(None, 1)
            key, val = w[0], (w[1] if len(w) > 1 else '')
        elif l != '\n':
            sys.exit('ERR 6105: line starts with a blank')
    elif l == '\n':
        try:
            k = int(key, 0)
        except ValueError:
            k = None    # ERR 610B: an invalid key (our header) is dropped, parsing goes on
        if k is not None:
            got[k] = int(val[:23].split()[0], 0)
        key = None
    else:
        val += l
sys.exit(0 if got == ours and len(ours) > 40 else 1)
PY

# ---- 3. one smd per state directory ----
rm -f "$sock"
if dmn_start d1 $fab --state-dir "$work/ref" --socket "$sock"; then
	pid1=$pid
	cp "$work/ref/guid2lid" "$work/held.g2l"
	"$smd" -f $fab --state-dir "$work/ref" --socket "$work/sock2" >"$work/d2.out" 2>"$work/d2.err" &
	pid=$!
	dmn_pids="$dmn_pids $pid"
	i=0
	while [ $i -lt 50 ] && kill -0 "$pid" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
	if kill -0 "$pid" 2>/dev/null; then
		bad "a second daemon on the same state directory runs"
		dmn_stop
	else
		wait "$pid"
		[ $? = 1 ] || bad "second daemon: exit status not 1"
	fi
	grep -q "SMD-0805.*$work/ref is in use by another smd" "$work/d2.err" ||
		bad "second daemon: no clear message: $(cat "$work/d2.err")"
	once --state-dir "$work/ref" >"$work/o2.out" 2>"$work/o2.err"
	[ $? = 1 ] || bad "--once on a held state directory: not refused"
	grep -q "SMD-0805.*in use by another smd" "$work/o2.err" || bad "--once on a held directory: no clear message: $(cat "$work/o2.err")"
	"$smd" --once -q --plane "mock:$work/ft" --plane "mock:$work/ft" --state-dir "$work/ref" >/dev/null 2>"$work/o3.err"
	[ $? = 1 ] && grep -q SMD-0805 "$work/o3.err" || bad "--once (2 planes) on a held directory: not refused"
	cmp -s "$work/held.g2l" "$work/ref/guid2lid" || bad "the refused runs changed the held guid2lid"
	pid=$pid1
	dmn_stop || bad "first daemon: exit status"
else
	bad "daemon d1 did not come up"
fi
# released at exit: a --once after it runs
once --state-dir "$work/ref" >/dev/null 2>&1 || bad "--once after the daemon stopped: refused"

# ---- 4. ENOSPC, then room again: retried with back-off, saved on a light sweep, said so ----
d="$work/full"
mkdir "$d"
printf 'sweep_interval: 1\n' >"$work/fast.yaml"
: >"$work/diskfull"
rm -f "$sock"
FSFAIL_PATH="$d" FSFAIL_ERRNO=ENOSPC FSFAIL_OPS=write FSFAIL_FLAG="$work/diskfull" LD_PRELOAD="$shim" \
	"$smd" -f -c "$work/fast.yaml" $fab --state-dir "$d" --socket "$sock" >"$work/full.out" 2>"$work/full.err" &
pid=$!
dmn_pids="$dmn_pids $pid"
if dmn_up "$work/full.json" 100; then
	sleep 8
	cycles=$("$smctl" --socket "$sock" --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["sweeps"])')
	fails=$(grep -c "SMD-0521.*plane-lids: cannot write" "$work/full.err")
	[ "$fails" -ge 2 ] || bad "ENOSPC: the save was not retried ($fails attempts logged in $cycles cycles)"
	[ "$fails" -lt "$cycles" ] || bad "ENOSPC: logged $fails times in $cycles cycles: no back-off"
	[ -e "$d/plane-lids" ] && bad "ENOSPC: plane-lids written on a full disk?"
	rm -f "$work/diskfull"
	i=0
	while [ $i -lt 300 ] && ! grep -q SMD-0807 "$work/full.err"; do sleep 0.1; i=$((i + 1)); done
	grep -q "SMD-0807: plane-consistent LIDs saved after [0-9]* failed attempt" "$work/full.err" ||
		bad "room again: no SMD-0807 line saying the save succeeded: $(tail -3 "$work/full.err")"
	"$smctl" --socket "$sock" --json status >"$work/full.json"
	[ "$(json "$work/full.json" 'r.get("lid_table_error") is None')" = True ] || bad "room again: status still reports an error"
	[ "$(json "$work/full.json" 'r["heavy_sweeps"] == 1')" = True ] ||
		bad "room again: a heavy sweep ran"
	cmp -s "$work/ref/plane-lids" "$d/plane-lids" || bad "room again: plane-lids is not the reference table"
	cmp -s "$work/ref/guid2lid" "$d/guid2lid" || bad "room again: guid2lid is not the reference table"
	echo "ENOSPC: $fails failed attempts logged over $cycles cycles, then $(grep -o 'SMD-0807.*' "$work/full.err")"
	dmn_stop || bad "ENOSPC daemon: exit status"
else
	bad "ENOSPC: the daemon did not come up"
	cat "$work/full.err"
fi

sanitizer_check "" "$work"/*.err
[ "$fail" -eq 0 ] && echo "PASS: state_guard" || echo "FAIL: state_guard ($failures)"
exit "$fail"
