#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/dryrun.sh: `smd --dry-run` end to end.
#  1. exit codes and messages: usage, missing/bad dump, unknown engine, bad config;
#  2. reports: JSON parses and has every documented field; text report;
#  3. LIDs assigned to a dump without LIDs; a disconnected plane (warnings, capped);
#     the report explains itself: meanings, good values for the tree, no jargon, one hop
#     convention, nothing repeated per plane, named hosts/leaves, version-1 JSON keys kept;
#  4. the LFT file is what OpenSM's `file` engine loads: under ibsim, route ft8 with
#     OpenSM, dump it, dry-run it with each engine, load our LFT file with
#     `opensm -R file -U FILE --once`, read the switches back with dump_lfts and
#     compare entry by entry with our file.
set -u

: "${top_srcdir:?run from make check}"
: "${top_builddir:?run from make check}"
. "$top_srcdir/tests/lib-daemon.sh"
. "$top_srcdir/tests/lib-ibsim.sh"
DATA="$top_srcdir/tests/data/dryrun"
scratch dryrun

run()
{
	_want=$1
	shift
	"$@" >"$work/out" 2>"$work/err"
	_rc=$?
	if [ "$_rc" -ne "$_want" ]; then
		bad "exit $_rc (wanted $_want): $*"
		sed 's/^/    stderr: /' "$work/err" | head -20 >&2
		return 1
	fi
	return 0
}

# expect_err PATTERN: stderr of the last run matches (grep -E)
expect_err()
{
	grep -Eq -- "$1" "$work/err" || {
		bad "stderr lacks /$1/"
		sed 's/^/    stderr: /' "$work/err" | head -20 >&2
	}
}

# ---------------------------------------------------------------- exit codes
run 2 "$smd" --dry-run && expect_err "needs at least one -t"
run 1 "$smd" --dry-run -t "$work/nonexistent.ibnd" && expect_err "nonexistent.ibnd"
run 1 "$smd" --dry-run -t "$DATA/garbage.ibnd" && expect_err "garbage.ibnd:[0-9]+:"
run 1 "$smd" --dry-run -t "$DATA/ft8.ibnd" -R nosuchengine && expect_err "nosuchengine"
run 2 "$smd" --dry-run -t "$DATA/ft8.ibnd" -R "minhop,,updn" && expect_err "empty engine name"
run 1 "$smd" --dry-run -t "$DATA/ft8.ibnd" -c "$DATA/bad.yaml" && expect_err "bad.yaml:4: mad.window"
run 1 "$smd" --dry-run -t "$DATA/ft8.ibnd" -c "$work/none.yaml" && expect_err "none.yaml"
printf 'this is not a profile ;;\n' >"$work/bad.profile"
run 1 "$smd" --dry-run -t "$DATA/ft8.ibnd" --profile "$work/bad.profile" && expect_err "bad.profile"
run 1 "$smd" --dry-run -t "$DATA/ft8.ibnd" -R minhop --lfts-out "$work/no/such/dir/x.lfts" && expect_err "no/such/dir"
run 1 "$smd" --dry-run -t "$DATA/ft8.ibnd" -R minhop --report "$work/no/such/dir/r.txt" && expect_err "report to .*no/such/dir"
: >"$work/empty.ibnd"
"$smd" --dry-run -t "$work/empty.ibnd" >"$work/out" 2>"$work/err"
rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
	bad "empty dump: exit $rc (crash?)"
	cat "$work/err" >&2
fi
[ -s "$work/err" ] || bad "empty dump: no message"

# ---------------------------------------------------------------- reports
check_json()
{
	# check_json FILE PYTHON-ASSERTIONS (r = the report)
	python3 -m json.tool "$1" >/dev/null || { bad "$1 is not valid JSON"; return; }
	python3 - "$1" "$2" <<'EOF' || bad "JSON report content ($2)"
import json, sys
r = json.load(open(sys.argv[1]))
for key in ("version", "chain", "config", "profile", "lfts_out", "all_routed", "seconds", "planes"):
    assert key in r, key
for key in ("load", "lids", "profile", "route", "metrics", "write", "total"):
    assert key in r["seconds"], key
for p in r["planes"]:
    for key in ("plane", "name", "dump", "fabric", "lids", "connectivity", "routing", "metrics", "profile"):
        assert key in p, key
    for key in ("ports_from_dump", "ports_assigned", "lids_assigned", "examples"):
        assert key in p["lids"], key
    for key in ("hosts", "parts", "disconnected_pairs", "examples"):
        assert key in p["connectivity"], key
    for key in ("routed", "engine", "route_seconds", "validate_seconds", "attempts", "notes"):
        assert key in p["routing"], key
    if p["routing"]["routed"]:
        m = p["metrics"]
        for key in ("reachability", "hops", "edge_forwarding_index", "shift_max_congestion",
                    "random_permutations", "credit_loop", "seconds"):
            assert key in m, key
        for key in ("count", "seed", "max_congestion_mean", "max_congestion", "ebb"):
            assert key in m["random_permutations"], key
exec(sys.argv[2])
EOF
}

