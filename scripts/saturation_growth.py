#!/usr/bin/env python3
"""E-graph size and saturation time of graphs with the shipped rules, against
the same binary with some rules left out (--without-rule): what a set of new
rules costs. Runs interleaved; medians.

    scripts/saturation_growth.py SATOR --without RULE [RULE ...] --runs 5 GRAPH...
"""
import argparse
import json
import statistics
import subprocess
import tempfile


def run(sator, graph, without):
    with tempfile.NamedTemporaryFile(suffix=".json") as rep:
        cmd = [sator, "optimize", graph, "--report", rep.name]
        for r in without:
            cmd += ["--without-rule", r]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return json.load(open(rep.name))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sator")
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--without", nargs="+", required=True)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    print("| graph | e-graph nodes (without -> with) | classes | saturate ms (median) | ratio |")
    print("| --- | --- | --- | --- | --- |")
    for g in a.graphs:
        base, new = [], []
        for _ in range(a.runs):
            base.append(run(a.sator, g, a.without))
            new.append(run(a.sator, g, []))
        def med(rs, key):
            return statistics.median(r["time_ms"][key] for r in rs)
        b, n = base[0]["egraph"], new[0]["egraph"]
        tb, tn = med(base, "saturate"), med(new, "saturate")
        print(f"| {g.split('/')[-1]} | {b['nodes']} -> {n['nodes']} | {b['classes']} -> {n['classes']} | "
              f"{tb:.1f} -> {tn:.1f} | {tn / tb:.2f}x |")


if __name__ == "__main__":
    main()
