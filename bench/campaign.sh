#!/bin/sh
# SPDX-License-Identifier: MIT
# The outside campaign of issue 18, re-run against smd -f on a mock plane.
#
# usage: bench/campaign.sh            (from a build directory)
# env:   HOSTS (128) RADIX (16) REQUESTS (3000) KILLS (10) LEVELS (10,20,30,40: MAD loss %)
#        LIGHT (3: light sweeps sampled per level) SEED (1) BUILD (.) OUT (a temp dir)
#        IB (0; 1: also the loss phase under ibsim, `Error "switch" RATE` on every switch
#        through its console, smd -f on its ibsim transport) IB_LEVELS (25)
#
# A 2-level fat tree from `smctl topo gen` on a mock plane (sweep_interval 1 s); the phases
# (bench/campaign.py has the details): hostile control requests, a connection flood by one
# socket_group member (uid 4242 through setpriv when run as root) and 24 clients churning,
# slow clients, MAD loss at each level (smctl faults --loss, a heavy sweep, light sweeps,
# then the loss stops), kill -9 at random points and restarts on the same state directory.
# `status` is timed every 20 ms throughout. Prints per-phase lines, the status latency per
# phase and a SUMMARY line: requests tried, connections held, kills survived, black-holed CA
# pairs (the worst sample; must be 0), LIDs changed (must be 0), status p99. Everything is in
# OUT/campaign.json.
set -u
HOSTS=${HOSTS:-128}
RADIX=${RADIX:-16}
BUILD=${BUILD:-$(pwd)}
here=$(cd "$(dirname "$0")" && pwd)
for t in python3; do
	command -v $t >/dev/null || { echo "campaign: $t not installed" >&2; exit 1; }
done
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/smd-campaign.XXXXXX")}
mkdir -p "$OUT"
echo "# output in $OUT"
echo "# machine: $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); smd $(git -C "$here" rev-parse --short HEAD 2>/dev/null)"
"$BUILD/smd/smctl" topo gen fat-tree --hosts "$HOSTS" --radix "$RADIX" --levels 2 --no-lids -o "$OUT/ft.ibnd" >/dev/null || exit 1
set --
if [ "${IB:-0}" != 0 ]; then
	# the same fabric under ibsim; smd -f attaches with its ibsim transport at the first host
	top_srcdir=$(cd "$here/.." && pwd)
	. "$top_srcdir/tests/lib-ibsim.sh"
	command -v ibsim >/dev/null || { echo "campaign: ibsim not installed (IB=0 skips it)" >&2; exit 1; }
	"$BUILD/smd/smctl" topo gen fat-tree --hosts "$HOSTS" --radix "$RADIX" --levels 2 --format ibsim \
		-o "$OUT/ft.net" >/dev/null || exit 1
	IBSIM_CONSOLE=1 ibsim_start "$OUT/ft.net" || exit 1
	set -- ibsim_net="$OUT/ft.net" ibsim_console="$IBSIM_DIR/console" ibsim_levels="${IB_LEVELS:-25}"
fi
python3 "$here/campaign.py" smd="$BUILD/smd/smd" smctl="$BUILD/smd/smctl" work="$OUT" topo="$OUT/ft.ibnd" \
	requests="${REQUESTS:-3000}" kills="${KILLS:-10}" levels="${LEVELS:-10,20,30,40}" light="${LIGHT:-3}" \
	seed="${SEED:-1}" "$@"
rc=$?
[ "${IB:-0}" != 0 ] && ibsim_stop
exit $rc
