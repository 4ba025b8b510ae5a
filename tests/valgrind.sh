#!/bin/sh
# The main paths under valgrind memcheck: no invalid access, no definite or
# indirect leak. Bring-up on the mock (one plane, two planes, with a profile),
# dry-run with report and LFT file, the generator. Skipped (77) in a sanitizer
# build: valgrind cannot run ASan-instrumented binaries.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
B="$top_builddir/smd"
command -v valgrind >/dev/null || { echo "FAIL: valgrind not installed (Debian package valgrind)"; exit 1; }
if nm "$B/smd" 2>/dev/null | grep -q __asan_init; then echo "SKIP: sanitizer build"; exit 77; fi
w=$(mktemp -d "${TMPDIR:-/tmp}/smd-vg.XXXXXX")
trap 'rm -rf "$w"' EXIT
V="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect"
fail=0
check() { # name cmd...
	name=$1; shift
	"$@" >"$w/out" 2>"$w/err"
	rc=$?
	if [ $rc = 99 ] || grep -q '^==[0-9]*==' "$w/err"; then
		echo "FAIL: $name: valgrind reports:"; grep '^==' "$w/err" | head -30; fail=1
	elif [ $rc != 0 ]; then
		echo "FAIL: $name exited $rc"; tail -5 "$w/err"; fail=1
	else
		echo "ok: $name"
	fi
}
"$B/smctl" topo gen fat-tree --hosts 128 --radix 16 -o "$w/f1" >/dev/null || exit 1
"$B/smctl" topo gen fat-tree --hosts 128 --radix 16 --planes 2 --split -o "$w/f2" >/dev/null || exit 1
printf '"host00000 mlx5_0" "host00100 mlx5_0" 10\nhost00001:0 host00077:0 4\n' >"$w/prof"
check "smctl topo gen" $V "$B/smctl" topo gen fat-tree --hosts 64 --radix 8 --planes 2 --format ibsim -o "$w/n"
check "smctl topo info" $V "$B/smctl" topo info "$w/f2.0" "$w/f2.1"
check "smd --once (mock)" $V "$B/smd" --once --backend mock --topology "$w/f1" --state-dir "$w/s1" -q
check "smd --once (mock, again: nothing to write)" $V "$B/smd" --once --backend mock --topology "$w/f1" --state-dir "$w/s1" -q
check "smd --once (2 planes, planes engine)" $V "$B/smd" --once --plane "mock:$w/f2.0" --plane "mock:$w/f2.1" -R planes --state-dir "$w/s2" -q
check "smd --once (hotpath + profile)" $V "$B/smd" --once --backend mock --topology "$w/f1" -R hotpath --profile "$w/prof" --state-dir "$w/s3" -q
check "smd --dry-run (2 planes, report, LFTs)" $V "$B/smd" --dry-run -t "$w/f2.0" -t "$w/f2.1" -R planes,ftree --report "$w/r" --lfts-out "$w/l"
check "smd --dry-run (2 planes, LFTs written while planes route)" $V "$B/smd" --dry-run -t "$w/f2.0" -t "$w/f2.1" -R ftree,minhop --lfts-out "$w/l2"
check "smd --dry-run (bad profile is refused cleanly)" sh -c "$V '$B/smd' --dry-run -t '$w/f1' -R hotpath --profile /dev/null --report /dev/null; [ \$? = 1 ]"
[ $fail = 0 ] && echo "PASS: valgrind-clean main paths"
exit $fail
