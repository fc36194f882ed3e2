#!/usr/bin/env python3
"""Estimated peak memory and time of two sator binaries' outputs on every
corpus graph (`optimize --report`: peak_bytes_out, cost_out): where the
second is higher, graph by graph. Exit 1 if any is.

    python3 scripts/estimates_ab.py BEFORE AFTER [GRAPH...]
"""
import glob
import json
import os
import subprocess
import sys
import tempfile


def estimates(sator, graph, path):
    subprocess.run([sator, "optimize", graph, "--report", path], check=True, stdout=subprocess.DEVNULL)
    r = json.load(open(path))
    return r["peak_bytes_out"], r["cost_out"]


def main():
    before, after = sys.argv[1], sys.argv[2]
    graphs = sys.argv[3:] or sorted(glob.glob("corpus/graphs/*.json") + glob.glob("corpus/zoo/graphs/*.json"))
    counts = {"peak": [0, 0, 0], "time": [0, 0, 0]}  # lower, same, higher
    higher = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "r.json")
        for g in graphs:
            (pb, tb), (pa, ta) = estimates(before, g, path), estimates(after, g, path)
            for key, b, a in (("peak", pb, pa), ("time", tb, ta)):
                i = 0 if a < b * (1 - 1e-6) else 2 if a > b * (1 + 1e-6) else 1
                counts[key][i] += 1
                if i == 2:
                    higher.append(f"{os.path.basename(g)}: {key} {b:.6g} -> {a:.6g}")
    for key, (lo, same, hi) in counts.items():
        print(f"estimated {key}: lower on {lo}, the same on {same}, higher on {hi} of {len(graphs)} graphs")
    for line in higher:
        print("  " + line)
    sys.exit(1 if higher else 0)


if __name__ == "__main__":
    main()
