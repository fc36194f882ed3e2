#!/usr/bin/env python3
"""The source tree's layers (docs/source-layout.md): each top-level directory
may include headers only from directories of a lower layer, so that no arrow
runs up and no two directories need each other. The objectives sit below
every stage that asks them (cost/ for time, memory/ for the peak; issue 40),
egraph/ knows nothing of tensors (not even ir/), and schedule/ and chunk/
stand side by side, neither reading the other.

    tests/source_layers_test.py REPO_ROOT

Fails naming each file whose #include "dir/..." goes sideways or up, and any
directory it does not know (a new one must be given its layer here and in
docs/source-layout.md).
"""
import os
import re
import sys

LAYERS = [
    ["ir", "egraph"],
    ["tensor", "cost", "memory", "interp", "extract"],
    ["rulelang", "schedule", "chunk"],
    ["rules"],
    ["pipeline", "check"],
    ["cli"],
]
# Within its layer's bound, what a directory may not read even below it.
NARROWER = {
    "egraph": set(),          # the engine knows nothing of tensors
    "cost": {"ir"},           # the time objective reads graphs only
    "memory": {"ir"},         # the peak objective reads graphs only
    "extract": {"egraph", "ir"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([A-Za-z_]+)/')


def main():
    root = sys.argv[1]
    layer_of = {d: k for k, ds in enumerate(LAYERS) for d in ds}
    failures, edges = [], 0
    top = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    for d in top:
        sources = [os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(root, d)) for f in fs
                   if f.endswith((".h", ".cpp"))]
        if not sources or d in ("tests", "bench", "build", "examples", "python", "corpus", "docs", "scripts"):
            continue
        if d.startswith("build"):
            continue
        if d not in layer_of:
            failures.append(f"{d}/: a source directory with no layer (give it one in {sys.argv[0]})")
            continue
        for path in sources:
            with open(path, errors="replace") as f:
                for n, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m or m.group(1) == d or m.group(1) not in layer_of:
                        continue
                    dep = m.group(1)
                    edges += 1
                    rel = os.path.relpath(path, root)
                    if layer_of[dep] >= layer_of[d]:
                        way = "sideways" if layer_of[dep] == layer_of[d] else "up"
                        failures.append(f"{rel}:{n}: {d}/ includes {dep}/ ({way}: layer {layer_of[d]} reads layer "
                                        f"{layer_of[dep]})")
                    elif d in NARROWER and dep not in NARROWER[d]:
                        failures.append(f"{rel}:{n}: {d}/ includes {dep}/ (it reads only "
                                        f"{', '.join(sorted(NARROWER[d])) or 'nothing of the project'})")
    print(f"{edges} includes across directories checked")
    for f in failures:
        print("FAIL:", f)
    if edges == 0:
        print("FAIL: no includes found: wrong root?")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
