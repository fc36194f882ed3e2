"""sator's peak-memory estimate against the measured CUDA peak (issue 25,
item 3): every graph of the given folders, as captured and as sator writes
it, run eagerly (a GraphModule freeing each value after its last use, what
the estimate models) and under torch.compile (which fuses and reuses, so the
estimate is an upper bound there).

    python3 python/gpu/peak_estimates.py OUT_DIR corpus/graphs corpus/zoo/graphs
        [--only NAME...] [--deadline SECONDS] [--no-compile]

The measured peak of a run is torch.cuda.max_memory_allocated over the run
less what was allocated before it other than the graph's inputs (as in
validate_corpus.py, whose `measure` it uses); the compiled run is measured
after a warm-up call (compilation and autotuning excluded). Estimates are
`sator info --json` (peak_memory.peak_bytes) of each file. Writes
OUT_DIR/peak_estimates.json (a row per graph, written after each, so a
killed run keeps what it measured) and prints a line per graph; the
summary counts the graphs over 100 MiB whose eager estimate is within 5%.
"""
import argparse
import json
import os
import sys
import tempfile
import time

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
sys.path.insert(0, here)
from sator_torch.inductor_pass import find_sator  # noqa: E402
from sator_torch.loader import example_inputs, load  # noqa: E402
from validate_corpus import free, measure, sator_json  # noqa: E402

MiB = 2**20


def estimate(sator, path):
    return json.loads(sator_json(sator, "info", "--json", path))["peak_memory"]["peak_bytes"]


def peaks(path, compiled):
    """Measured peak bytes of one graph file: eager, and compiled (or None)."""
    inputs = example_inputs(path)
    gm = load(path, named_random=True)
    out, eager, _ = measure(gm, inputs, repeats=1)
    del out
    free()
    comp = None
    if compiled:
        torch._dynamo.reset()
        fn = torch.compile(gm)
        out, comp, _ = measure(fn, inputs, repeats=1)
        del out, fn
        torch._dynamo.reset()
        free()
    del gm, inputs
    free()
    return eager, comp


def error(est, measured):
    return round(est / measured - 1, 4) if measured else None


def one(sator, path, tmp, compiled):
    name = os.path.basename(path)[:-5]
    opt = os.path.join(tmp, name + ".sator.json")
    sator_json(sator, "optimize", path, "-o", opt)
    row = {"graph": name, "estimated_in": estimate(sator, path), "estimated_out": estimate(sator, opt)}
    row["eager_in"], row["compiled_in"] = peaks(path, compiled)
    row["eager_out"], row["compiled_out"] = peaks(opt, compiled)
    for side in ("in", "out"):
        row[f"eager_error_{side}"] = error(row[f"estimated_{side}"], row[f"eager_{side}"])
        row[f"compiled_error_{side}"] = error(row[f"estimated_{side}"], row[f"compiled_{side}"])
    return row


def line(r):
    def mib(x):
        return "-" if x is None else f"{x / MiB:.0f}"

    def pct(x):
        return "-" if x is None else f"{x:+.1%}"

    return (f"{r['graph']:40s} in: est {mib(r['estimated_in'])} eager {mib(r['eager_in'])} ({pct(r['eager_error_in'])})"
            f" compiled {mib(r['compiled_in'])} | out: est {mib(r['estimated_out'])} eager {mib(r['eager_out'])}"
            f" ({pct(r['eager_error_out'])}) compiled {mib(r['compiled_out'])} MiB")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--deadline", type=float, default=1e9, help="seconds; graphs not started by then are skipped")
    ap.add_argument("--no-compile", action="store_true", help="eager runs only")
    ap.add_argument("--shard", default="0/1", help="K/N: every N-th graph from the K-th (parallel processes)")
    a = ap.parse_args()
    sator = find_sator()
    if not sator:
        sys.exit("no sator binary: set $SATOR")
    os.makedirs(a.out_dir, exist_ok=True)
    paths = sorted(os.path.join(d, f) for d in a.folders for f in os.listdir(d) if f.endswith(".json"))
    if a.only:
        paths = [p for p in paths if os.path.basename(p)[:-5] in a.only]
    k, n = (int(x) for x in a.shard.split("/"))
    paths = paths[k::n]
    rows, start = [], time.time()
    out_path = os.path.join(a.out_dir, "peak_estimates.json" if n == 1 else f"peak_estimates.{k}of{n}.json")
    with tempfile.TemporaryDirectory() as tmp:
        for p in paths:
            name = os.path.basename(p)[:-5]
            if time.time() - start > a.deadline:
                rows.append({"graph": name, "problem": "not run: past the deadline"})
                continue
            try:
                row = one(sator, p, tmp, not a.no_compile)
                print(line(row), flush=True)
            except Exception as e:  # noqa: BLE001  (report, keep going)
                row = {"graph": name, "problem": f"{type(e).__name__}: {e}"[:400]}
                print(f"{name:40s} FAILED {row['problem']}", flush=True)
                torch._dynamo.reset()
                free()
            rows.append(row)
            with open(out_path, "w") as fh:
                json.dump(rows, fh, indent=1)
    big = [r for r in rows if r.get("eager_in") and r["eager_in"] > 100 * MiB]
    within = [r for r in big if abs(r["eager_error_in"]) <= 0.05]
    print(f"{len(rows)} graphs; over 100 MiB eager: {len(big)}, estimate within 5%: {len(within)}")


if __name__ == "__main__":
    main()
