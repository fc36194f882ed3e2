"""Which SDPA kernel is fastest on this GPU for the zoo's attention shapes.

Times F.scaled_dot_product_attention per backend (default dispatch, flash,
efficient, cuDNN), causal without a mask and with an explicit boolean or
additive mask, forward and forward+backward, bf16. Variants interleaved,
median of CUDA-event timings. Prints one JSON line per case.
Usage: python3 sdpa_backends.py [--batch 8 --heads 16 --seq 1024 --dim 64]
"""
import argparse
import json
import statistics

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {
    "default": None,
    "flash": SDPBackend.FLASH_ATTENTION,
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
    "cudnn": SDPBackend.CUDNN_ATTENTION,
}


def timed(fn, reps):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / reps


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--rounds", type=int, default=15)
    a = p.parse_args()
    dev = "cuda"
    shape = (a.batch, a.heads, a.seq, a.dim)
    q, k, v = (torch.randn(shape, device=dev, dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    causal = torch.ones(a.seq, a.seq, device=dev, dtype=torch.bool).tril()
    additive = torch.zeros(a.batch, 1, a.seq, a.seq, device=dev, dtype=torch.bfloat16)
    additive.masked_fill_(~causal, float("-inf"))
    masks = {"is_causal": dict(is_causal=True), "bool_mask": dict(attn_mask=causal),
             "additive_mask": dict(attn_mask=additive)}
    for mode in ("fwd", "fwd_bwd"):
        for mask_name, kw in masks.items():
            fns = {}
            for name, backend in BACKENDS.items():
                def call(backend=backend, kw=kw):
                    if mode == "fwd":
                        with torch.no_grad():
                            return F.scaled_dot_product_attention(q, k, v, **kw)
                    out = F.scaled_dot_product_attention(q, k, v, **kw)
                    out.sum().backward()
                def run(backend=backend, call=call):
                    if backend is None:
                        return call()
                    with sdpa_kernel([backend]):
                        return call()
                try:
                    run(); torch.cuda.synchronize()
                    fns[name] = run
                except Exception as e:  # a backend refusing the case is data
                    print(json.dumps({"mode": mode, "mask": mask_name, "backend": name,
                                      "error": str(e).splitlines()[0][:160]}))
            times = {n: [] for n in fns}
            for _ in range(a.rounds):
                for n, fn in fns.items():
                    times[n].append(timed(fn, 10))
            for n, t in times.items():
                print(json.dumps({"mode": mode, "mask": mask_name, "backend": n,
                                  "ms_median": round(statistics.median(t), 4)}))
    # which kernel the default dispatch picks, from the profiler
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        with torch.no_grad():
            for kw in masks.values():
                F.scaled_dot_product_attention(q, k, v, **kw)
        torch.cuda.synchronize()
    names = sorted({e.name[:90] for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})
    print(json.dumps({"default_kernels": names}))
    print(json.dumps({"torch": torch.__version__, "gpu": torch.cuda.get_device_name()}))


if __name__ == "__main__":
    main()
