"""Compares sator's roofline estimates (`sator cost --csv`) with the GPU
timings of python/calibrate_costs.py.

  python3 python/cost_model_report.py CALIB.json GRAPH_DIR SATOR [--markdown OUT.md] [--fit-sequence]

Per op: Spearman rank correlation between predicted and measured time over
every kernel-launching node (the model's non-free ops) of all graphs: the
op alone, max(host dispatch, GPU kernels), against its steady-state time.
Per graph: the model's eager total (the host/GPU pipeline) against the
measured eager total.

--fit-sequence: the in-sequence overhead per dispatched op that best fits
the whole-graph totals (minimal median error), fitted on the original graphs
and scored on the optimized ones and the other way round (held out), with
the pipeline recomputed here as cost/graph_cost.cpp computes it.
"""
import argparse
import csv
import json
import os
import re
import subprocess
import tempfile


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb) if va and vb else float("nan")


def pipeline(rows, in_sequence_us):
    host = gpu = 0.0
    for r in rows:
        h, k = float(r["host_seconds"]) * 1e6, float(r["gpu_seconds"]) * 1e6
        host += h + (in_sequence_us if r["op"].startswith(("aten.", "prims.")) else 0.0)
        if k > 0:
            gpu = max(gpu, host) + k
    return max(host, gpu)


def fit_sequence(graph_rows):
    def median_error(names, s):
        errs = sorted(abs(pipeline(graph_rows[n][0], s) - graph_rows[n][1]) / graph_rows[n][1] for n in names)
        return errs[len(errs) // 2], sum(e <= 0.30 for e in errs), len(errs)

    grid = [x / 2 for x in range(0, 41)]
    originals = [n for n in graph_rows if ".opt." not in n]
    optimized = [n for n in graph_rows if ".opt." in n]
    out = ["", "In-sequence overhead per dispatched op (us), fitted by minimal median error:"]
    for fit, test, what in ((originals, optimized, "originals -> optimized"),
                            (optimized, originals, "optimized -> originals"),
                            (list(graph_rows), list(graph_rows), "all -> all")):
        best = min(grid, key=lambda s: median_error(fit, s)[0])
        med, ok, n = median_error(test, best)
        out.append(f"  fit on {what}: {best} us; scored: {ok} of {n} within 30%, median error {med:.0%}")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("calib")
    ap.add_argument("graphs")
    ap.add_argument("sator")
    ap.add_argument("--markdown")
    ap.add_argument("--fit-sequence", action="store_true")
    args = ap.parse_args()
    calib = json.load(open(args.calib))
    pred_ops, meas_ops, kinds = [], [], []
    lines = ["| graph | nodes | kernels | predicted us | measured eager us | error |", "|---|---|---|---|---|---|"]
    errors, original_errors = [], []
    graph_rows = {}
    for name, g in sorted(calib["graphs"].items()):
        if "error" in g:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            table = os.path.join(tmp, "cost.csv")
            run = subprocess.run([args.sator, "cost", os.path.join(args.graphs, name), "--csv", table],
                                 capture_output=True, text=True, check=True)
            rows = list(csv.DictReader(open(table)))
        total = float(re.search(r"([0-9.]+) us eager", run.stdout).group(1))
        graph_rows[name] = (rows, g["total_us"], total)
        kernels = 0
        for r in rows:
            if r["kind"] == "free" or r["node"] not in g["nodes"]:
                continue
            kernels += 1
            pred_ops.append(float(r["eager_seconds"]) * 1e6)
            meas_ops.append(g["nodes"][r["node"]])
            kinds.append(r["kind"])
        err = (total - g["total_us"]) / g["total_us"]
        errors.append(abs(err))
        if ".opt." not in name:
            original_errors.append(abs(err))
        lines.append(f"| {name} | {len(rows)} | {kernels} | {total:.0f} | {g['total_us']:.0f} | {err:+.0%} |")
    rho = spearman(pred_ops, meas_ops)
    summary = [f"Spearman rank correlation, predicted vs measured, over {len(pred_ops)} kernel ops: {rho:.3f}",
               f"Whole graphs: {sum(e <= 0.30 for e in errors)} of {len(errors)} within 30% "
               f"(median |error| {sorted(errors)[len(errors) // 2]:.0%}, worst {max(errors):.0%})"]
    if original_errors and len(original_errors) < len(errors):
        summary.append(f"  of them the input graphs (not sator's optimizations): {sum(e <= 0.30 for e in original_errors)} "
                       f"of {len(original_errors)} within 30% (median |error| "
                       f"{sorted(original_errors)[len(original_errors) // 2]:.0%}, worst {max(original_errors):.0%})")
    by_kind = {}
    for k, p, m in zip(kinds, pred_ops, meas_ops):
        by_kind.setdefault(k, []).append((p, m))
    for k, v in sorted(by_kind.items()):
        if len(v) > 2:
            summary.append(f"  {k}: {len(v)} ops, rank correlation {spearman([x for x, _ in v], [y for _, y in v]):.3f}, "
                           f"measured/predicted median {sorted(y / x for x, y in v)[len(v) // 2]:.2f}")
    if args.fit_sequence:
        summary += fit_sequence(graph_rows)
    text = "\n".join(summary + [""] + lines)
    print(text)
    if args.markdown:
        open(args.markdown, "w").write(text + "\n")


if __name__ == "__main__":
    main()
