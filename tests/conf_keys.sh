#!/bin/sh
# SPDX-License-Identifier: MIT
# Every configuration key smd accepts is documented, and a bad value of any
# of them is reported with FILE:LINE and the key's full name.
# The keys are read from smd/config/smdconf.c itself: every entry
# `{ "NAME", k_handler }` of a key table (struct key_def arrays handed to
# walk_map). A table defined inside a handler k_X holds the keys of the
# mapping whose own handler is k_X (e.g. mad.window). For each key:
#  - man/smd.yaml.5 has a tagged paragraph for it (a .TP whose tag line is
#    ".B NAME" or ".BR NAME ..."),
#  - conf/smd.yaml mentions "NAME:" (set or commented out),
#  - smd --once -c FILE refuses a file that gives it a list of lists on line
#    2, exits 1 without touching the (mock) fabric and names FILE:2: and the
#    key.
# A key added to smdconf.c without its documentation fails this test.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/smd-confkeys.XXXXXX")
trap 'rm -rf "$work"' EXIT

python3 - "$top_srcdir" "$top_builddir/smd/smd" "$work" <<'PY'
import os, re, subprocess, sys

top, smd, work = sys.argv[1:4]
src = open(os.path.join(top, 'smd/config/smdconf.c')).read()
man = open(os.path.join(top, 'man/smd.yaml.5')).read().splitlines()
example = open(os.path.join(top, 'conf/smd.yaml')).read()
topo = os.path.join(top, 'tests/data/dryrun/ft8.ibnd')

# handler function bodies: "static int k_NAME(...)\n{ ... \n}" up to the next top-level "}"
funcs = {}
for m in re.finditer(r'^static int (k_\w+)\([^)]*\)\n\{\n(.*?)^\}', src, re.S | re.M):
    funcs[m.group(1)] = m.group(2)
entry = re.compile(r'\{\s*"([A-Za-z0-9_]+)"\s*,\s*(k_\w+)\s*\}')
top_m = re.search(r'key_def\s+top_keys\[\]\s*=\s*\{(.*?)\n\};', src, re.S)
if not top_m:
    print('FAIL: no top_keys table in smd/config/smdconf.c')
    sys.exit(1)
keys = []   # (full name, [path of mapping keys])
def walk(body, path):
    for name, fn in entry.findall(body):
        keys.append(('.'.join(path + [name]), path + [name]))
        sub = funcs.get(fn, '')
        if 'key_def' in sub:
            walk(sub, path + [name])
walk(top_m.group(1), [])
if len(keys) < 12:
    print('FAIL: only %d keys found in smd/config/smdconf.c; the table format changed?' % len(keys))
    sys.exit(1)

# tag lines of .TP paragraphs in the man page
tags = set()
for i, line in enumerate(man[:-1]):
    if line.startswith('.TP'):
        t = man[i + 1].split()
        if len(t) >= 2 and t[0] in ('.B', '.BR', '.BI'):
            tags.add(t[1].strip('"'))

fail = 0
for full, path in keys:
    leaf = path[-1]
    if leaf not in tags:
        print('FAIL: %s is not documented in man/smd.yaml.5 (no .TP paragraph tagged .B %s)' % (full, leaf))
        fail = 1
    if not re.search(r'^[#\s]*' + re.escape(leaf) + r':', example, re.M):
        print('FAIL: %s is not in conf/smd.yaml' % full)
        fail = 1
    # a list of lists on line 2 (nested keys: each level on its own line)
    lines = ['# %s' % full]
    for depth, k in enumerate(path[:-1]):
        lines.append('  ' * depth + k + ':')
    bad_line = len(lines) + 1
    lines.append('  ' * (len(path) - 1) + leaf + ': [[1]]')
    f = os.path.join(work, 'k.yaml')
    open(f, 'w').write('\n'.join(lines) + '\n')
    r = subprocess.run([smd, '--once', '-c', f, '--backend', 'mock', '--topology', topo],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    want = '%s:%d: %s' % (f, bad_line, full)
    if r.returncode != 1 or want not in r.stderr:
        print('FAIL: %s: [[1]] gave exit %d, want 1 and "%s...": %s' % (full, r.returncode, want, r.stderr.strip()))
        fail = 1
    elif 'LFT blocks' in r.stdout or 'up' in r.stdout.split():
        print('FAIL: %s: the fabric was brought up despite the bad file' % full)
        fail = 1
print('%d keys checked: %s' % (len(keys), ' '.join(k for k, _ in keys)))
sys.exit(fail)
PY
