"""Every corpus graph and sator's output of it on the GPU: same random inputs,
outputs compared, both timed, peak memory measured against sator's estimate.

    python3 python/gpu/validate_corpus.py CORPUS_GRAPHS_DIR OUT_DIR [--only NAME...] [--deadline SECONDS]
                                          [--input-scale S]

For each graph G the script runs `sator optimize G --chunks auto` ($SATOR, or
build/sator) and `sator info --json` on both files (the estimated peak), then:
  a1  G in run_graph.py (the reference runner used since issue 4),
  a2  G again in float64 (graphs computing in float32) or a second run,
  a0  G loaded by sator_torch.load as a GraphModule,
  b   sator's output loaded the same way (fused attention, sator.chunked);
and checks a0 and b against a1 with validate_optimized.compare (relative
error within the dtype's tolerance, or three times a1's own distance from
a2). Random ops draw from streams named after their nodes in every runner.
The GraphModules are timed (median of 5 eager runs after one warm-up, CUDA
events) and their peak is measured in the second run: torch's
max_memory_allocated over the run, less what was allocated before it other
than the graph's inputs -- what sator's estimator counts.
Floating-point inputs are drawn from N(0, S²) (S = 1 by default, the scale
of the first runs). With N(0, 1) weights a transformer's attention scores
have standard deviations in the hundreds (softmax rows one-hot), a regime no
trained model is in and where the fused kernels round cancelling sums worse
than the decomposed graph (docs/rules.md). q and k each scale with S²
(weight times activation), the scores with about S⁴: S = 0.3 brings them
about 120 times down.
Writes OUT_DIR/validate_corpus.json and prints a table.
"""
import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
from sator_torch.inductor_pass import find_sator  # noqa: E402
from sator_torch.loader import example_inputs, load  # noqa: E402
from sator_torch.run_graph import run_file  # noqa: E402
from validate_optimized import compare  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def storages_bytes(tensors):
    seen, total = set(), 0
    for t in tensors:
        if isinstance(t, torch.Tensor):
            s = t.untyped_storage()
            if s.data_ptr() not in seen:
                seen.add(s.data_ptr())
                total += s.nbytes()
    return total


def measure(gm, inputs, repeats=5):
    """(outputs of the first run, peak bytes of the second, median ms)."""
    out = gm(*inputs)  # warm-up: kernels, cuBLAS workspace
    torch.cuda.synchronize()
    del out
    gc.collect()
    torch.cuda.empty_cache()
    base = torch.cuda.memory_allocated() - storages_bytes(inputs)
    torch.cuda.reset_peak_memory_stats()
    out = gm(*inputs)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        extra = gm(*inputs)
        end.record()
        torch.cuda.synchronize()
        del extra
        times.append(start.elapsed_time(end))
    return out, peak, statistics.median(times)


def sator_json(sator, *args):
    p = subprocess.run([sator, *args], capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"sator {' '.join(args[:2])}: {(p.stderr or p.stdout).strip()[:300]}")
    return p.stdout


def free():
    gc.collect()
    torch.cuda.empty_cache()