if run 0 "$smd" --dry-run -t "$DATA/ft8.ibnd" -R minhop --report - --json --seed 7; then
	cp "$work/out" "$work/r1.json"
	check_json "$work/r1.json" '
p = r["planes"][0]
assert r["version"] == 1 and r["chain"] == "minhop" and r["all_routed"] is True
assert p["fabric"]["switches"] == 6 and p["fabric"]["cas"] == 8, p["fabric"]
assert p["lids"]["ports_from_dump"] == 14 and p["lids"]["ports_assigned"] == 0, p["lids"]
assert p["routing"]["engine"] == "minhop"
m = p["metrics"]
assert m["reachability"]["hosts"] == 8 and m["reachability"]["pairs"] == 56, m
assert m["reachability"]["unreachable"] == 0 and m["credit_loop"] is False, m
assert m["hops"]["min"] >= 2 and m["hops"]["max"] <= 4, m["hops"]
assert m["random_permutations"]["seed"] == 7
'
fi
# the same seed gives the same metrics; the text report names the engine
if run 0 "$smd" --dry-run -t "$DATA/ft8.ibnd" -R minhop --json --seed 7; then
	python3 - "$work/r1.json" "$work/out" <<'EOF' || bad "metrics differ between two runs with the same seed"
import json, sys
a, b = (json.load(open(f))["planes"][0]["metrics"] for f in sys.argv[1:3])
for m in (a, b):
    m.pop("seconds")
assert a == b, (a, b)
EOF
fi
if run 0 "$smd" --dry-run -t "$DATA/ft8.ibnd" -R minhop --report "$work/r.txt"; then
	grep -q "routing: minhop" "$work/r.txt" || bad "text report lacks 'routing: minhop'"
	grep -q "random permutations" "$work/r.txt" || bad "text report lacks the random permutations"
fi

# a chain that falls back: ftree refuses a ring, updn routes it; the report says why
if run 0 "$smd" --dry-run -t "$DATA/ring.net" -R ftree,updn --json; then
	check_json "$work/out" '
p = r["planes"][0]["routing"]
assert p["routed"] and p["engine"] == "updn", p
att = p["attempts"]
assert [a["engine"] for a in att] == ["ftree", "updn"], att
assert not att[0]["used"] and att[0]["rc"] < 0 and "fat tree" in att[0]["reason"], att[0]
assert att[1]["used"] and att[1]["reason"] is None, att[1]
'
	expect_err "engine ftree passed over: .*not a fat tree"
fi
# no engine of the chain routes the plane: exit 1, but the report and the LFT file still say so
if run 1 "$smd" --dry-run -t "$DATA/ring.net" -t "$DATA/split.ibnd" -R ftree --report "$work/fail.json" --json \
	--lfts-out "$work/fail.lfts"; then
	expect_err "plane 0 .*no engine of the chain could route it"
	check_json "$work/fail.json" '
assert r["all_routed"] is False
assert r["planes"][0]["routing"]["routed"] is False and r["planes"][0]["metrics"] is None
assert r["planes"][1]["routing"]["routed"] is True
'
	grep -q "^# plane 0 .*not routed" "$work/fail.lfts" || bad "LFT file does not say plane 0 is not routed"
	[ "$(grep -c "^Unicast lids" "$work/fail.lfts")" -eq 2 ] || bad "LFT file lacks the 2 switches of plane 1"
fi

# an engine's own config error names the config file and the line
printf 'routing_engine: updn\nengines:\n  updn:\n    bogus_key: 1\n' >"$work/engine.yaml"
run 1 "$smd" --dry-run -t "$DATA/ft8.ibnd" -c "$work/engine.yaml" &&
	expect_err "engine.yaml:4: updn: .*bogus_key"

