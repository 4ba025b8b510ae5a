#!/bin/sh
# SPDX-License-Identifier: MIT
# The smd.yaml keys, their documentation and their example cannot drift.
# The keys come from the descriptor table in smd/config/keys.c, printed by
# `smd --dump-config-keys` (name, type and default, default as parsed, doc
# words). For each key:
#  - man/smd.yaml.5 has a .TP paragraph tagged ".BR NAME " (TYPE; default
#    DEF)"" exactly as the table says, and its text starts with the doc words,
#  - conf/smd.yaml mentions "NAME:" (set or commented out), and where it sets
#    the key the value is the table's default,
#  - smd --once -c FILE refuses a file that gives it a list of lists on line
#    2, exits 1 without touching the (mock) fabric and names FILE:2: and the
#    key.
# A key added to the table without its documentation fails this test.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$(pwd)}"
. "$top_srcdir/tests/lib-daemon.sh"
need_python
scratch confkeys

python3 - "$top_srcdir" "$top_builddir/smd/smd" "$work" <<'PY'
import os, re, subprocess, sys

top, smd, work = sys.argv[1:4]
man = open(os.path.join(top, 'man/smd.yaml.5')).read().splitlines()
example = open(os.path.join(top, 'conf/smd.yaml')).read()
topo = os.path.join(top, 'tests/data/dryrun/ft8.ibnd')

r = subprocess.run([smd, '--dump-config-keys'], stdout=subprocess.PIPE, text=True, timeout=60)
keys = []   # (full name, path, "TYPE; default DEF", default or None, doc)
for line in r.stdout.splitlines():
    name, paren, default, doc = line.split('\t')
    keys.append((name, name.split('.'), paren, None if default == '-' else default, doc))
if r.returncode != 0 or len(keys) < 12:
    print('FAIL: smd --dump-config-keys gave exit %d and %d keys' % (r.returncode, len(keys)))
    sys.exit(1)

def roff(s):
    """A line of the man page as read: fonts dropped, alternating-font macros joined."""
    m = re.match(r'\.(B|I|BR|RB|BI|IB|IR|RI)\s+(.*)', s)
    if m:
        words = [w.strip('"') for w in re.findall(r'"[^"]*"|\S+', m.group(2))]
        s = (' ' if m.group(1) in ('B', 'I') else '').join(words)
    return re.sub(r'\\f[BIRP]', '', s).replace('\\-', '-').replace('\\&', '')

# each .TP paragraph: its tag line and the text up to the next paragraph macro
paras = {}
for i, line in enumerate(man[:-1]):
    if line.startswith('.TP'):
        body = []
        for l2 in man[i + 2:]:
            if re.match(r'\.(TP|PP|RS|RE|SH|IP)\b', l2):
                break
            body.append(roff(l2))
        paras.setdefault(roff(man[i + 1]), ' '.join(body))

fail = 0
for full, path, paren, default, doc in keys:
    leaf = path[-1]
    tag = '%s (%s)' % (leaf, paren)
    if tag not in paras:
        near = [t for t in paras if t.split(' ')[0] == leaf]
        print('FAIL: %s: no .TP paragraph of man/smd.yaml.5 is tagged "%s"%s' %
              (full, tag, ' (there is "%s")' % near[0] if near else ''))
        fail = 1
    elif not paras[tag].startswith(doc):
        print('FAIL: %s: its paragraph in man/smd.yaml.5 does not start "%s": "%s"' % (full, doc, paras[tag][:80]))
        fail = 1
    if not re.search(r'^[#\s]*' + re.escape(leaf) + r':', example, re.M):
        print('FAIL: %s is not in conf/smd.yaml' % full)
        fail = 1
    # set in the example (not commented out), at its depth: the default
    set_re = r'^' + (r'\s\s' * (len(path) - 1)) + re.escape(leaf) + r':[ \t]*(\S[^#\n]*?)?\s*(#.*)?$'
    m = re.search(set_re, example, re.M)
    if m and default is not None and m.group(1) and m.group(1) != default:
        print('FAIL: conf/smd.yaml sets %s: %s, the default is %s' % (full, m.group(1), default))
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
print('%d keys checked: %s' % (len(keys), ' '.join(k[0] for k in keys)))
sys.exit(fail)
PY
