#!/bin/sh
# SPDX-License-Identifier: MIT
# M_Key rotation without a restart (issue 15), on the mock (which enforces
# M_Key: a Set with a wrong key is refused, protect bit 1 hides the key from
# a Get with a wrong one). A 16-host fat tree, m_key: derived, protect bits 1:
#  - `smctl reload` with "new, old" in the secret file: the next sweep
#    reaches every port with the old key and gives it the new one: ports
#    re-keyed = every LID port, ports lost (a key smd does not hold) 0;
#  - the file with the new secret only: the running secret is kept as the
#    previous one, every port re-keyed again, none lost;
#  - a secret file readable by others: the reload is refused naming the
#    file, the running keys kept (a sweep after it: nothing re-keyed, none lost);
#  - migration: a daemon with a single m_key (0x...) reloaded to derived
#    keys: the single key is the previous one, every port re-keyed, none lost.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
need_python
mock_setup mkeyrl
A=00112233445566778899aabbccddeeff
B=f0e1d2c3b4a5968778695a4b3c2d1e0f
C=0123456789abcdef0123456789abcdef
secret() { (umask 077; printf '%s\n' "$@" >"$work/secret.tmp"); chmod 0600 "$work/secret.tmp"; mv "$work/secret.tmp" "$work/secret"; }
derived() { printf 'sweep_interval: 0\nm_key: derived\nm_key_secret_file: %s\nm_key_protect_bits: 1\n' "$work/secret" >"$conf"; }
sweeps() { q "r['sweeps']"; }
# reload, then wait for the heavy sweep it asks for; prints the sweep's M_Key note (or nothing)
reload_sweep() {
	_n=$(sweeps)
	_out=$("$smctl" --socket "$sock" reload 2>&1) || { echo "reload refused: $_out"; return 1; }
	_i=0
	while [ "$(sweeps)" = "$_n" ] && [ $_i -lt 100 ]; do sleep 0.1; _i=$((_i + 1)); done
	[ "$(sweeps)" != "$_n" ] || { echo "no sweep after the reload"; return 1; }
}
last_note() { grep "M_Key: [0-9]* ports* reached" "$work/$1.err" | tail -1; }
lost() { "$smctl" --socket "$sock" metrics | sed -n 's/^smd_mkey_foreign_ports{plane="plane0"} //p'; }
notes() { grep -c "M_Key: [0-9]* ports* reached" "$work/$1.err"; }

secret "$A"
derived
dmn_start one --backend mock --topology "$work/ft" -c "$conf" --socket "$sock" --state-dir "$work/state" ||
	{ echo "FAIL: smd did not come up"; exit 1; }
ports=$(q "r['lids']" 2>/dev/null)
echo "derived keys (secret A), lost: $(lost)"
[ "$(lost)" = 0 ] || bad "ports lost after the first sweep"

# rotation: "new, old"
secret "$B" "$A"
reload_sweep || bad "rotation A -> B: no sweep"
n=$(last_note one); echo "A -> B: $n; lost $(lost)"
echo "$n" | grep -q "M_Key: [1-9][0-9]* ports reached with the previous key and given the current one (0 Sets did not keep it; 0 ports hold" ||
	bad "rotation A -> B: $n"
r1=$(echo "$n" | sed -n 's/.*M_Key: \([0-9]*\) ports.*/\1/p')
[ "$(lost)" = 0 ] || bad "rotation A -> B lost ports"
# the next sweep: nothing left holding A
c=$(notes one)
"$smctl" --socket "$sock" sweep >/dev/null || bad "sweep after the rotation"
[ "$(notes one)" = "$c" ] || bad "a second sweep still re-keyed ports: $(last_note one)"

# the new secret alone: the running one is kept as the previous
secret "$C"
reload_sweep || bad "rotation B -> C: no sweep"
n=$(last_note one); echo "B -> C (old line left out): $n; lost $(lost)"
r2=$(echo "$n" | sed -n 's/.*M_Key: \([0-9]*\) ports.*/\1/p')
[ "${r2:-0}" = "$r1" ] || bad "B -> C re-keyed ${r2:-0} ports, A -> B $r1"
[ "$(lost)" = 0 ] || bad "rotation B -> C lost ports"

# a bad secret file: refused with its name, the running keys kept
secret "$A"
chmod 0644 "$work/secret"
c=$(notes one)
out=$("$smctl" --socket "$sock" reload 2>&1) && bad "a secret file mode 0644 was accepted"
echo "bad secret file: $out"
echo "$out" | grep -q "$work/secret" || bad "the refusal does not name the secret file: $out"
grep -q "SMD-0502: $work/secret: mode 0644" "$work/one.err" && grep -q "SMD-0512: reload failed" "$work/one.err" ||
	bad "the refusal is not logged with the file"
"$smctl" --socket "$sock" sweep >/dev/null || bad "sweep after the refused reload"
[ "$(notes one)" = "$c" ] && [ "$(lost)" = 0 ] || bad "after the refused reload: $(last_note one), lost $(lost)"
dmn_stop || bad "smd exit"

# migration: one m_key for all ports, then derived keys on a reload
printf 'sweep_interval: 0\nm_key: 0x1234567890abcdef\nm_key_protect_bits: 1\n' >"$conf"
secret "$A"
dmn_start two --backend mock --topology "$work/ft" -c "$conf" --socket "$sock" --state-dir "$work/state2" ||
	{ echo "FAIL: smd (single key) did not come up"; exit 1; }
[ "$(lost)" = 0 ] || bad "single key: ports lost"
derived
reload_sweep || bad "single key -> derived: no sweep"
n=$(last_note two); echo "single key -> derived: $n; lost $(lost)"
r3=$(echo "$n" | sed -n 's/.*M_Key: \([0-9]*\) ports.*/\1/p')
[ "${r3:-0}" = "$r1" ] || bad "migration re-keyed ${r3:-0} ports, rotation $r1"
[ "$(lost)" = 0 ] || bad "migration lost ports"
grep -q "need a restart" "$work/two.err" && bad "the move to derived keys was not applied: $(grep 'need a restart' "$work/two.err")"
dmn_stop || bad "smd exit"
echo "ports re-keyed: rotation $r1, rotation with the old line left out ${r2:-0}, migration ${r3:-0}; lost 0 (ports with LIDs: ${ports:-?})"

[ $fail = 0 ] && echo "PASS: M_Key secrets rotated and migrated on reload, no port lost"
exit $fail
