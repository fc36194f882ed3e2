#!/usr/bin/env python3
"""Runs `sator optimize` on every corpus graph and prints the results table
of docs/results.md (markdown) to stdout.

    python3 scripts/corpus_results.py [build/sator] > /tmp/table.md
"""
import json
import os
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sator = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build", "sator")
manifest = json.load(open(os.path.join(root, "corpus", "manifest.json")))

print("| graph | layout ops in | Inductor | sator | attention blocks | fused by Inductor | fused by sator "
      "| nodes in → out | e-graph nodes / classes | iterations, stop | time (ms) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
with tempfile.TemporaryDirectory() as tmp:
    report = os.path.join(tmp, "r.json")
    for e in manifest:
        g = e["graph"]
        path = os.path.join(root, "corpus", "graphs", g + ".json")
        subprocess.run([sator, "optimize", path, "--report", report], check=True, capture_output=True)
        r = json.load(open(report))
        ind = e["inductor"]
        print(f"| {g} | {r['layout_ops_in']} | {ind['layout_ops']} | **{r['layout_ops_out']}** "
              f"| {e['attention_blocks']} | {ind['sdpa'] - e['input']['sdpa']} | {r['attention_fused']} "
              f"| {r['nodes_in']} → {r['nodes_out']} | {r['egraph']['nodes']} / {r['egraph']['classes']} "
              f"| {r['egraph']['iterations']}, {r['egraph']['stop_reason']} | {r['time_ms']['total']:.1f} |")