# plugins from the config's plugin_dir: the example plugin routes, a broken one is refused
printf 'plugin_dir: %s/plugins\n' "$top_builddir" >"$work/plugins.yaml"
run 0 "$smd" --dry-run -t "$DATA/ft8.ibnd" -c "$work/plugins.yaml" -R ecmp &&
	expect_err "routed by ecmp"
run 1 "$smd" --dry-run -t "$DATA/ft8.ibnd" -c "$work/plugins.yaml" -R bad_version &&
	expect_err "bad_version.so"

# a traffic profile: max link load of its flows, routed without and with it
printf 'H1 H8 5\nH2 H7 3\n# a comment\nH3 H6 0\n' >"$work/good.profile"
if run 0 "$smd" --dry-run -t "$DATA/ft8.ibnd" -R minhop --profile "$work/good.profile" --json; then
	check_json "$work/out" '
pr = r["planes"][0]["profile"]
assert r["profile"].endswith("good.profile")
assert pr["flows"] == 2 and pr["weight"] == 8, pr
assert 5 <= pr["max_link_load_before"] <= 8 and 5 <= pr["max_link_load_after"] <= 8, pr
'
fi

# with the profile-aware engine the load can only go down (here a permutation: 1 is the optimum)
printf 'H1 H3 1\nH2 H4 1\nH3 H5 1\nH4 H6 1\nH5 H7 1\nH6 H8 1\nH7 H1 1\nH8 H2 1\n' >"$work/perm.profile"
if run 0 "$smd" --dry-run -t "$DATA/ft8.ibnd" -R hotpath,ftree --profile "$work/perm.profile" --json; then
	check_json "$work/out" '
p = r["planes"][0]
assert p["routing"]["engine"] == "hotpath", p["routing"]
pr = p["profile"]
assert pr["flows"] == 8 and pr["max_link_load_after"] == 1, pr
assert pr["max_link_load_before"] >= pr["max_link_load_after"], pr
'
fi

# ---------------------------------------------------------------- LIDs and a disconnected plane
# ibsim net files carry no LIDs: smd assigns them all.
if run 0 "$smd" --dry-run -t "$DATA/ft8.net" -R minhop --json; then
	check_json "$work/out" '
p = r["planes"][0]
assert p["lids"]["ports_from_dump"] == 0 and p["lids"]["ports_assigned"] == 14, p["lids"]
assert p["lids"]["lids_assigned"] == 14 and len(p["lids"]["examples"]) == 10
lids = [e["lid"] for e in p["lids"]["examples"]]
assert len(set(lids)) == len(lids) and min(lids) >= 1
'
fi
# --lmc 1: CA ports get 2 LIDs each
if run 0 "$smd" --dry-run -t "$DATA/ft8.net" -R minhop --lmc 1 --json; then
	check_json "$work/out" '
p = r["planes"][0]
assert p["lids"]["lids_assigned"] == 6 + 2 * 8, p["lids"]
'
fi
# two islands: 2 x 3 hosts -> 12 ordered pairs without any cable path
if run 0 "$smd" --dry-run -t "$DATA/split.net" -R minhop --json; then
	check_json "$work/out" '
c = r["planes"][0]["connectivity"]
assert c["hosts"] == 5 and c["parts"] == 2 and c["disconnected_pairs"] == 12, c
assert len(c["examples"]) == 10
'
	n=$(grep -c "unreachable pair:" "$work/err")
	[ "$n" -eq 10 ] || bad "split.net: $n unreachable-pair warnings, wanted 10 (the cap)"
	grep -q "and 2 more unreachable pairs" "$work/err" || bad "split.net: no count of the pairs beyond the cap"
fi

# LIDs kept where the dump has them (SwA, A1, A2: 1-3), free ones for the others
if run 0 "$smd" --dry-run -t "$DATA/split.ibnd" -R minhop --json; then
	check_json "$work/out" '
p = r["planes"][0]
assert p["lids"]["ports_from_dump"] == 3 and p["lids"]["ports_assigned"] == 4, p["lids"]
assert sorted(e["lid"] for e in p["lids"]["examples"]) == [4, 5, 6, 7], p["lids"]
assert p["connectivity"]["parts"] == 2 and p["connectivity"]["disconnected_pairs"] == 12
'
fi

