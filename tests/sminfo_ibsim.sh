#!/bin/sh
# SMInfo and M_Key against ibsim (issue 8). The daemon runs one plane on
# ibsim (its own client protocol, attached as the SM at H-0002c92000000000)
# with m_key, protect bits, lease and sm_key configured:
#  - the subnet comes up although ibsim does not implement M_Key (its SMA
#    neither stores nor checks the key: ibsim's TODO lists "MKey support");
#    smd notices that the ports do not keep the key and says so once;
#  - `sminfo` (infiniband-diags, under umad2sim at another host) asks the SM
#    LID for SMInfo: smd answers with state MASTER (3) and an activity count
#    (sminfo does not print the SM_Key; that it is withheld from an asker
#    without it is checked in tests/test_mkey.c);
#  - `sminfo -s 2` (SubnSet: "become standby") is refused: smd does not
#    negotiate mastership, and keeps running as master.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
need_python
. "$top_srcdir/tests/lib-ibsim.sh"
scratch sminfo
"$smctl" topo gen fat-tree --radix 8 --hosts 16 --format ibsim -o "$work/ft.net" >/dev/null ||
	{ echo "FAIL: generator"; exit 1; }
scratch_ibsim "$work/ft.net" || { echo "FAIL: ibsim did not start"; exit 1; }

sock="$work/smd.sock"
cat >"$work/smd.yaml" <<EOC
sweep_interval: 0
m_key: 0x00c0ffee00c0ffee
m_key_protect_bits: 1
m_key_lease_period: 60
sm_key: 0x5eed5eed5eed5eed
EOC
"$smd" -f -c "$work/smd.yaml" --plane ibsim:H-0002c92000000000 --socket "$sock" --state-dir "$work/state" \
	>"$work/out" 2>"$work/err" &
pid=$!
dmn_up "$work/st.json" 150 || { cat "$work/err"; bad "smd did not come up under ibsim"; exit 1; }
[ "$(json "$work/st.json" '(r["state"], r["cas"])')" = "('up', 16)" ] || bad "not up: $(cat "$work/st.json")"
grep -q "does not keep the M_Key" "$work/err" || bad "no note that ibsim's ports do not keep the M_Key"
[ "$(stat -c %a "$work/state/keys")" = 600 ] || bad "keys file mode"

# SMInfo Get from another host, LID-routed to the SM LID it learnt from its PortInfo
SIM_HOST=H-0002c92000000004 ibsim_run sminfo >"$work/sminfo.out" 2>&1
cat "$work/sminfo.out"
grep -q "state 3 SMINFO_MASTER" "$work/sminfo.out" || bad "sminfo: not master: $(cat "$work/sminfo.out")"
# SubnSet(SMInfo): refused, smd stays master
SIM_HOST=H-0002c92000000004 ibsim_run sminfo -s 2 >"$work/set.out" 2>&1
cat "$work/set.out"
kill -0 "$pid" 2>/dev/null || bad "smd died on an SMInfo Set"
SIM_HOST=H-0002c92000000004 ibsim_run sminfo >"$work/sminfo2.out" 2>&1
grep -q "state 3 SMINFO_MASTER" "$work/sminfo2.out" || bad "not master after a Set: $(cat "$work/sminfo2.out")"
dmn_stop || bad "exit status after SIGTERM"
[ $fail = 0 ] && echo "PASS: SMInfo answered under ibsim (master), Set refused; M_Key-less ibsim noticed"
exit $fail
