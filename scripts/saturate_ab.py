#!/usr/bin/env python3
"""Saturation time and e-graph size of two sator binaries on the same graphs,
runs interleaved.

    python3 scripts/saturate_ab.py BEFORE AFTER GRAPH... [--runs 7]

Runs `optimize --report` with each binary in turn, `runs` times per graph,
and prints per graph the median saturation times, the ratio after/before,
and the e-graph's nodes and classes before and after; then the ratio of the
summed medians (issue 23: the rule language may cost at most 1.2x; issue
24: new rules at most 2x time and size on the largest graph).
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile


def report(sator, graph, path):
    subprocess.run([sator, "optimize", graph, "--report", path], check=True, stdout=subprocess.DEVNULL)
    return json.load(open(path))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    total = {"before": 0.0, "after": 0.0}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "r.json")
        for g in a.graphs:
            runs = {"before": [], "after": []}
            for _ in range(a.runs):
                runs["before"].append(report(a.before, g, path))
                runs["after"].append(report(a.after, g, path))
            ms = {k: statistics.median(r["time_ms"]["saturate"] for r in rs) for k, rs in runs.items()}
            size = {k: rs[0]["egraph"] for k, rs in runs.items()}
            total["before"] += ms["before"]
            total["after"] += ms["after"]
            print(f"{os.path.basename(g)}: before {ms['before']:.1f} ms, after {ms['after']:.1f} ms, "
                  f"ratio {ms['after'] / ms['before']:.2f}x; e-graph {size['before']['nodes']} -> "
                  f"{size['after']['nodes']} nodes ({size['after']['nodes'] / size['before']['nodes']:.2f}x), "
                  f"{size['before']['classes']} -> {size['after']['classes']} classes")
    print(f"all: before {total['before']:.1f} ms, after {total['after']:.1f} ms, "
          f"ratio {total['after'] / total['before']:.2f}x (medians of {a.runs}, interleaved)")


if __name__ == "__main__":
    main()