# two planes: one plane per -t, both in the LFT file, separated by comments
if run 0 "$smd" --dry-run -t "$DATA/ft8.ibnd" -t "$DATA/split.ibnd" -R minhop --lfts-out "$work/two.lfts"; then
	[ "$(grep -c '^# plane' "$work/two.lfts")" -eq 2 ] || bad "two planes: not 2 plane comments in the LFT file"
	[ "$(grep -c '^Unicast lids' "$work/two.lfts")" -eq 8 ] || bad "two planes: not 6+2 switches in the LFT file"
fi

# ---------------------------------------------------------------- the report explains itself (issue 16)
# Every figure has a meaning and the good value for this tree; no internal jargon; one hop
# convention (switch-to-switch links); with several planes nothing is repeated per plane; the
# plane comparison names the hosts and leaves it counts; the JSON keys of version 1 are all kept.
"$smctl" topo gen fat-tree --hosts 32 --radix 8 -o "$work/full.topo" >/dev/null 2>&1 &&
"$smctl" topo gen fat-tree --hosts 32 --radix 8 --remove-links 0.2 --seed 3 -o "$work/deg.topo" >/dev/null 2>&1 &&
"$smctl" topo gen fat-tree --hosts 32 --radix 8 --planes 4 --split -o "$work/mp.topo" >/dev/null 2>&1 &&
"$smctl" topo gen fat-tree --hosts 32 --radix 8 --planes 4 --split --remove-links 0.1 --remove-nics 2 \
	--fault-plane 1 --seed 3 -o "$work/mpd.topo" >/dev/null 2>&1 || bad "smctl topo gen failed"
mp="-t $work/mp.topo.0 -t $work/mp.topo.1 -t $work/mp.topo.2 -t $work/mp.topo.3"
mpd="-t $work/mpd.topo.0 -t $work/mpd.topo.1 -t $work/mpd.topo.2 -t $work/mpd.topo.3"

# no_jargon FILE: words that only the source explains
no_jargon()
{
	if grep -En 'rot [0-9]+/[0-9]+|moved [0-9]|\(reverted\)|\bp[0-9]+ rot|switch hops|hops: min' "$1" >&2; then
		bad "$1: report uses internal jargon or the old hop convention (above)"
	fi
}

# the reference of a full non-blocking tree: measured = good, and EBB well under 1.0 (destination routing)
if run 0 "$smd" --dry-run -t "$work/full.topo" --report "$work/full.txt"; then
	no_jargon "$work/full.txt"
	grep -q "good = this tree complete" "$work/full.txt" || bad "full tree: no reference heading"
	grep -q "figure  *measured  *good  *what it means" "$work/full.txt" || bad "full tree: no column heading"
	for fig in "unreachable pairs" "looping routes" "credit loops" "hops min/avg/max" "shortest routes" \
		"busiest link" "busiest / average" "shift congestion" "random congestion" "EBB"; do
		grep -Eq "^    $fig  " "$work/full.txt" || bad "full tree: no row '$fig'"
	done
	python3 - "$work/full.txt" <<'EOF' || bad "full tree: EBB row is not 'measured = good < 1'"
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"^    EBB +([0-9.]+) +([0-9.]+) +\S", t, re.M)
assert m, "no EBB row"
ebb, good = float(m.group(1)), float(m.group(2))
assert ebb == good and 0.4 < good < 0.9, (ebb, good)
# hops count switch-to-switch links: 0 between hosts of one leaf, 2 through a spine
assert re.search(r"^    hops min/avg/max +0/[0-9.]+/2 +0/[0-9.]+/2 ", t, re.M), "hops row"
assert re.search(r"longest route 2 switch-to-switch links", t), "validation hop convention"
EOF
fi

# a degraded tree: the good shift congestion is what its cabling allows, and the leaf is named
if run 0 "$smd" --dry-run -t "$work/deg.topo" -R ftree,minhop --report "$work/deg.txt" --json --seed 4 &&
	run 0 "$smd" --dry-run -t "$work/deg.topo" -R ftree,minhop --report "$work/deg.report" --seed 4; then
	no_jargon "$work/deg.report"
	grep -Eq "^    shift congestion +[0-9]+ +2 " "$work/deg.report" || bad "degraded: good shift congestion is not 2"
	grep -q "no routing does better here: leaf 'p0-leaf000[0-9]*' has 4 hosts on [123] uplinks" "$work/deg.report" ||
		bad "degraded: the leaf that bounds shift congestion is not named"
	grep -Eq "^  shape: 2-level fat tree, radix 8, 8 leaves of up to 4 hosts and 4 uplinks; [0-9]+ of the complete tree's 32 switch links missing" \
		"$work/deg.report" || bad "degraded: no shape line"
	check_json "$work/deg.txt" '
