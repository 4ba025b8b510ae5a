#!/bin/sh
# make check: every libFuzzer harness over its seed corpus and the inputs of
# crashes fixed so far (fuzz/regress/NAME), then FUZZ_QUICK_SECONDS of
# fuzzing each. SKIP when the harnesses are not built: configure found no
# clang with libFuzzer (Debian packages clang, libclang-rt-14-dev), or this
# is the sanitizer build (the harnesses are ASan builds already).
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
: "${FUZZ_NAMES:=topo profile conf ctl mad lftfile lidmgr sa partitions}"
: "${FUZZ_QUICK_SECONDS:=5}"
for n in $FUZZ_NAMES; do
	[ -x "$top_builddir/fuzz/fuzz_$n" ] || {
		echo "SKIP: fuzz/fuzz_$n not built (no clang with libFuzzer found by configure, or a sanitizer build)"
		exit 77
	}
done
w=$(mktemp -d "${TMPDIR:-/tmp}/smd-fuzzq.XXXXXX")
trap 'rm -rf "$w"' EXIT
fail=0
for n in $FUZZ_NAMES; do
	reg="$top_srcdir/fuzz/regress/$n"
	[ -d "$reg" ] || reg=
	mkdir -p "$w/$n"
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"$top_builddir/fuzz/fuzz_$n" -max_total_time="$FUZZ_QUICK_SECONDS" -timeout=20 -print_final_stats=1 \
		-artifact_prefix="$w/" "$w/$n" "$top_srcdir/fuzz/corpus/$n" $reg >"$w/$n.log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$w/$n.log" | tail -1)
	seeds=$(ls "$top_srcdir/fuzz/corpus/$n" | wc -l)
	regs=0; [ -n "$reg" ] && regs=$(ls "$reg" | wc -l)
	if [ $rc != 0 ]; then
		echo "FAIL: fuzz_$n (exit $rc):"; grep -v '^#' "$w/$n.log" | tail -40
		for a in "$w"/crash-* "$w"/leak-* "$w"/timeout-* "$w"/oom-*; do
			[ -f "$a" ] && { echo "input $a:"; od -c "$a" | head -20; }
		done
		fail=1
	else
		echo "ok: fuzz_$n: $seeds seeds + $regs regression inputs + ${FUZZ_QUICK_SECONDS}s, ${execs:-?} executions"
	fi
	rm -f "$w"/crash-* "$w"/leak-* "$w"/timeout-* "$w"/oom-*
done
exit $fail
