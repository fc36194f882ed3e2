#!/usr/bin/env python3
"""Records what `sator optimize` (default options) gives on every corpus
graph: e-graph nodes and classes, iterations, output nodes and layout ops, and
a hash of the output graph's text (FNV-1a 64). ctest "optimize outputs are the
recorded ones" compares against it, so a change that alters any of them is
seen, and re-recorded on purpose:

    scripts/record_optimize_outputs.py build/sator "WHY" > tests/data/optimize_recorded.json
"""
import glob
import json
import os
import subprocess
import sys
import tempfile


def fnv1a64(data: bytes) -> str:
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def main():
    sator, why = sys.argv[1], sys.argv[2]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "corpus")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    graphs = {}
    paths = sorted(glob.glob(os.path.join(root, "graphs", "*.json")) + glob.glob(os.path.join(root, "zoo", "graphs", "*.json")))
    with tempfile.TemporaryDirectory() as tmp:
        for p in paths:
            rel = os.path.relpath(p, root)
            out, rep = os.path.join(tmp, "out.json"), os.path.join(tmp, "rep.json")
            subprocess.run([sator, "optimize", p, "-o", out, "--report", rep], check=True, stdout=subprocess.DEVNULL)
            r = json.load(open(rep))
            graphs[rel] = {"egraph_classes": r["egraph"]["classes"], "egraph_nodes": r["egraph"]["nodes"],
                           "iterations": r["egraph"]["iterations"], "layout_ops_out": r["layout_ops_out"],
                           "nodes_out": r["nodes_out"], "output_fnv1a64": fnv1a64(open(out, "rb").read())}
    json.dump({"recorded_with": f"sator optimize GRAPH (default options) on top of commit {commit}: {why}", "graphs": graphs},
              sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