def one(sator, path, tmp, scale):
    name = os.path.basename(path)[:-5]
    opt = os.path.join(tmp, name + ".sator.json")
    rep = os.path.join(tmp, name + ".report.json")
    sator_json(sator, "optimize", path, "-o", opt, "--report", rep, "--chunks", "auto")
    with open(rep) as f:
        report = json.load(f)
    est_in = json.loads(sator_json(sator, "info", "--json", path))["peak_memory"]["peak_bytes"]
    est_out = json.loads(sator_json(sator, "info", "--json", opt))["peak_memory"]["peak_bytes"]
    with open(path) as f:
        low = any(n.get("dtype") in ("bfloat16", "float16") for n in json.load(f)["nodes"])
    row = {"graph": name, "input_scale": scale, "attention_fused": report.get("attention_fused"),
           "chunked": bool(report.get("chunk") and report["chunk"].get("chunked")),
           "layout_ops_in": report.get("layout_ops_in"), "layout_ops_out": report.get("layout_ops_out")}
    a1 = run_file(path, input_scale=scale)
    a2, reference = None, "second run"
    if not low:
        try:
            a2, reference = run_file(path, upcast=True, input_scale=scale), "float64"
        except Exception:  # noqa: BLE001  (ops without a float64 kernel)
            free()
    if a2 is None:
        a2 = run_file(path, input_scale=scale)
    free()
    inputs = example_inputs(path, input_scale=scale)
    a0, peak_in, ms_in = measure(load(path, named_random=True), inputs)
    row["load_check"] = compare(a0, a1, a2, low)
    del a0
    free()
    b, peak_out, ms_out = measure(load(opt, named_random=True), inputs)
    row["check"] = compare(b, a1, a2, low)
    del b, a1, a2, inputs
    free()
    row.update({"reference": reference, "ms_in": round(ms_in, 3), "ms_out": round(ms_out, 3),
                "peak_measured_in": peak_in, "peak_measured_out": peak_out,
                "peak_estimated_in": est_in, "peak_estimated_out": est_out,
                "estimate_error_in": round(est_in / peak_in - 1, 4) if peak_in else None,
                "estimate_error_out": round(est_out / peak_out - 1, 4) if peak_out else None})
    row["ok"] = isinstance(row["check"], float) and isinstance(row["load_check"], float)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("graphs")
    ap.add_argument("out_dir")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--first", nargs="*")
    ap.add_argument("--deadline", type=float, default=1e9, help="seconds; graphs not started by then are skipped")
    ap.add_argument("--input-scale", type=float, default=1.0, help="floating-point inputs from N(0, S^2)")
    a = ap.parse_args()
    sator = find_sator()
    if not sator:
        sys.exit("no sator binary: set $SATOR")
    os.makedirs(a.out_dir, exist_ok=True)
    names = sorted(f for f in os.listdir(a.graphs) if f.endswith(".json"))
    if a.only:
        names = [f for f in names if f[:-5] in a.only]
    if a.first:  # these first, in this order (the rest follow, as time allows)
        names = [f + ".json" for f in a.first if f + ".json" in names] + [f for f in names if f[:-5] not in a.first]
    rows, t_start = [], time.time()
    out_path = os.path.join(a.out_dir, "validate_corpus.json")
    with tempfile.TemporaryDirectory() as tmp:
        for f in names:
            if time.time() - t_start > a.deadline:
                rows.append({"graph": f[:-5], "ok": None, "problem": "not run: past the deadline"})
                continue
            t0 = time.time()
            try:
                row = one(sator, os.path.join(a.graphs, f), tmp, a.input_scale)
            except Exception as e:  # noqa: BLE001  (report, keep going)
                row = {"graph": f[:-5], "ok": False, "problem": f"{type(e).__name__}: {e}"[:400]}
                free()
            row["seconds"] = round(time.time() - t0, 1)
            rows.append(row)
            if "check" in row:
                print(f"{row['graph']:28s} {'ok ' if row['ok'] else 'FAIL'} check {row['check'] if not isinstance(row['check'], float) else round(row['check'], 3)}"
                      f" load {row['load_check'] if not isinstance(row['load_check'], float) else round(row['load_check'], 3)}"
                      f"  {row['ms_in']:.2f} -> {row['ms_out']:.2f} ms  peak {row['peak_measured_in'] / 2**20:.0f} -> "
                      f"{row['peak_measured_out'] / 2**20:.0f} MiB (estimate {row['estimate_error_in']:+.1%} / "
                      f"{row['estimate_error_out']:+.1%}){' chunked' if row['chunked'] else ''}", flush=True)
            else:
                print(f"{row['graph']:28s} FAIL {row.get('problem')}", flush=True)
            with open(out_path, "w") as fh:
                json.dump(rows, fh, indent=1)
    ok = sum(1 for r in rows if r.get("ok"))
    print(f"{ok} of {len(rows)} graphs: sator's output and the loaded original equal the reference")


if __name__ == "__main__":
    main()
