"""Which attention kernel is fastest, measured: the calibration grid behind
sator's kernel choice (issue 38, docs/cost-model.md "Attention kernels").

    python3 python/gpu/attention_calibrate.py OUT.json [--device h100|h200] [--quick]

Times each SDPA backend PyTorch has on this GPU (flash, cuDNN, efficient,
math), each pinned with `sdpa_kernel`, over a grid of dtype (bf16, fp16,
fp32), head dim (64, 128), sequence length (512, 1024, 2048), mask kind
(none, is_causal, an additive [B, 1, L, L] mask, an additive bias whose
gradient is needed), dropout (0, 0.1) and phase (forward without grad;
forward + backward). A backend that refuses a point is recorded with its
reason: that is data (flash takes no mask, cuDNN no float32).

Each point: the backends interleaved, CUDA events around `--calls`
back-to-back calls, the median of `--rounds` rounds; inputs N(0, 1), never
zeros. Writes one JSON document: the device, torch's version and the points
({"dtype", "head_dim", "seq", "batch", "heads", "mask", "dropout", "phase",
"flops", "ms": {backend: median ms}, "refused": {backend: reason},
"default": the backend PyTorch's dispatch picks}).
"""
import argparse
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {
    "flash": SDPBackend.FLASH_ATTENTION,
    "cudnn": SDPBackend.CUDNN_ATTENTION,
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
    "math": SDPBackend.MATH,
}
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
MASKS = ("none", "causal", "additive", "bias_grad")


def grid(quick):
    """(dtype, head_dim, seq, mask, dropout, phase), the zoo's setup first."""
    dtypes = ("bf16", "fp32") if quick else ("bf16", "fp32", "fp16")
    dims = (64,) if quick else (64, 128)
    seqs = (1024,) if quick else (1024, 2048, 512)
    for dt in dtypes:
        for d in dims:
            for s in seqs:
                if dt == "fp16" and (s != 1024 or d != 64):
                    continue  # fp16 at the zoo's size only: bf16 is what users autocast to
                for phase in ("fwd", "fwd_bwd"):
                    for mask in MASKS:
                        if mask == "bias_grad" and phase == "fwd":
                            continue
                        for p in ((0.0,) if phase == "fwd" else (0.0, 0.1)):
                            if p and mask == "bias_grad":
                                continue
                            yield dt, d, s, mask, p, phase


def timed(fn, calls):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / calls


def default_backend(q, k, v, kw):
    """Which kernel the default dispatch runs for these inputs (the profiler's kernel names)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        with torch.no_grad():
            F.scaled_dot_product_attention(q, k, v, **kw)
        torch.cuda.synchronize()
    names = " ".join(e.name.lower() for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
    for tag, backend in (("cudnn", "cudnn"), ("flash", "flash"), ("fmha", "efficient"), ("attention_kernel", "efficient"),
                         ("cutlass", "efficient")):
        if tag in names:
            return backend
    return "math" if names else None


def measure(dt, d, s, mask, p, phase, a):
    batch, heads = a.batch, a.heads
    dtype = DTYPES[dt]
    g = torch.Generator(device="cuda").manual_seed(0)
    shape = (batch, heads, s, d)
    grad = phase == "fwd_bwd"
    q, k, v = (torch.randn(shape, device="cuda", dtype=dtype, generator=g).requires_grad_(grad) for _ in range(3))
    dout = torch.randn(shape, device="cuda", dtype=dtype, generator=g)
    kw = {"dropout_p": p, "scale": d ** -0.5}
    if mask == "causal":
        kw["is_causal"] = True
    elif mask in ("additive", "bias_grad"):
        keep = torch.ones(s, s, device="cuda", dtype=torch.bool).tril()
        m = torch.zeros(batch if mask == "additive" else 1, 1 if mask == "additive" else heads, s, s,
                        device="cuda", dtype=dtype)
        if mask == "additive":
            m.masked_fill_(~keep, torch.finfo(dtype).min)
        else:
            m.normal_(generator=g)
            m.requires_grad_(True)
        kw["attn_mask"] = m
    flops = 4.0 * batch * heads * s * s * d * (3.5 if grad else 1.0)  # backward: 2.5x the forward's matmuls

    def call(backend):
        def run():
            with sdpa_kernel([backend]):
                if not grad:
                    with torch.no_grad():
                        return F.scaled_dot_product_attention(q, k, v, **kw)
                out = F.scaled_dot_product_attention(q, k, v, **kw)
                out.backward(dout)
        return run

    fns, refused = {}, {}
    for name, backend in BACKENDS.items():
        if name == "math" and s * s * batch * heads * 4 > a.math_limit:
            refused[name] = "not run: the materialised scores exceed --math-limit"
            continue
        fn = call(backend)
        try:
            fn()
            fn()
            torch.cuda.synchronize()
            fns[name] = fn
        except Exception as e:  # a backend refusing the point is data
            refused[name] = " ".join(str(e).split())[:200]
            torch.cuda.synchronize()
    times = {n: [] for n in fns}
    for r in range(a.rounds):
        order = list(fns) if r % 2 == 0 else list(fns)[::-1]
        for n in order:
            times[n].append(timed(fns[n], a.calls))
    point = {"dtype": dt, "head_dim": d, "seq": s, "batch": batch, "heads": heads, "mask": mask, "dropout": p,
             "phase": phase, "flops": flops, "ms": {n: round(statistics.median(t), 5) for n, t in times.items()},
             "spread": {n: round((max(t) - min(t)) / statistics.median(t), 3) for n, t in times.items()},
             "refused": refused}
    if not grad and p == 0.0:
        point["default"] = default_backend(q, k, v, kw)
    del q, k, v, dout, kw
    torch.cuda.empty_cache()
    return point


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--device", help="the table's device name (default: from the GPU's name)")
    ap.add_argument("--quick", action="store_true", help="the zoo's point only (bf16/fp32, d 64, L 1024)")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--deadline", type=float, default=None, help="stop starting points after this many seconds")
    ap.add_argument("--math-limit", type=float, default=4 * 2**30, help="bytes of fp32 scores the math backend may make")
    a = ap.parse_args()
    name = torch.cuda.get_device_name()
    device = a.device or ("h200" if "H200" in name else "h100" if "H100" in name else name.lower().replace(" ", "_"))
    doc = {"device": device, "gpu": name, "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
           "batch": a.batch, "heads": a.heads, "rounds": a.rounds, "calls": a.calls, "points": []}
    t0 = time.time()
    for point in grid(a.quick):
        if a.deadline is not None and time.time() - t0 > a.deadline:
            doc["cut_at_deadline"] = True
            break
        r = measure(*point, a)
        doc["points"].append(r)
        best = min(r["ms"], key=r["ms"].get) if r["ms"] else None
        print(json.dumps({k: r[k] for k in ("dtype", "head_dim", "seq", "mask", "dropout", "phase", "ms")} |
                         {"best": best, "default": r.get("default")}), flush=True)
        with open(a.out, "w") as f:  # a killed run keeps what it measured
            json.dump(doc, f, indent=1)
    print(f"attention_calibrate: {len(doc['points'])} points in {time.time() - t0:.0f} s on {name}", file=sys.stderr)


if __name__ == "__main__":
    main()
