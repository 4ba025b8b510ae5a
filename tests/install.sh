#!/bin/sh
# SPDX-License-Identifier: MIT
# `make install DESTDIR=...` of this build puts every piece where it belongs
# and the pieces agree with each other:
#  - sbin/smd, bin/smctl, the ecmp plugin under lib*/smd/plugins, the man
#    pages smd.8, smctl.8 and smd.yaml.5, SYSCONFDIR/smd/smd.yaml and the
#    unit in the systemd system unit directory;
#  - the installed unit starts the installed smd with the installed config,
#    and that smd accepts that config (smd --once on a mock fabric);
#  - a second install keeps an edited smd.yaml (the shipped one goes to
#    smd.yaml.dist); `make uninstall` removes every file but the edited
#    config.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
work=$(mktemp -d "${TMPDIR:-/tmp}/smd-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
root="$work/root"
# a make of its own, not a child of the running `make check`
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$top_builddir" "$@" >>"$work/make.log" 2>&1; }

mk install DESTDIR="$root" || { tail -30 "$work/make.log"; echo "FAIL: make install"; exit 1; }
# one_file PATTERN: the single installed file whose path (below DESTDIR) matches
one_file() {
	_m=$(cd "$root" && find . -type f | sed 's|^\.||' | grep -E "$1")
	[ "$(printf '%s\n' "$_m" | grep -c .)" = 1 ] || { bad "installed files matching $1: '${_m}'"; return 1; }
	printf '%s\n' "$_m"
}
smd=$(one_file '/sbin/smd$')
smctl=$(one_file '/bin/smctl$')
one_file '/lib[^/]*/(.*/)?smd/plugins/ecmp\.so$' >/dev/null
conf=$(one_file '/smd/smd\.yaml$')
unit=$(one_file '/systemd/system/smd\.service$')
for m in man8/smd.8 man8/smctl.8 man5/smd.yaml.5; do
	one_file "/share/man/$m\$" >/dev/null
done
echo "installed: $smd $smctl $conf $unit"
[ -x "$root$smd" ] || bad "$smd is not executable"
cmp -s "$top_srcdir/conf/smd.yaml" "$root$conf" || bad "$conf is not conf/smd.yaml"
grep -q "^ExecStart=$smd -f -c $conf\$" "$root$unit" ||
	bad "the unit does not start the installed smd with the installed config: $(grep ^ExecStart "$root$unit")"
grep -q "@[a-z]*@" "$root$unit" && bad "unsubstituted variables in the unit: $(grep "@[a-z]*@" "$root$unit")"
"$top_builddir/smd/smctl" topo gen fat-tree --radix 8 --hosts 16 -o "$work/ft" >/dev/null || bad "topo gen"
"$root$smd" --once -c "$root$conf" --backend mock --topology "$work/ft" --state-dir "$work/state" \
	--socket "$work/s.sock" >"$work/once.out" 2>&1 || bad "installed smd with the installed config: $(cat "$work/once.out")"

# an admin's edit survives a reinstall and an uninstall
echo "# edited by the admin" >>"$root$conf"
cp "$root$conf" "$work/edited"
mk install DESTDIR="$root" || bad "second make install: $(tail -5 "$work/make.log")"
cmp -s "$work/edited" "$root$conf" || bad "a reinstall overwrote the edited $conf"
cmp -s "$top_srcdir/conf/smd.yaml" "$root$conf.dist" || bad "no $conf.dist next to the edited file"
mk uninstall DESTDIR="$root" || bad "make uninstall: $(tail -5 "$work/make.log")"
left=$(cd "$root" && find . -type f | sed 's|^\.||')
[ "$left" = "$conf" ] || bad "after make uninstall: '$left' (want only the edited $conf)"
[ $fail = 0 ] && echo "install: all checks passed"
exit $fail
