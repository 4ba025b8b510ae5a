#!/bin/sh
# State files under file-system failures (issue 8, persistence). An
# LD_PRELOAD shim (tests/fsfail_preload.so) makes open/write/fsync/rename
# under the state directory fail with ENOSPC, EROFS, EACCES or EIO (chmod
# would not do: tests may run as root). For each failure, `smd --once` on a
# mock fabric that needs its guid2lid rewritten must: still bring the whole
# subnet up (every link port ACTIVE), exit 1 with SMD-0801 naming the file
# and errno's text, leave the previous guid2lid byte-identical and no temp
# file behind. A later run without the failure saves the same table as a run
# that never failed. A short write (FSFAIL_AFTER) must not leave a partial
# file either. The daemon (smd -f) with a full disk keeps running, reports
# the error (status lid_table_error, log SMD-0521 naming plane-lids), and
# saves the table once the disk has room again (after a restart).
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
shim="$top_builddir/tests/fsfail_preload.so"
need_python
[ -f "$shim" ] || { echo "FAIL: $shim not built"; exit 1; }
# a sanitizer runtime must otherwise come first in the library list
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS

scratch fsfail

"$smctl" topo gen fat-tree --radix 8 --hosts 32 --no-lids -o "$work/ft" >/dev/null || { echo "FAIL: generator"; exit 1; }
once() {
	"$smd" --once --backend mock --topology "$work/ft" --json "$@"
}

# the reference: a run that never failed, from the same partial table
mkdir "$work/ref"
once --state-dir "$work/ref" >/dev/null 2>&1 || { echo "FAIL: reference run"; exit 1; }
# an older smd's table (no smd-state header: read, then rewritten sealed) missing 5 entries
grep '^0x' "$work/ref/guid2lid" | head -n -5 >"$work/partial"
cp "$work/partial" "$work/ref/guid2lid"
once --state-dir "$work/ref" >/dev/null 2>&1 || { echo "FAIL: reference run 2"; exit 1; }
cmp -s "$work/partial" "$work/ref/guid2lid" && { echo "FAIL: the reference run did not rewrite guid2lid"; exit 1; }

n=0
for spec in ENOSPC:write:0 ENOSPC:write:100 EDQUOT:write:0 EIO:fsync:0 EROFS:open:0 EACCES:open:0 EROFS:rename:0; do
	err=${spec%%:*}
	rest=${spec#*:}
	op=${rest%%:*}
	after=${rest#*:}
	n=$((n + 1))
	d="$work/s$n"
	mkdir "$d"
	cp "$work/partial" "$d/guid2lid"
	FSFAIL_PATH="$d" FSFAIL_ERRNO=$err FSFAIL_OPS=$op FSFAIL_AFTER=$after LD_PRELOAD="$shim" \
		once --state-dir "$d" >"$d.json" 2>"$d.err"
	rc=$?
	[ $rc = 1 ] || bad "$spec: exit $rc, expected 1"
	grep -q "SMD-0801.*$d/guid2lid: cannot write" "$d.err" || { bad "$spec: no SMD-0801 naming the file"; cat "$d.err"; }
	msg=$(python3 -c "import os,errno; print(os.strerror(errno.$err))")
	grep -q "$msg" "$d.err" || bad "$spec: the error does not say '$msg'"
	cmp -s "$work/partial" "$d/guid2lid" || bad "$spec: the previous guid2lid was changed"
	ls "$d" | grep -q tmp && bad "$spec: temp file left: $(ls "$d")"
	[ "$(json "$d.json" 'r["active_ports"] == r["link_ports"] > 0 and r["state_errors"] == 1')" = True ] ||
		bad "$spec: the subnet did not come up fully: $(cat "$d.json")"
	# the disk has room again: the same table as a run that never failed
	once --state-dir "$d" >/dev/null 2>&1 || bad "$spec: the run after the failure failed"
	cmp -s "$work/ref/guid2lid" "$d/guid2lid" || bad "$spec: the saved table differs from the reference"
done

# a first start on a read-only state directory: no file at all, no temp file
d="$work/ro"
mkdir "$d"
FSFAIL_PATH="$d" FSFAIL_ERRNO=EROFS LD_PRELOAD="$shim" once --state-dir "$d" >"$d.json" 2>"$d.err"
[ $? = 1 ] || bad "read-only first start: exit status"
grep -q "Read-only file system" "$d.err" || bad "read-only first start: no clear error"
[ -z "$(ls "$d")" ] || bad "read-only first start: left $(ls "$d")"

# the daemon: a full disk does not stop it; the table is saved once there is room
sock="$work/d.sock"
d="$work/dmn"
mkdir "$d"
FSFAIL_PATH="$d" FSFAIL_ERRNO=ENOSPC FSFAIL_OPS=write LD_PRELOAD="$shim" \
	"$smd" -f --backend mock --topology "$work/ft" --state-dir "$d" --socket "$sock" >"$d.out" 2>"$d.err" &
pid=$!
if dmn_up "$d.json" 100; then
	"$smctl" --socket "$sock" sweep >/dev/null 2>&1
	"$smctl" --socket "$sock" --json status >"$d.json" 2>/dev/null
	kill -0 "$pid" 2>/dev/null || bad "daemon: died after a failed save"
	[ "$(json "$d.json" '"No space left on device" in (r.get("lid_table_error") or "")')" = True ] ||
		bad "daemon: status does not report the failed save: $(cat "$d.json")"
	grep -q "SMD-0521.*$d/plane-lids: cannot write" "$d.err" || bad "daemon: no SMD-0521 naming plane-lids"
	[ -z "$(ls "$d")" ] || bad "daemon: left $(ls "$d")"
else
	bad "daemon: did not come up with a full disk"
	cat "$d.err"
fi
dmn_stop
"$smd" -f --backend mock --topology "$work/ft" --state-dir "$d" --socket "$sock" >"$d.out" 2>"$d.err" &
pid=$!
i=0
while [ $i -lt 100 ] && [ ! -s "$d/plane-lids" ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -s "$d/plane-lids" ] || bad "daemon: plane-lids not saved once the disk had room"
dmn_stop
sanitizer_check "" "$work"/*.err
[ $fail = 0 ] && echo "PASS: state files under ENOSPC/EDQUOT/EIO/EROFS/EACCES ($n failure kinds, --once and daemon)"
exit $fail