p = r["planes"][0]
s, ref, m = p["shape"], p["reference"], p["metrics"]
assert s["fat_tree"] and s["levels"] == 2 and s["leaf_hosts"] == 4 and s["leaf_uplinks"] == 4, s
assert s["shift_congestion_bound"] == 2 and s["bound_leaf"].startswith("p0-leaf"), s
assert ref["shift_max_congestion"] == 1 and ref["random_permutations"]["seed"] == 4, ref
assert 0.4 < ref["random_permutations"]["ebb"] < 0.9, ref
for k in ("min", "avg", "max"):
    assert abs(m["switch_hops"][k] - (m["hops"][k] - 2)) < 1e-9, (m["hops"], m["switch_hops"])
'
fi

# key paths of a JSON document ("planes[].metrics.hops.min"); arrays merged
key_paths()
{
	python3 - "$@" <<'EOF'
import json, sys
def walk(v, path, out):
    if isinstance(v, dict):
        for k, x in v.items():
            p = path + "." + k if path else k
            out.add(p)
            walk(x, p, out)
    elif isinstance(v, list):
        for x in v:
            walk(x, path + "[]", out)
out = set()
for f in sys.argv[1:]:
    walk(json.load(open(f)), "", out)
print("\n".join(sorted(out)))
EOF
}

# 4 alike planes: every line is said once; the JSON keeps every version-1 key
if run 0 "$smd" --dry-run $mp -R planes,ftree --report "$work/mp.txt"; then
	no_jargon "$work/mp.txt"
	grep -q "^same in all 4 planes:" "$work/mp.txt" || bad "4 planes: no 'same in all 4 planes' section"
	dup=$(grep -v '^$' "$work/mp.txt" | sort | uniq -d)
	[ -z "$dup" ] || bad "4 alike planes: repeated lines: $dup"
	grep -q "^  every plane: .* nothing missing" "$work/mp.txt" || bad "4 planes: comparison not folded"
	grep -q "LFT entries changed from ftree's: plane 0: 0, planes 1-3: [0-9]* each" "$work/mp.txt" ||
		bad "4 planes: planes engine notes not in plain words"
fi
# hot flows in plane 1 only; the busiest host sends weight 3
printf '"host00003 mlx5_1" "host00009 mlx5_1" 2\n"host00003 mlx5_1" "host00017 mlx5_1" 1\n' >"$work/mp.profile"
if run 0 "$smd" --dry-run $mpd -R planes,ftree --profile "$work/mp.profile" --json --report "$work/mpd.json" &&
	run 0 "$smd" --dry-run $mpd -R planes,ftree --profile "$work/mp.profile" --report "$work/mpd.txt"; then
	no_jargon "$work/mpd.txt"
	# planes 0, 2, 3 are alike: one section for them, one for plane 1; fabric said twice in all
	grep -q "^planes 0,2-3:" "$work/mpd.txt" || bad "faulty plane 1: no shared section for planes 0,2-3"
	grep -q "^only plane 1:" "$work/mpd.txt" || bad "faulty plane 1: no section of its own"
	[ "$(grep -c '^  fabric:' "$work/mpd.txt")" -eq 2 ] || bad "faulty plane 1: fabric line not said exactly twice"
	grep -Eq "^  0,2-3 +" "$work/mpd.txt" || bad "faulty plane 1: alike rows of the plane table not folded"
	grep -q "hot-flow max load" "$work/mpd.txt" || bad "profile: no hot-flow row"
	check_json "$work/mpd.json" '
names = r["plane_health_names"][1]
h = r["plane_health"]["per_plane"][1]
assert h["hosts_without_nic"] == 2 and len(names["hosts_without_nic"]) == 2, (h, names)
assert names["leaves_short_of_uplinks"] >= 1 and names["short_leaves"][0].startswith("p1-leaf"), names
import subprocess
for host in names["hosts_without_nic"]:
    assert host + " mlx5_1" not in open(sys.argv[1].replace("mpd.json", "mpd.topo.1")).read(), host
    assert host + " mlx5_0" in open(sys.argv[1].replace("mpd.json", "mpd.topo.0")).read(), host
