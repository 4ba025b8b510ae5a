#!/bin/sh
# Every bad input of the foundation and routing issues (topology dumps,
# configs, engines, profiles, LID files, command lines) fed to every program
# path that reads it: smd --dry-run, smd --once on the mock, smd -f and smctl
# against it, smctl topo. Each must exit 1..127 (2 for usage errors, never
# a signal), print "FILE:LINE: message" naming the input (or the option for
# a bad command-line value), and, under valgrind memcheck, show no invalid
# access and no definite leak. The catalogue is tests/data/bad/ (README).
# In a sanitizer build valgrind is skipped (it cannot run ASan binaries) and
# the checks of exit status and message still run; ASan/UBSan watch memory.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
S="$top_builddir/smd/smd"
C="$top_builddir/smd/smctl"
D="$top_srcdir/tests/data/bad"
T="$top_srcdir/tests/data/net4.ibnd"
w=$(mktemp -d "${TMPDIR:-/tmp}/smd-bad.XXXXXX")
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$w"; }
trap cleanup EXIT
if nm "$S" 2>/dev/null | grep -q __asan_init; then
	echo "note: sanitizer build: valgrind skipped, exit codes and messages still checked"
	V="" VD=""
else
	command -v valgrind >/dev/null || { echo "FAIL: valgrind not installed (Debian package valgrind)"; exit 1; }
	V="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --log-file=$w/vg.%p"
	VD="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --log-file=$w/vgd.%p"
fi
fail=0
n=0
bad() { echo "FAIL: $*"; fail=1; }

# vg_clean NAME: no valgrind report left by the last command(s)
vg_clean() {
	for vgf in "$w"/vg.*; do
		[ -e "$vgf" ] || continue
		if [ -s "$vgf" ]; then bad "$1: valgrind reports:"; head -30 "$vgf"; fi
		rm -f "$vgf"
	done
}

# expect NAME KIND REGEX CMD...: KIND is "usage" (exit 2) or "error" (1..127);
# stderr must match the extended regular expression REGEX.
expect() {
	name=$1 kind=$2 re=$3; shift 3
	n=$((n + 1))
	$V "$@" >"$w/out" 2>"$w/err" </dev/null
	rc=$?
	vg_clean "$name"
	if [ $rc = 99 ] && [ -n "$V" ]; then
		bad "$name: valgrind error exit"
	elif [ $rc = 0 ] || [ $rc -gt 127 ]; then
		bad "$name: exit $rc (want 1..127)"; tail -5 "$w/err"
	elif [ "$kind" = usage ] && [ $rc != 2 ]; then
		bad "$name: exit $rc (want 2, a usage error)"; tail -3 "$w/err"
	elif ! grep -Eq -- "$re" "$w/err"; then
		bad "$name: stderr does not match /$re/:"; tail -5 "$w/err"
	else
		echo "ok: $name (exit $rc): $(grep -E -m1 -- "$re" "$w/err" | cut -c1-150)"
	fi
}

# expect_ok NAME REGEX CMD...: a degraded but valid input: exit 0, a warning matching REGEX.
expect_ok() {
	name=$1 re=$2; shift 2
	n=$((n + 1))
	$V "$@" >"$w/out" 2>"$w/err" </dev/null
	rc=$?
	vg_clean "$name"
	if [ $rc != 0 ]; then bad "$name: exit $rc (want 0)"; tail -5 "$w/err"
	elif ! grep -Eq -- "$re" "$w/err"; then bad "$name: no warning matching /$re/"; tail -5 "$w/err"
	else echo "ok: $name (exit 0): $(grep -E -m1 -- "$re" "$w/err" | cut -c1-150)"
	fi
}

