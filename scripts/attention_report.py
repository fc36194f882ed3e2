#!/usr/bin/env python3
"""docs/results/attention.md: every softmax over a rank-4 tensor of the corpus
(corpus/graphs, corpus/zoo/graphs), fused or the first reason not, as
`sator optimize --explain-attention --report` gives it, with the default
options and with the opt-ins (--fuse-dropout --no-weigh-biased-kernels).

    python3 scripts/attention_report.py build/sator > docs/results/attention.md
"""
import collections
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sator = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build", "sator")
graphs = sorted(glob.glob(os.path.join(root, "corpus", "graphs", "*.json"))) + \
    sorted(glob.glob(os.path.join(root, "corpus", "zoo", "graphs", "*.json")))
OPT_IN = ["--fuse-dropout", "--no-weigh-biased-kernels"]


def blocks(path, extra):
    with tempfile.TemporaryDirectory() as tmp:
        rep = os.path.join(tmp, "r.json")
        subprocess.run([sator, "optimize", path, "--explain-attention", "--report", rep] + extra, check=True,
                       capture_output=True)
        return json.load(open(rep))["attention_blocks"]


def short(why):
    # The reason without the scores' description (it follows "scores: " or "written as ").
    why = re.sub(r"[0-9]+\.[0-9] us", "N us", why)  # a graph's estimates
    return re.sub(r"(; scores: .*\)|written as .*)$", lambda m: ")" if m.group(0).startswith(";") else "written as ...", why)


runs = {name: {os.path.relpath(p, root): blocks(p, extra) for p in graphs}
        for name, extra in (("default", []), ("opt-in", OPT_IN))}
print("# Attention blocks: fused, or why not\n")
print("Every softmax over a rank-4 tensor in the corpus (`corpus/graphs`, `corpus/zoo/graphs`), as")
print("`sator optimize --explain-attention` lists it, with the default options and with the")
print("opt-ins (`--fuse-dropout --no-weigh-biased-kernels`). Regenerate with\n")
print("    python3 scripts/attention_report.py build/sator > docs/results/attention.md\n")
for name, res in runs.items():
    all_blocks = [b for bs in res.values() for b in bs]
    fused = sum(b["fused"] for b in all_blocks)
    print(f"## {name}: {len(all_blocks)} softmaxes, {fused} fused\n")
    reasons = collections.Counter(short(b["why"]) for b in all_blocks if not b["fused"])
    if reasons:
        print("| reason | blocks |\n| --- | --- |")
        for why, n in reasons.most_common():
            print(f"| {why} | {n} |")
        print()
    print("| graph | softmaxes | fused | reasons |\n| --- | --- | --- | --- |")
    for g, bs in res.items():
        if all(b["fused"] for b in bs):
            continue
        rs = collections.Counter(short(b["why"]) for b in bs if not b["fused"])
        text = "; ".join(f"{n}x {w}" for w, n in rs.items())
        print(f"| {os.path.basename(g)[:-5]} | {len(bs)} | {sum(b['fused'] for b in bs)} | {text} |")
    print()
