"""Run every corpus graph and sator's optimization of it on the same inputs
and compare their outputs. Usage:

    python3 python/validate_optimized.py ORIGINAL_DIR OPTIMIZED_DIR [OUT.json]

Float outputs must agree to a relative error (‖a − b‖ / ‖b‖, in float64)
under 2e-4 for float32 graphs (recomposed matmuls and fused attention sum in
another order than bmm and the decomposed softmax) and 2e-2 for graphs that
compute in 16-bit types, or under three times the original's own run-to-run difference where
that is larger (bf16 backward kernels that accumulate with atomics differ by
1-2e-2 between two runs of the same graph); integer and bool outputs exactly. TF32 is off so that
float32 matmuls are float32.
"""
import gc
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sator_torch.run_graph import run_file  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def rel_err(x, y):
    """‖x − y‖ / ‖y‖, with ‖y‖ floored at an RMS of 1e-4 per element: some
    outputs are zero in exact arithmetic (the gradient of attention's key bias:
    softmax ignores a shift along a row) and hold only rounding noise, against
    which a relative error means nothing."""
    xd, yd = torch.nan_to_num(x.double()), torch.nan_to_num(y.double())
    denom = max(yd.norm().item(), 1e-4 * max(yd.numel(), 1) ** 0.5)
    return (xd - yd).norm().item() / denom


def compare(b, a1, a2, low_precision):
    """Compares the optimized outputs b with the original's a1. a2 is a
    reference for how far a1 itself may be off: a second run of the original
    (nondeterministic bf16 backward kernels), or better its float64 run (some
    outputs are zero in exact arithmetic, like the gradient of attention's key
    bias, and hold only rounding noise). Three times a1's own distance from a2
    is allowed. Returns the worst relative error, or what differs."""
    if len(b) != len(a1):
        return f"{len(b)} outputs vs {len(a1)}"
    worst = 0.0  # the largest error over its tolerance
    for i, (x, y, y2) in enumerate(zip(b, a1, a2)):
        if x is None or y is None:
            if (x is None) != (y is None):
                return f"output {i}: None vs a value"
            continue
        if not isinstance(x, torch.Tensor):
            if x != y:
                return f"output {i}: {x} vs {y}"
            continue
        if x.shape != y.shape or x.dtype != y.dtype:
            return f"output {i}: {tuple(x.shape)} {x.dtype} vs {tuple(y.shape)} {y.dtype}"
        if not x.dtype.is_floating_point:
            if not torch.equal(x, y) and torch.equal(y, y2):
                return f"output {i}: integer values differ"
            continue
        if not torch.equal(torch.isnan(x), torch.isnan(y)):
            return f"output {i}: NaN in one only"
        err = rel_err(x, y)
        base = 2e-2 if low_precision or x.dtype not in (torch.float32, torch.float64) else 2e-4
        tol = max(base, 3 * rel_err(y, y2))
        if err > tol:
            return f"output {i}: relative error {err:.3e} over {tol:.3e}"
        worst = max(worst, err / tol)
    return worst


def detail(a, b):
    """Per-output relative errors (for investigating a failure)."""
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if isinstance(x, torch.Tensor) and x.dtype.is_floating_point and x.shape == y.shape:
            d = y.double().norm().item()
            out.append((i, str(x.dtype), tuple(x.shape), (x.double() - y.double()).norm().item() / (d or 1.0)))
    return out


def main():
    if sys.argv[1] == "--detail":  # --detail ORIGINAL OPTIMIZED: original twice, then against the optimized
        a1, a2, b = run_file(sys.argv[2]), run_file(sys.argv[2]), run_file(sys.argv[3])
        for (i, dt, shape, e_self), (_, _, _, e_opt) in zip(detail(a2, a1), detail(b, a1)):
            print(f"output {i:3d} {dt:15s} {str(shape):24s} original vs itself {e_self:.3e}  optimized vs original {e_opt:.3e}")
        return
    original_dir, optimized_dir = sys.argv[1], sys.argv[2]
    out_path = sys.argv[3] if len(sys.argv) > 3 else None
    rows, failures = [], 0
    for name in sorted(os.listdir(optimized_dir)):
        if not name.endswith(".json"):
            continue
        t0 = time.time()
        reference = "none"
        try:
            with open(os.path.join(original_dir, name)) as f:
                low = any(n.get("dtype") in ("bfloat16", "float16") for n in json.load(f)["nodes"])
            a1 = run_file(os.path.join(original_dir, name))
            a2, reference = None, "second run"
            if not low:  # the float64 reference; some ops (cuDNN attention) have no float64 kernel
                try:
                    a2, reference = run_file(os.path.join(original_dir, name), upcast=True), "float64"
                except Exception:
                    gc.collect()
                    torch.cuda.empty_cache()
            if a2 is None:
                a2 = run_file(os.path.join(original_dir, name))
            b = run_file(os.path.join(optimized_dir, name))
            torch.cuda.synchronize()
            verdict = compare(b, a1, a2, low)
        except Exception as e:  # report, keep going
            verdict = f"error: {type(e).__name__}: {e}"[:300]
        ok = isinstance(verdict, float)
        failures += not ok
        rows.append({"graph": name[:-5], "ok": ok, "worst_error_over_tolerance": verdict if ok else None,
                     "reference": reference,
                     "problem": None if ok else verdict, "seconds": round(time.time() - t0, 2)})
        shown = f"worst error / tolerance {verdict:.3f}" if ok else verdict
        print(f"{name[:-5]:30s} {'ok' if ok else 'FAIL'}  {shown}  (reference: {reference})", flush=True)
        torch.cuda.empty_cache()
    print(f"{len(rows) - failures} passed, {failures} failed")
    if out_path:
        with open(out_path, "w") as f:
            json.dump(rows, f, indent=1)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
