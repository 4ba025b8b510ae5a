#!/bin/sh
# fuzz/run.sh SRCDIR NAME...: run each built fuzz/fuzz_NAME (from the build
# directory) for FUZZ_SECONDS on one core, over a working corpus seeded from
# SRCDIR/fuzz/corpus/NAME and SRCDIR/fuzz/regress/NAME, and print per harness
# the executions run, the corpus size and the findings. Exit 1 if any
# harness found something (the inputs are in fuzz/findings/NAME/).
set -u
src=$1; shift
secs=${FUZZ_SECONDS:-60}
status=0
printf '%-8s %10s %8s %7s %6s %9s  %s\n' harness execs exec/s corpus cov findings log
for n in "$@"; do
	bin=fuzz/fuzz_$n
	[ -x "$bin" ] || { echo "$n: $bin not built" >&2; status=1; continue; }
	mkdir -p "fuzz/work/$n" "fuzz/findings/$n"
	seeds="$src/fuzz/corpus/$n"
	reg="$src/fuzz/regress/$n"
	[ -d "$reg" ] || reg=
	before=$(ls "fuzz/findings/$n" | wc -l)
	log=fuzz/work/$n.log
	# -jobs/-workers are not used: one process, one core (the machine is shared).
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="fuzz/findings/$n/" "fuzz/work/$n" "$seeds" $reg >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | sed 's/cov: //')
	corp=$(ls "fuzz/work/$n" | wc -l)
	found=$(( $(ls "fuzz/findings/$n" | wc -l) - before ))
	printf '%-8s %10s %8s %7s %6s %9s  %s\n' "$n" "${execs:-?}" "${rate:-?}" "$corp" "${cov:-?}" "$found" "$log"
	if [ $rc != 0 ] || [ "$found" != 0 ]; then
		status=1
		grep -m3 -E 'ERROR|INVARIANT|runtime error' "$log" | sed "s/^/  $n: /"
	fi
done
[ $status = 0 ] && echo "fuzz: no findings (${secs}s per harness)" || echo "fuzz: FINDINGS, see fuzz/findings/" >&2
exit $status
