#!/usr/bin/env python3
"""E-graph size and saturation time of two sator binaries on the same graphs
(before and after a change of rules), runs interleaved, medians: what new
rules cost the e-graph (issue 24: at most 2x on the largest corpus graph).

    scripts/saturation_growth.py BEFORE AFTER GRAPH... [--runs 5]
"""
import argparse
import json
import statistics
import subprocess
import tempfile


def run(sator, graph):
    with tempfile.TemporaryDirectory() as tmp:
        rep = tmp + "/r.json"
        subprocess.run([sator, "optimize", graph, "--report", rep], check=True, stdout=subprocess.DEVNULL)
        return json.load(open(rep))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    print("| graph | e-graph nodes | classes | saturate ms (median) | time ratio | size ratio |")
    print("| --- | --- | --- | --- | --- | --- |")
    for g in a.graphs:
        before, after = [], []
        for _ in range(a.runs):
            before.append(run(a.before, g))
            after.append(run(a.after, g))
        b, n = before[0]["egraph"], after[0]["egraph"]
        tb = statistics.median(r["time_ms"]["saturate"] for r in before)
        tn = statistics.median(r["time_ms"]["saturate"] for r in after)
        print(f"| {g.split('/')[-1]} | {b['nodes']} -> {n['nodes']} | {b['classes']} -> {n['classes']} | "
              f"{tb:.1f} -> {tn:.1f} | {tn / tb:.2f}x | {n['nodes'] / b['nodes']:.2f}x |")


if __name__ == "__main__":
    main()
