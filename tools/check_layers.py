#!/usr/bin/env python3
"""Check the layering rule of src/ (src/README): a lower layer never calls
or includes a higher one, and no files of one layer call each other in a
cycle.

    tools/check_layers.py [--graph] OBJECT...

The objects are the extension's compiled src/**/*.o (`make check-layers`
builds them first); calls and references to variables are read from their
symbol tables with nm, so what counts is what the compiler emitted (a call
made by a static inline function of a header belongs to the file that
includes it).  Includes are read from the sources.

Also checked: src/core/ includes no PostgreSQL header (it is built and
fuzzed without the server), and no header includes postgres.h (each .c
includes it first).  Exits 1 listing every violation; --graph prints the
file dependencies, lowest layer first.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")

# rank of each layer: a file may depend on files of a lower rank, and on
# files of its own folder (then without cycles).  Layers of one rank in
# different folders (scan, sql) may not depend on each other.
RANKS = {
    "port": 0,      # src/mr_port_server.c: the server side of core's seam
    "core": 1,      # src/core: pure C99
    "base": 2,      # src/*.c settings and the extension's objects, match_recognize.h
    "bind": 3,
    "runtime": 4,
    "scan": 5,
    "sql": 5,
    "stream": 6,
    "entry": 7,     # src/match_recognize.c: _PG_init
}

TOP_LEVEL = {
    "mr_port_server.c": "port",
    "match_recognize.c": "entry",
}

# Known exceptions, each to be removed by the change that fixes it.
ALLOWED_CYCLES = []
ALLOWED_POSTGRES_H_IN_HEADERS = set()


def layer_of(rel):
    """(layer, folder) of a path relative to the repository root."""
    parts = rel.split("/")
    if len(parts) == 2:
        return TOP_LEVEL.get(parts[1], "base"), "src"
    return parts[1], "src/" + parts[1]


def sources():
    out = []
    for d, _, files in os.walk(SRC):
        for f in files:
            if f.endswith((".c", ".h")):
                out.append(os.path.relpath(os.path.join(d, f), ROOT))
    return sorted(out)


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def includes(rel, by_name):
    text = open(os.path.join(ROOT, rel), encoding="utf-8").read()
    found = []
    for name in INCLUDE.findall(text):
        base = os.path.basename(name)
        if name == "postgres.h":
            found.append(("postgres.h", None))
        elif base in by_name:
            found.append((name, by_name[base]))
        else:
            found.append((name, None))   # a PostgreSQL header
    return found


def nm(obj):
    res = subprocess.run(["nm", obj], capture_output=True, text=True, check=True)
    defined, undefined = set(), set()
    for line in res.stdout.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "U":
            undefined.add(f[1])
        elif len(f) == 3 and f[1] in "TDBRVWG" and f[1].isupper():
            defined.add(f[2])
    return defined, undefined


def allowed(src_layer, src_dir, dst_layer, dst_dir):
    if src_dir == dst_dir:
        return True
    return RANKS[dst_layer] < RANKS[src_layer]


def include_allowed(src, src_layer, src_dir, dst, dst_layer, dst_dir):
    # the port implements the seam core declares
    if src_layer == "port" and dst == "src/core/mr_port.h":
        return True
    return allowed(src_layer, src_dir, dst_layer, dst_dir)


def sccs(nodes, edges):
    """Tarjan's strongly connected components."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main(argv):
    show_graph = "--graph" in argv
    objs = [a for a in argv if not a.startswith("--")]
    if not objs:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    errors = []
    files = sources()
    by_name = {}
    for rel in files:
        base = os.path.basename(rel)
        if base in by_name:
            errors.append("two headers or sources named %s: %s, %s" % (base, by_name[base], rel))
        by_name[base] = rel

    # includes
    for rel in files:
        lay, d = layer_of(rel)
        for name, target in includes(rel, by_name):
            if name == "postgres.h":
                if lay == "core":
                    errors.append("%s: core includes postgres.h" % rel)
                elif rel.endswith(".h") and rel not in ALLOWED_POSTGRES_H_IN_HEADERS:
                    errors.append("%s: a header includes postgres.h (the .c files include it first)" % rel)
                continue
            if target is None:
                if lay == "core":
                    errors.append('%s: core includes "%s", which is not a header of src/core' % (rel, name))
                continue
            tl, td = layer_of(target)
            if not include_allowed(rel, lay, d, target, tl, td):
                errors.append("%s (%s) includes %s (%s)" % (rel, lay, target, tl))

    # calls and references, from the objects
    defs, uses = {}, {}
    for o in objs:
        rel = os.path.relpath(os.path.abspath(o), ROOT)
        src = rel[:-2] + ".c"
        d, u = nm(o)
        uses[src] = u
        for s in d:
            defs.setdefault(s, src)
    edges = {}
    for src, u in uses.items():
        for s in sorted(u):
            dst = defs.get(s)
            if dst is None or dst == src:
                continue
            edges.setdefault(src, {}).setdefault(dst, []).append(s)
    for src in sorted(edges):
        lay, d = layer_of(src)
        for dst, syms in sorted(edges[src].items()):
            tl, td = layer_of(dst)
            if not allowed(lay, d, tl, td):
                errors.append("%s (%s) calls %s (%s): %s" % (src, lay, dst, tl, ", ".join(syms[:6])))

    # cycles among the files of one folder
    for comp in sccs(list(uses), {s: set(t) for s, t in edges.items()}):
        if len(comp) < 2:
            continue
        folder = layer_of(comp[0])[1]
        if folder in ALLOWED_CYCLES:
            continue
        detail = []
        for s in comp:
            for t in comp:
                if t in edges.get(s, {}):
                    detail.append("%s -> %s (%s)" % (os.path.basename(s), os.path.basename(t),
                                                      ", ".join(edges[s][t][:3])))
        errors.append("files call each other in a cycle: %s" % "; ".join(detail))

    if show_graph:
        for src in sorted(uses, key=lambda s: (RANKS[layer_of(s)[0]], s)):
            deps = sorted(edges.get(src, {}))
            print("%-36s -> %s" % (src, ", ".join(os.path.relpath(t, "src") for t in deps) or "-"))
    for e in errors:
        print("check_layers: " + e)
    if errors:
        print("check_layers: %d violation(s) of the layering rule (src/README)" % len(errors))
        return 1
    print("check_layers: %d objects, %d files: the layering rule holds" % (len(objs), len(files)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
