#!/bin/sh
# The layout rules of the redesign (smd/README.md), checked on the source tree:
#  - every folder with sources under smd/ and routing/ has a README.md whose
#    "May include:" line lists the folders it may include, and it includes no other;
#  - no include cycle between files;
#  - no source file over 1,000 lines;
#  - each folder's subdir.am lists only its own sources; every test is registered
#    in tests/subdir.am and nowhere else;
#  - in a built tree, no call cycle between the object files of two folders (nm).
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not found"; exit 77; }
exec python3 - "$top" "${top_builddir:-}" <<'PY'
import os, re, sys
top = sys.argv[1]
os.chdir(top)
bad = []
src = []
for root in ('smd', 'routing', 'plugins', 'tests', 'bench', 'fuzz'):
    for d, _, fs in os.walk(root):
        src += [os.path.join(d, f) for f in fs if f.endswith(('.c', '.h'))]

def folder(p):
    parts = p.split('/')
    if parts[0] == 'smd':
        return 'programs' if len(parts) == 2 else parts[1]
    if parts[0] == 'routing':
        return 'routing' if len(parts) == 2 else 'routing/' + parts[1]
    return parts[0]

def target(inc):
    if inc.startswith('routing/'):
        return inc
    p = os.path.join('smd', inc)
    return p if os.path.exists(p) else None

# 1. size
for f in src:
    n = sum(1 for _ in open(f, errors='replace'))
    if n > 1000:
        bad.append('%s: %d lines (at most 1,000)' % (f, n))

# 2. folder rules
rules = {}
for f in src:
    fo = folder(f)
    if not (f.startswith('smd/') or f.startswith('routing/')) or fo == 'programs' or fo in rules:
        continue
    readme = os.path.join(os.path.dirname(f), 'README.md')
    if not os.path.exists(readme):
        bad.append('%s: no README.md saying what the folder owns and may include' % os.path.dirname(f))
        rules[fo] = None
        continue
    m = re.search(r'^May include: *(.*)$', open(readme).read(), re.M)
    if not m:
        bad.append('%s: no "May include:" line' % readme)
        rules[fo] = None
        continue
    rules[fo] = set(w for w in re.findall(r'[a-z]+(?:/[a-z]+)?', m.group(1).split('(')[0]))
graph = {}
for f in src:
    incs = re.findall(r'^\s*#\s*include\s+"([^"]+)"', open(f, errors='replace').read(), re.M)
    graph[f] = []
    for inc in incs:
        t = target(inc)
        if not t:
            continue
        graph[f].append(t)
        fo, to = folder(f), folder(t)
        if fo == to or rules.get(fo) is None:
            continue
        ok = rules[fo]
        # "routing" in a subfolder's list means the routing root
        if to not in ok:
            bad.append('%s includes "%s": folder %s may include only %s (its README.md)'
                       % (f, inc, fo, ', '.join(sorted(ok)) or 'nothing'))

# 3. include cycles (Tarjan)
sys.setrecursionlimit(10000)
index, low, stack, on, sccs, n = {}, {}, [], set(), [], [0]
def strong(v):
    index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
    for w in graph.get(v, []):
        if w not in index:
            strong(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        c = []
        while True:
            w = stack.pop(); on.discard(w); c.append(w)
            if w == v: break
        if len(c) > 1: sccs.append(c)
for v in list(graph):
    if v not in index:
        strong(v)
for c in sccs:
    bad.append('include cycle: ' + ' -> '.join(sorted(c)))

# 4. build files
tests_am = open('tests/subdir.am').read()
for d, _, fs in os.walk('.'):
    if '/.' in d or d.startswith('./build') or '/autom4te' in d:
        continue
    for fn in fs:
        if not fn.endswith('.am'):
            continue
        p = os.path.normpath(os.path.join(d, fn))
        text = open(p).read().replace('\\\n', ' ')
        here = os.path.dirname(p)
        for m in re.finditer(r'^libsmdcore_a_SOURCES\s*\+?=(.*)$', text, re.M):
            for s in m.group(1).split():
                if os.path.dirname(s) != here:
                    bad.append('%s lists %s, a source of another folder' % (p, s))
        if p != os.path.join('tests', 'subdir.am') and re.search(r'^TESTS\s*\+=', text, re.M):
            bad.append('%s registers tests: every test is registered in tests/subdir.am' % p)
for f in sorted(os.listdir('tests')):
    if (f.startswith('test_') and f.endswith('.c')) or (f.endswith('.sh') and not f.startswith('lib')):
        name = 'tests/' + (f[:-2] if f.endswith('.c') else f)
        if not re.search(re.escape(name) + r'\b', tests_am):
            bad.append('%s is not registered in tests/subdir.am' % name)

# 5. call cycles between folders, from the objects of a built tree
build = sys.argv[2] if len(sys.argv) > 2 else ''
objs = []
for root in ('smd', 'routing'):
    for d, _, fs in os.walk(os.path.join(build, root)) if build else []:
        objs += [os.path.join(d, f) for f in fs if f.endswith('.o')]
if objs:
    import subprocess
    defs, undef = {}, {}
    for o in objs:
        name = os.path.relpath(o, build)
        undef[name] = set()
        try:
            out = subprocess.check_output(['nm', o], stderr=subprocess.DEVNULL).decode()
        except (OSError, subprocess.CalledProcessError):
            objs = []
            break
        for l in out.splitlines():
            f = l.split()
            if len(f) == 2 and f[0] == 'U':
                undef[name].add(f[1])
            elif len(f) == 3 and f[1] in 'TDBR':
                defs[f[2]] = name
    calls = {o: {defs[s] for s in us if s in defs and defs[s] != o} for o, us in undef.items()}
    index.clear(); low.clear(); stack.clear(); on.clear(); n[0] = 0
    sccs.clear(); graph.clear(); graph.update(calls)
    for v in list(graph):
        if v not in index:
            strong(v)
    for c in sccs:
        if len({os.path.dirname(x) for x in c}) > 1:
            bad.append('call cycle between folders: ' + ' -> '.join(sorted(c)))
        else:
            print('note: call cycle inside %s: %s' % (os.path.dirname(c[0]), ' '.join(sorted(c))))
    print('layout: call graph of %d objects checked' % len(objs))

for b in bad:
    print('FAIL:', b)
print('layout: %d source files, %d folders with rules, %d problems' % (len(src), len([r for r in rules.values() if r is not None]), len(bad)))
sys.exit(1 if bad else 0)
PY