assert r["planes"][1]["profile"]["max_link_load_bound"] == 3, r["planes"][1]["profile"]
'
	for host in $(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["plane_health_names"][1]["hosts_without_nic"]))' "$work/mpd.json"); do
		grep -q "^  plane 1: no NIC: .*$host" "$work/mpd.txt" || bad "plane table does not name $host (no NIC in plane 1)"
	done
	# every key of version 1 (before issue 16) is still there; new ones are only added
	key_paths "$work/mpd.json" "$work/deg.txt" >"$work/keys.now"
	cat >"$work/keys.v1" <<'EOF'
all_routed
chain
config
lfts_out
plane_health
plane_health.asymmetric
plane_health.hosts
plane_health.leaf_uplinks_full
plane_health.per_plane
plane_health.per_plane[].hosts_below_fair
plane_health.per_plane[].hosts_without_nic
plane_health.per_plane[].leaf_uplinks_max
plane_health.per_plane[].leaf_uplinks_min
plane_health.per_plane[].leaves
plane_health.per_plane[].missing_links
plane_health.per_plane[].missing_switches
plane_health.per_plane[].name
plane_health.per_plane[].nics
plane_health.per_plane[].plane
plane_health.per_plane[].share_mean
plane_health.per_plane[].share_min
plane_health.per_plane[].switch_links
plane_health.per_plane[].switches
plane_health.planes
plane_health.uneven_hosts
planes
planes[].connectivity
planes[].connectivity.disconnected_pairs
planes[].connectivity.examples
planes[].connectivity.hosts
planes[].connectivity.parts
planes[].dump
planes[].fabric
planes[].fabric.cas
planes[].fabric.links
planes[].fabric.nodes
planes[].fabric.routers
planes[].fabric.switch_links
planes[].fabric.switches
planes[].lids
planes[].lids.examples
planes[].lids.lids_assigned
planes[].lids.ports_assigned
planes[].lids.ports_from_dump
planes[].metrics
planes[].metrics.credit_loop
planes[].metrics.edge_forwarding_index
planes[].metrics.edge_forwarding_index.max
planes[].metrics.edge_forwarding_index.max_over_mean
planes[].metrics.hops
planes[].metrics.hops.avg
planes[].metrics.hops.max
planes[].metrics.hops.min
planes[].metrics.hops.minimal_share
planes[].metrics.random_permutations
planes[].metrics.random_permutations.count
planes[].metrics.random_permutations.ebb
planes[].metrics.random_permutations.max_congestion
planes[].metrics.random_permutations.max_congestion_mean
planes[].metrics.random_permutations.seed
planes[].metrics.reachability
planes[].metrics.reachability.hosts
planes[].metrics.reachability.loops
planes[].metrics.reachability.pairs
planes[].metrics.reachability.unreachable
planes[].metrics.seconds
planes[].metrics.shift_max_congestion
planes[].name
planes[].plane
planes[].profile
planes[].profile.flows
planes[].profile.max_link_load_after
planes[].profile.max_link_load_before
planes[].profile.weight
planes[].routing
planes[].routing.attempts
planes[].routing.attempts[].engine
planes[].routing.attempts[].rc
planes[].routing.attempts[].reason
planes[].routing.attempts[].seconds
planes[].routing.attempts[].used
planes[].routing.attempts[].validate_seconds
planes[].routing.engine
planes[].routing.notes
planes[].routing.route_seconds
planes[].routing.routed
planes[].routing.total_seconds
planes[].routing.validate_seconds
planes[].routing.validation
profile
seconds
seconds.load
seconds.lids
seconds.metrics
seconds.profile
seconds.route
seconds.total
seconds.write
version
EOF
	LC_ALL=C sort -o "$work/keys.v1" "$work/keys.v1"
	LC_ALL=C sort -o "$work/keys.now" "$work/keys.now"
	lost=$(LC_ALL=C comm -23 "$work/keys.v1" "$work/keys.now")
	[ -z "$lost" ] || bad "JSON report lost version-1 keys: $lost"
fi

