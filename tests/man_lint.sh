#!/bin/sh
# SPDX-License-Identifier: MIT
# The manual pages are lint-clean: `mandoc -T lint -W warning` (warnings and
# errors; style remarks allowed) and `groff -ww -z -man` (all warnings) print
# nothing for smd(8), smctl(8) and smd.yaml(5).
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
command -v mandoc >/dev/null || { echo "FAIL: mandoc not found (Debian package mandoc, see packaging/deps.sh)"; exit 1; }
command -v groff >/dev/null || { echo "FAIL: groff not found (Debian package groff-base)"; exit 1; }
fail=0
for p in man/smd.8 man/smctl.8 man/smd.yaml.5 man/smd-partitions.5; do
	f="$top_srcdir/$p"
	out=$(mandoc -T lint -W warning "$f" 2>&1)
	rc=$?
	if [ $rc != 0 ] || [ -n "$out" ]; then
		echo "FAIL: mandoc -T lint $p (exit $rc):"
		echo "$out"
		fail=1
	fi
	out=$(LC_ALL=C.UTF-8 groff -ww -z -t -man "$f" 2>&1)
	if [ -n "$out" ]; then
		echo "FAIL: groff -ww $p:"
		echo "$out"
		fail=1
	fi
done
[ $fail = 0 ] && echo "man pages: mandoc and groff clean"
exit $fail
