#!/usr/bin/env python3
"""Saturation time of two sator binaries on the same graphs, interleaved.

    python3 scripts/saturate_ab.py BEFORE AFTER GRAPH... [--runs 7]

Runs `optimize` with each binary in turn, `runs` times per graph, reads the
report's `saturate N ms`, and prints per graph the medians and the ratio
after/before, then the ratio of the summed medians (issue 23: the rule
language may cost at most 1.2x).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile


def saturate_ms(sator, graph, out):
    p = subprocess.run([sator, "optimize", graph, "-o", out], capture_output=True, text=True, check=True)
    m = re.search(r"saturate ([0-9.]+) ms", p.stdout)
    if not m:
        sys.exit(f"no saturate time in the report of {sator} on {graph}")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    total = {"before": 0.0, "after": 0.0}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "o.json")
        for g in a.graphs:
            t = {"before": [], "after": []}
            for _ in range(a.runs):
                t["before"].append(saturate_ms(a.before, g, out))
                t["after"].append(saturate_ms(a.after, g, out))
            mb, ma = statistics.median(t["before"]), statistics.median(t["after"])
            total["before"] += mb
            total["after"] += ma
            print(f"{os.path.basename(g)}: before {mb:.1f} ms, after {ma:.1f} ms, ratio {ma / mb:.2f}x")
    print(f"all: before {total['before']:.1f} ms, after {total['after']:.1f} ms, "
          f"ratio {total['after'] / total['before']:.2f}x (medians of {a.runs}, interleaved)")


if __name__ == "__main__":
    main()
