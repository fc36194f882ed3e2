#!/usr/bin/env python3
"""Growth benchmark (issue 22): time and peak RSS of each phase as graphs grow.

    python3 scripts/growth_bench.py SATOR OUT_DIR [--copies 1 4 17 36 60] [--repeat 3]

Inputs, written to OUT_DIR/inputs: N disjoint copies of
corpus/graphs/gpt2-124m.train.g0.json (scripts/replicate_graph.py), a
100,000-deep view chain, a 100,000-deep chain of views and negations, and a
wide graph of 1,000,000 nodes (250,000 independent view/neg/view chains).
Each (input, command) runs `repeat` times as its own process; the medians of
the report's phase times and of the process's peak RSS (/usr/bin/time) are
kept. Commands: `optimize` (load, saturate, extract, write), `greedy`,
`compare` (greedy + saturation + stats) and `optimize --chunks auto` (the
chunk planning time). Writes OUT_DIR/growth.json and OUT_DIR/growth.md, and
OUT_DIR/growth.png when matplotlib is there (Debian's python3-matplotlib).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BASE = os.path.join(ROOT, "corpus", "graphs", "gpt2-124m.train.g0.json")


def chain(path, n, with_neg):
    shapes = [[24], [6, 4], [2, 12], [4, 6]]

    def stride(s):
        st = [1] * len(s)
        for k in range(len(s) - 2, -1, -1):
            st[k] = st[k + 1] * s[k + 1]
        return st

    nodes = [{"name": "x", "op": "placeholder", "role": "input", "shape": [4, 6], "stride": [6, 1],
              "dtype": "float32"}]
    shape = [4, 6]
    for i in range(n):
        if with_neg and i % 2:
            nodes.append({"name": f"n{i}", "op": "aten.neg.default", "args": [{"node": nodes[-1]["name"]}],
                          "shape": shape, "stride": stride(shape), "dtype": "float32"})
            continue
        shape = shapes[i % 4]
        nodes.append({"name": f"n{i}", "op": "aten.view.default", "args": [{"node": nodes[-1]["name"]}, shape],
                      "shape": shape, "stride": stride(shape), "dtype": "float32"})
    nodes.append({"name": "output", "op": "output", "args": [[{"node": nodes[-1]["name"]}]]})
    with open(path, "w") as f:
        json.dump({"format": "sator.graph", "version": 1, "name": os.path.basename(path)[:-5], "symbols": [],
                   "nodes": nodes}, f)


def wide(path, n_nodes):
    chains = n_nodes // 4
    nodes, outs = [], []
    for c in range(chains):
        x = f"x{c}"
        nodes.append({"name": x, "op": "placeholder", "role": "input", "shape": [4, 6], "stride": [6, 1],
                      "dtype": "float32"})
        nodes.append({"name": f"a{c}", "op": "aten.view.default", "args": [{"node": x}, [24]], "shape": [24],
                      "stride": [1], "dtype": "float32"})
        nodes.append({"name": f"b{c}", "op": "aten.neg.default", "args": [{"node": f"a{c}"}], "shape": [24],
                      "stride": [1], "dtype": "float32"})
        nodes.append({"name": f"c{c}", "op": "aten.view.default", "args": [{"node": f"b{c}"}, [4, 6]],
                      "shape": [4, 6], "stride": [6, 1], "dtype": "float32"})
        outs.append({"node": f"c{c}"})
    nodes.append({"name": "output", "op": "output", "args": [outs]})
    with open(path, "w") as f:
        json.dump({"format": "sator.graph", "version": 1, "name": "wide", "symbols": [], "nodes": nodes}, f)


def run_once(sator, args, report):
    cmd = ["/usr/bin/time", "-f", "%M", sator] + args + ["--report", report]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr[-500:]}")
    rss_kb = int(p.stderr.strip().splitlines()[-1])
    with open(report) as f:
        r = json.load(f)
    return {"wall_s": wall, "rss_mb": rss_kb / 1024, "time_ms": r.get("time_ms", {}),
            "egraph": r.get("egraph"), "nodes_in": r.get("nodes_in")}


def median_run(sator, args, report, repeat):
    runs = [run_once(sator, args, report) for _ in range(repeat)]
    out = {"wall_s": statistics.median(r["wall_s"] for r in runs),
           "rss_mb": statistics.median(r["rss_mb"] for r in runs),
           "egraph": runs[-1]["egraph"], "nodes_in": runs[-1]["nodes_in"], "time_ms": {}}
    for k in runs[0]["time_ms"]:
        out["time_ms"][k] = statistics.median(r["time_ms"].get(k, 0) for r in runs)
    return out


def compare_run(sator, graph, out_json, repeat):
    walls, rss = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", sator, "compare", graph, "--repeat", "1"], capture_output=True,
                           text=True)
        walls.append(time.perf_counter() - t0)
        if p.returncode != 0:
            raise RuntimeError(f"compare {graph} exited {p.returncode}: {p.stderr[-500:]}")
        rss.append(int(p.stderr.strip().splitlines()[-1]) / 1024)
    return {"wall_s": statistics.median(walls), "rss_mb": statistics.median(rss)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sator")
    ap.add_argument("out")
    ap.add_argument("--copies", nargs="*", type=int, default=[1, 4, 17, 36, 60])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-large", action="store_true", help="no chains or wide graph")
    a = ap.parse_args()
    inputs = os.path.join(a.out, "inputs")
    os.makedirs(inputs, exist_ok=True)
    rows = []
    cases = []
    for n in a.copies:
        path = os.path.join(inputs, f"gpt2x{n}.json")
        if not os.path.exists(path):
            subprocess.run([sys.executable, os.path.join(HERE, "replicate_graph.py"), BASE, str(n), path], check=True)
        cases.append((f"gpt2 train x{n}", path, n, True))
    if not a.skip_large:
        for name, fn in (("views100k", lambda p: chain(p, 100_000, False)),
                         ("viewsneg100k", lambda p: chain(p, 100_000, True)),
                         ("wide1M", lambda p: wide(p, 1_000_000))):
            path = os.path.join(inputs, name + ".json")
            if not os.path.exists(path):
                fn(path)
            cases.append((name, path, None, False))
    report = os.path.join(a.out, "report.json")
    for label, path, copies, full in cases:
        row = {"input": label, "copies": copies}
        t_limit = ["--time-limit", "300"]
        row["optimize"] = median_run(a.sator, ["optimize", path, "-o", os.path.join(a.out, "o.json")] + t_limit,
                                     report, a.repeat)
        row["greedy"] = median_run(a.sator, ["greedy", path, "-o", os.path.join(a.out, "g.json")], report, a.repeat)
        if full:
            row["chunk"] = median_run(a.sator, ["optimize", path, "--chunks", "auto", "-o",
                                                os.path.join(a.out, "c.json")] + t_limit, report, a.repeat)
            row["compare"] = compare_run(a.sator, path, None, a.repeat)
        rows.append(row)
        print(json.dumps({"input": label, "optimize_s": round(row["optimize"]["wall_s"], 2),
                          "greedy_s": round(row["greedy"]["wall_s"], 2),
                          "chunk_s": round(row.get("chunk", {}).get("wall_s", 0), 2)}), flush=True)
    with open(os.path.join(a.out, "growth.json"), "w") as f:
        json.dump(rows, f, indent=1)
    with open(os.path.join(a.out, "growth.md"), "w") as f:
        f.write(table(rows))
    try:
        plot(rows, os.path.join(a.out, "growth.png"))
    except ImportError:
        print("no matplotlib: no plot", file=sys.stderr)


def table(rows):
    out = ["| input | nodes | optimize s (load / saturate / extract / write) | iterations | optimize RSS MB | "
           "greedy s | greedy RSS MB | chunk planning s | optimize --chunks auto s | compare s |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        o, g = r["optimize"], r["greedy"]
        t = o["time_ms"]
        phases = " / ".join(f"{t.get(k, 0) / 1e3:.2f}" for k in ("load", "saturate", "extract", "write"))
        eg = o.get("egraph") or {}
        c = r.get("chunk")
        rest = (f"{c['time_ms'].get('chunk', 0) / 1e3:.2f} | {c['wall_s']:.2f} | {r['compare']['wall_s']:.2f}"
                if c else "- | - | -")
        out.append(f"| {r['input']} | {o['nodes_in']} | {o['wall_s']:.2f} ({phases}) | "
                   f"{eg.get('iterations')} {eg.get('stop_reason', '')} | {o['rss_mb']:.0f} | {g['wall_s']:.2f} | "
                   f"{g['rss_mb']:.0f} | {rest} |")
    return "\n".join(out) + "\n"


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    reps = [r for r in rows if r["copies"]]
    if not reps:
        return  # the chains and the wide graph alone: nothing to plot against copies
    n = [r["optimize"]["nodes_in"] for r in reps]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    series = [("optimize", lambda r: r["optimize"]["wall_s"]), ("greedy", lambda r: r["greedy"]["wall_s"]),
              ("optimize --chunks auto", lambda r: r["chunk"]["wall_s"]), ("compare", lambda r: r["compare"]["wall_s"]),
              ("saturate", lambda r: r["optimize"]["time_ms"]["saturate"] / 1e3),
              ("extract", lambda r: r["optimize"]["time_ms"]["extract"] / 1e3)]
    for name, f in series:
        ax1.plot(n, [f(r) for r in reps], marker="o", label=name)
    lin = [reps[0]["optimize"]["wall_s"] * x / n[0] for x in n]
    ax1.plot(n, lin, "k:", label="linear from 1 copy (optimize)")
    for name, key in (("optimize", "optimize"), ("greedy", "greedy"), ("optimize --chunks auto", "chunk")):
        ax2.plot(n, [r[key]["rss_mb"] for r in reps], marker="o", label=name)
    for ax, xlabel, ylabel in ((ax1, "graph nodes (copies of GPT-2's training graph)", "seconds"),
                               (ax2, "graph nodes", "peak RSS (MB)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