# smd.yaml(5) documents the report itself and points to no file an installed smd lacks
if grep -En 'FIELD\.md|\.md\b|tests/|bench/|docs/' "$top_srcdir/man/smd.yaml.5" >&2; then
	bad "smd.yaml(5) points to a file of the source tree (above)"
fi
grep -q '^\.SS Figures' "$top_srcdir/man/smd.yaml.5" || bad "smd.yaml(5) lacks the Figures section"

# ---------------------------------------------------------------- OpenSM loads our LFT file
# compare_lfts OURS THEIRS: same switches, same (LID, port) entries. Headers name the switch
# differently (ours "Lid N", dump_lfts a DR path): compare by switch GUID.
compare_lfts()
{
	python3 - "$1" "$2" <<'EOF'
import re, sys
def parse(path):
    sw, cur = {}, None
    for line in open(path):
        m = re.match(r"Unicast lids \[0x([0-9a-f]+)-0x([0-9a-f]+)\] of switch .* guid 0x([0-9a-f]+) ", line)
        if m:
            cur = sw.setdefault(m.group(3), {})
            continue
        m = re.match(r"0x([0-9a-f]+) (\d+) ", line)
        if m and cur is not None:
            cur[int(m.group(1), 16)] = int(m.group(2))
    return sw
a, b = parse(sys.argv[1]), parse(sys.argv[2])
if set(a) != set(b):
    sys.exit("switches differ: ours %s, OpenSM %s" % (sorted(a), sorted(b)))
bad = [(g, l, a[g].get(l), b[g].get(l)) for g in a for l in set(a[g]) | set(b[g]) if a[g].get(l) != b[g].get(l)]
if bad:
    sys.exit("%d entries differ, e.g. %s" % (len(bad), bad[:5]))
EOF
}

# opensm_round_trip LMC ENGINES...: OpenSM assigns LIDs (with LMC), we dry-run its dump and
# write LFTs, OpenSM loads them with its file engine, dump_lfts must give our file back.
opensm_round_trip()
{
	_lmc=$1
	shift
	if ! ibsim_opensm_once -l "$_lmc" || ! ibsim_run ibnetdiscover >"$work/live.ibnd" 2>"$work/ibnd.err"; then
		bad "LMC $_lmc: OpenSM or ibnetdiscover under ibsim failed"
		cat "$work/ibnd.err" >&2
		return
	fi
	for eng in "$@"; do
		out="$work/$eng-lmc$_lmc"
		run 0 "$smd" --dry-run -t "$work/live.ibnd" -R "$eng" --lfts-out "$out.lfts" || continue
		if ! ibsim_opensm_once -l "$_lmc" -R file -U "$out.lfts"; then
			bad "$eng, LMC $_lmc: OpenSM's file engine refused our LFT file"
			continue
		fi
		grep -q "file tables configured on all switches" "$IBSIM_DIR/opensm.log" ||
			bad "$eng, LMC $_lmc: OpenSM did not configure its tables from our file"
		ibsim_run dump_lfts >"$out.dump" 2>/dev/null || bad "$eng, LMC $_lmc: dump_lfts failed"
		compare_lfts "$out.lfts" "$out.dump" ||
			bad "$eng, LMC $_lmc: switches hold other LFTs than our file"
		# byte for byte, apart from the header's port id and dump_lfts' trailer
		sed -E -e '/^#/d' -e 's/ of switch .* guid 0x/ of switch guid 0x/' "$out.lfts" |
			LC_ALL=C sort >"$work/a"
		sed -E -e '/^$/d' -e '/^\*\*\* WARNING/d' -e 's/ of switch .* guid 0x/ of switch guid 0x/' \
			"$out.dump" | LC_ALL=C sort >"$work/b"
		cmp -s "$work/a" "$work/b" || {
			bad "$eng, LMC $_lmc: text differs from dump_lfts"
			diff "$work/a" "$work/b" | head >&2
		}
	done
}

if scratch_ibsim "$DATA/ft8.net"; then
	opensm_round_trip 0 minhop updn ftree
	# LMC 2: ranges of 4 LIDs per CA port and dump_fts' "path #k out of 4" lines
	opensm_round_trip 2 minhop
	ibsim_stop
else
	bad "ibsim did not start"
fi

if [ "$failures" -ne 0 ]; then
	echo "$failures failure(s)" >&2
	exit 1
fi
echo "dryrun.sh: all checks passed"
exit 0
