#!/usr/bin/env python3
"""Runs `sator extract` (tree, dag, ilp) on every extraction-gym file and
compares with extraction-gym's own extractors (reference-results.csv).

The data are public and large, so they stay out of the repository: unpack
extraction-gym's `data/` (shared/extraction-gym/data.tar.xz here, or the
egraphs-good/extraction-gym repository's data/ folder) and pass the folder.

  bench/extraction_gym.py DATA_DIR REFERENCE_CSV [--sator build/sator]
      [--ilp-seconds 60] [--no-ilp] [--repeat 5] [--markdown OUT.md] [--json OUT.json]
  bench/extraction_gym.py DATA_DIR --unseen [...]   data sets without reference
      results (herbie-rover-babble.tar.xz): every *.json under DATA_DIR, sator's
      tree, dag and ilp side by side

Prints one line per file; with --markdown writes the side-by-side table.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
from collections import defaultdict

REFERENCE = ["bottom-up", "faster-bottom-up", "prio-queue", "faster-greedy-dag"]


def run(sator, path, extractor, seconds, repeat=1):
    """One extraction; with repeat > 1 the median time of that many runs
    (the result of the median run: tree and dag are deterministic except
    where dag's local search hits its time budget)."""
    cmd = [sator, "extract", path, "--extractor", extractor, "--json", "--time-limit", str(seconds)]
    runs = []
    for _ in range(repeat):
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds * 3 + 120)
        if out.returncode != 0:
            return {"error": out.stderr.strip()}
        runs.append(json.loads(out.stdout))
    runs.sort(key=lambda r: r.get("micros", 0))
    return runs[len(runs) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data")
    ap.add_argument("reference", nargs="?")
    ap.add_argument("--unseen", action="store_true", help="no reference: run on every *.json under DATA")
    ap.add_argument("--sator", default=os.path.join(os.path.dirname(__file__), "..", "build", "sator"))
    ap.add_argument("--ilp-seconds", type=float, default=60.0)
    ap.add_argument("--no-ilp", action="store_true")
    ap.add_argument("--repeat", type=int, default=5, help="tree and dag: median time of this many runs")
    ap.add_argument("--markdown")
    ap.add_argument("--json")
    args = ap.parse_args()
    if not os.path.isdir(args.data):
        sys.exit(f"{args.data}: not a folder (unpack extraction-gym's data/ there)")

    ref = defaultdict(dict)
    if args.unseen:
        files = sorted(os.path.relpath(os.path.join(d, f), args.data)
                       for d, _, fs in os.walk(args.data) for f in fs if f.endswith(".json"))
    else:
        if not args.reference:
            sys.exit("a REFERENCE_CSV is needed (or --unseen)")
        with open(args.reference) as f:
            for row in csv.DictReader(f):
                ref[row["file"]][row["extractor"]] = (float(row["dag_cost"]), float(row["micros"]))
        files = sorted(ref)
    rows = []
    for name in files:
        path = os.path.join(args.data, name)
        if not os.path.exists(path):
            print(f"{name}: missing in {args.data}", file=sys.stderr)
            continue
        r = {"file": name, "ref": ref[name]}
        for ex in ["tree", "dag"] + ([] if args.no_ilp else ["ilp"]):
            r[ex] = run(args.sator, path, ex, args.ilp_seconds, 1 if ex == "ilp" else args.repeat)
        rows.append(r)
        if args.unseen:
            t, d = r["tree"].get("dag_cost", float("inf")), r["dag"].get("dag_cost", float("inf"))
            i = r.get("ilp", {})
            print(f"{name}: tree {t:.6g}, dag {d:.6g}" + (f", ilp {i.get('dag_cost', float('nan')):.6g}"
                  f"{' (optimal)' if i.get('proved_optimal') else ''}" if i else ""), flush=True)
            continue
        best = min(v[0] for v in r["ref"].values())
        d = r["dag"].get("dag_cost", float("inf"))
        print(f"{name}: dag {d:.6g} vs best reference {best:.6g} "
              f"({'better' if d < best - 1e-9 else 'equal' if d <= best + 1e-9 else 'WORSE'})", flush=True)

    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if args.markdown:
        (write_unseen_markdown if args.unseen else write_markdown)(rows, args)


def write_unseen_markdown(rows, args):
    lines = ["| file | tree DAG | dag DAG | dag µs | ilp DAG | optimal |", "|---|---|---|---|---|---|"]
    better = errors = optimal = 0
    for r in rows:
        t, d, i = r["tree"], r["dag"], r.get("ilp", {})
        errors += any("error" in x for x in (t, d, i))
        better += d.get("dag_cost", float("inf")) < t.get("dag_cost", float("inf")) - 1e-9
        optimal += bool(i.get("proved_optimal"))
        lines.append(f"| {r['file']} | {t.get('dag_cost', float('nan')):.6g} | {d.get('dag_cost', float('nan')):.6g} | "
                     f"{d.get('micros', 0):.0f} | {i.get('dag_cost', float('nan')):.6g} | "
                     f"{'yes' if i.get('proved_optimal') else 'no'} |")
    summary = [f"{len(rows)} files without reference results: {errors} failed; dag's DAG cost below tree's on "
               f"{better}; ilp ({args.ilp_seconds:g} s) proved optimal on {optimal}."]
    with open(args.markdown, "w") as f:
        f.write("\n".join(summary + [""] + lines) + "\n")


def write_markdown(rows, args):
    lines = ["| file | best reference DAG | faster-greedy-dag µs | sator tree DAG | sator dag DAG | dag µs |"
             + ("" if args.no_ilp else " ilp DAG | ilp s | optimal |"),
             "|---|---|---|---|---|---|" + ("" if args.no_ilp else "---|---|---|")]
    worse = better = equal = optimal = ilp_done = faster = 0
    for r in rows:
        best = min(v[0] for v in r["ref"].values())
        fgd = r["ref"].get("faster-greedy-dag", (float("nan"), float("nan")))
        d = r["dag"].get("dag_cost", float("inf"))
        mark = "**" if d < best - 1e-9 else ""
        better += d < best - 1e-9
        equal += abs(d - best) <= 1e-9
        worse += d > best + 1e-9
        faster += r["dag"].get("micros", 1e18) < fgd[1]
        line = (f"| {r['file']} | {best:.6g} | {fgd[1]:.0f} | {r['tree'].get('dag_cost', float('inf')):.6g} | "
                f"{mark}{d:.6g}{mark} | {r['dag'].get('micros', 0):.0f} |")
        if not args.no_ilp:
            i = r["ilp"]
            ilp_done += "dag_cost" in i
            optimal += bool(i.get("proved_optimal"))
            line += (f" {i.get('dag_cost', float('nan')):.6g} | {i.get('micros', 0) / 1e6:.1f} | "
                     f"{'yes' if i.get('proved_optimal') else 'no'} |")
        lines.append(line)
    summary = [f"{len(rows)} files: sator dag's DAG cost is lower than the best reference extractor's on {better}, "
               f"equal on {equal}, higher on {worse}; faster than faster-greedy-dag on {faster}."]
    if not args.no_ilp:
        summary.append(f"ilp ({args.ilp_seconds:g} s limit) proved optimal on {optimal} of {len(rows)} files.")
    with open(args.markdown, "w") as f:
        f.write("\n".join(summary + [""] + lines) + "\n")


if __name__ == "__main__":
    main()