cd "$D" || exit 1
# A line far longer than any reader accepts (SM_TOPO_MAX_LINE, SM_PROFILE_MAX_LINE: 4096).
{ head -9 "$T"; printf 'Switch\t8 "S-0000000000200001"\t\t# "'; i=0
  while [ $i -lt 300 ]; do printf 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'; i=$((i + 1)); done; echo '"'; } >"$w/topo-long-line.ibnd"
{ printf '2 4 1\n'; i=0; while [ $i -lt 300 ]; do printf '"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" '; i=$((i + 1)); done; echo; } >"$w/profile-long-line.txt"
# YAML nested 100,000 deep in 400 KB (libyaml's cost grows with the square of the depth): refused at level 64
awk 'BEGIN { printf "flows: "; for (i = 0; i < 100000; i++) print "["; for (i = 0; i < 100000; i++) print "]" }' \
	>"$w/profile-deep.yaml"

# ---- topology dumps: dry-run, --once on the mock, smctl topo info/convert ----
for spec in topo-unknown-keyword.ibnd:10 topo-port-zero.ibnd:24 topo-port-range.ibnd:14 \
	topo-unconfirmed-link.ibnd:12 topo-duplicate-guid.ibnd:44 topo-empty.ibnd:1 topo-binary.ibnd:1 \
	topo-no-nodes.ibnd:2 net-unknown-keyword.net:4 net-unconfirmed-link.net:3 net-port-range.net:3 \
	"$w/topo-long-line.ibnd":10; do
	f=${spec%:*} l=${spec##*:}
	b=$(basename "$f")
	re="$(echo "$b" | sed 's/\./\\./g'):$l: "
	expect "dry-run $b" error "$re" "$S" --dry-run -t "$f" --report /dev/null
	# the other readers of dumps share the loader: a sample of the cases (valgrind is slow)
	case $b in topo-port-zero.ibnd|topo-binary.ibnd|net-unconfirmed-link.net|topo-long-line.ibnd)
		expect "once mock $b" error "$re" "$S" --once --backend mock --topology "$f" --state-dir "$w/st" -q
		expect "smctl topo info $b" error "$re" "$C" topo info "$f";;
	esac
done
expect "dry-run second plane bad" error "topo-port-zero\.ibnd:24: " "$S" --dry-run -t "$T" -t topo-port-zero.ibnd --report /dev/null
expect "smctl topo convert binary" error "topo-binary\.ibnd:1: " "$C" topo convert topo-binary.ibnd -o "$w/conv"
[ -e "$w/conv" ] && bad "smctl topo convert left a file behind on error"
expect "dry-run missing dump" error "/nonexistent/x\.ibnd:0: " "$S" --dry-run -t /nonexistent/x.ibnd
expect "once mock missing dump" error "/nonexistent/x\.ibnd:0: " "$S" --once --backend mock --topology /nonexistent/x.ibnd -q
expect "once mock bad plane dump" error "topo-port-range\.ibnd:14: " "$S" --once --plane "mock:$T" --plane mock:topo-port-range.ibnd --state-dir "$w/st2" -q
# a disconnected fabric is routed in its connected parts, one warning per unreachable pair
expect_ok "dry-run disconnected fabric" "unreachable pair" "$S" --dry-run -t "$top_srcdir/tests/data/dryrun/split.ibnd" --report /dev/null

# ---- configuration ----
for spec in conf-unknown-key.yaml:3 conf-syntax.yaml:4 conf-lmc.yaml:2 conf-unknown-engine.yaml:1 \
	conf-engine-option.yaml:4 conf-two-documents.yaml:3 conf-control-chars.yaml:1; do
	f=${spec%:*} l=${spec##*:}
	re="$(echo "$f" | sed 's/\./\\./g'):$l: "
	expect "dry-run -c $f" error "$re" "$S" --dry-run -t "$T" -c "$f" --report /dev/null
	case $f in conf-syntax.yaml|conf-unknown-engine.yaml|conf-engine-option.yaml)
		expect "once mock -c $f" error "$re" "$S" --once --backend mock --topology "$T" -c "$f" --state-dir "$w/st" -q;;
	esac
done
expect "daemon -c conf-lmc.yaml" error "conf-lmc\.yaml:2: " "$S" -f --backend mock --topology "$T" -c conf-lmc.yaml --socket "$w/never.sock" --state-dir "$w/st"
expect "missing config" error "/nonexistent/smd\.yaml: No such file" "$S" --dry-run -t "$T" -c /nonexistent/smd.yaml

# ---- engines (command line) ----
expect "unknown engine" error "unknown engine 'nosuch'" "$S" --dry-run -t "$T" -R nosuch --report /dev/null
expect "once: unknown engine" error "unknown engine 'nosuch'" "$S" --once --backend mock --topology "$T" -R nosuch --state-dir "$w/st" -q
expect "empty engine name" usage "-R .*empty engine name" "$S" --dry-run -t "$T" -R "minhop,"
expect "engine listed twice" usage "listed twice" "$S" --dry-run -t "$T" -R minhop,minhop

# ---- profiles ----
for spec in profile-negative.txt:2 profile-unterminated-quote.txt:1 profile-unknown-only.txt:1 \
	profile-yaml-unknown-key.yaml:3 profile-huge-weight.txt:1 profile-binary.txt:2 "$w/profile-long-line.txt":2 \
	"$w/profile-deep.yaml":64; do
	f=${spec%:*} l=${spec##*:}
	b=$(basename "$f")
	re="$(echo "$b" | sed 's/\./\\./g'):$l: "
	expect "dry-run --profile $b" error "$re" "$S" --dry-run -t "$T" -R hotpath --profile "$f" --report /dev/null
	case $b in profile-negative.txt|profile-binary.txt|profile-yaml-unknown-key.yaml)
		expect "once --profile $b" error "$re" "$S" --once --backend mock --topology "$T" -R hotpath --profile "$f" --state-dir "$w/st" -q;;
	esac
done
expect "missing profile" error "/nonexistent/p\.txt: No such file" "$S" --dry-run -t "$T" -R hotpath --profile /nonexistent/p.txt

# ---- LID files: --guid2lid, and a damaged plane-lids in the state directory ----
for spec in guid2lid-misaligned:2 guid2lid-garbage:2 guid2lid-duplicate:2; do
	f=${spec%:*} l=${spec##*:}
	expect "once --guid2lid $f" error "$f:$l: " "$S" --once --backend mock --topology "$T" --guid2lid "$f" --state-dir "$w/st3" -q
done
mkdir -p "$w/st4" && cp guid2lid-garbage "$w/st4/plane-lids"
expect "once 2 planes, bad plane-lids" error "plane-lids:2: " "$S" --once --plane "mock:$T" --plane "mock:$T" --state-dir "$w/st4" -q
# the daemon reads --guid2lid and STATE_DIR/guid2lid too (one LID policy): refused at start, named
expect "daemon --guid2lid garbage" error "guid2lid-garbage:2: " "$S" -f --backend mock --topology "$T" --guid2lid guid2lid-garbage --state-dir "$w/st5" --socket "$w/s5.sock"
mkdir -p "$w/st6" && cp guid2lid-misaligned "$w/st6/guid2lid"
expect "once, bad STATE_DIR/guid2lid" error "st6/guid2lid:2: " "$S" --once --backend mock --topology "$T" --state-dir "$w/st6" -q
# configuration checks and printing name the file and line of a bad file
expect "check-config conf-engine-option.yaml" error "conf-engine-option\.yaml:4: " "$S" --check-config -c conf-engine-option.yaml
expect "print-config conf-lmc.yaml" error "conf-lmc\.yaml:2: " "$S" --print-config -c conf-lmc.yaml

# ---- usage errors ----
expect "smd unknown option" usage "unrecognized option" "$S" --bogus
expect "smd missing argument" usage "requires an argument" "$S" --dry-run -t
expect "smd --lmc 9" usage "--lmc" "$S" --lmc 9 --dry-run -t "$T"
expect "smd --dry-run without -t" usage "needs at least one -t" "$S" --dry-run
expect "smctl unknown command" usage "unknown command 'nosuch'" "$C" nosuch
expect "smctl topo gen without -o" usage "no output file" "$C" topo gen fat-tree --hosts 8
expect "smctl topo gen --hosts -5" error "bad value for --hosts: '-5'" "$C" topo gen fat-tree --hosts -5 -o "$w/g"
expect "smctl without a daemon" error "cannot connect to $w/nosock" "$C" --socket "$w/nosock" status

# ---- a running daemon: bad requests are refused, it keeps running, exits clean ----
sock="$w/smd.sock"
cp "$top_srcdir/tests/data/bad/conf-ok.yaml" "$w/smd.yaml"
$VD "$S" -f --backend mock --topology "$T" -c "$w/smd.yaml" --socket "$sock" --state-dir "$w/std" 2>"$w/dlog" &
pid=$!
i=0
until "$C" --socket "$sock" --json status 2>/dev/null | grep -q '"state": *"up"'; do
	i=$((i + 1))
	if [ $i -gt 600 ] || ! kill -0 "$pid" 2>/dev/null; then bad "daemon not up"; tail "$w/dlog"; exit 1; fi
	sleep 0.1
done
expect "smctl profile load negative" error "profile-negative\.txt:2: " "$C" --socket "$sock" profile load "$D/profile-negative.txt"
expect "smctl profile load binary" error "profile-binary\.txt:2: " "$C" --socket "$sock" profile load "$D/profile-binary.txt"
expect "smctl profile load missing" error "nonexistent" "$C" --socket "$sock" profile load /nonexistent/p.txt
expect "smctl engine set nosuch" error "nosuch" "$C" --socket "$sock" engine set nosuch
expect "smctl route unknown host" error "." "$C" --socket "$sock" route nosuchhost alsonot
cp conf-syntax.yaml "$w/smd.yaml"
kill -HUP "$pid"
i=0
until grep -q "smd\.yaml:4: " "$w/dlog"; do
	i=$((i + 1)); [ $i -gt 300 ] && { bad "SIGHUP with a broken config: no FILE:LINE in the log"; tail -3 "$w/dlog"; break; }
	sleep 0.1
done
"$C" --socket "$sock" status >/dev/null 2>&1 || bad "daemon stopped answering after bad requests and a bad reload"
vg_clean "smctl"
kill "$pid"; wait "$pid"; rc=$?; pid=
[ $rc = 0 ] || { bad "daemon exited $rc"; tail -5 "$w/dlog"; }
for f in "$w"/vgd.*; do
	[ -s "$f" ] && { bad "smd -f daemon: valgrind reports:"; head -30 "$f"; }
done
n=$((n + 2))

[ $fail = 0 ] && echo "PASS: $n bad-input checks: exit status, FILE:LINE message${V:+, valgrind-clean}"
exit $fail
