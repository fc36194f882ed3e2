"""What each attention kernel holds in memory, measured: the bytes a forward
keeps for the backward and the transient peak of each phase, per SDPA backend
(flash, cuDNN, efficient), on inputs laid out as transformers makes them
(q, k, v are [B, L, H, D] tensors seen as [B, H, L, D]).

    python3 python/gpu/attention_memory.py OUT.json [--dims 64 128 256] [--seq 1024]

Per point: "kept" (memory held after the forward, beyond the inputs: the
output and what autograd saved), "fwd_peak" and "bwd_peak" (the most held at
once during each phase beyond what was held when it began), all in bytes and
in units of one q tensor, and the output's strides. Why: swapping a training
block's kernels may change the step's peak even where every tensor the graph
names is the same size (issue 38: gemma's bf16 training step grew 15% with
cuDNN's pair).
"""
import argparse
import json

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION}


def point(backend, d, s, batch, heads, causal, dtype):
    g = torch.Generator(device="cuda").manual_seed(0)
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    leaves = [torch.randn(batch, s, heads, d, device="cuda", dtype=dtype, generator=g).requires_grad_(True)
              for _ in range(3)]
    q, k, v = (x.transpose(1, 2) for x in leaves)
    dout = torch.randn(batch, s, heads, d, device="cuda", dtype=dtype, generator=g).transpose(1, 2)
    unit = q.numel() * q.element_size()
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    with sdpa_kernel([BACKENDS[backend]]):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        torch.cuda.synchronize()
        fwd_peak = torch.cuda.max_memory_allocated() - base
        kept = torch.cuda.memory_allocated() - base
        strides = list(out.stride())
        start = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        out.backward(dout)
        torch.cuda.synchronize()
        bwd_peak = torch.cuda.max_memory_allocated() - start
    res = {"backend": backend, "head_dim": d, "seq": s, "batch": batch, "heads": heads, "causal": causal,
           "dtype": str(dtype).replace("torch.", ""), "q_bytes": unit, "out_stride": strides,
           "kept": kept, "fwd_peak": fwd_peak, "bwd_peak": bwd_peak,
           "kept_q": round(kept / unit, 3), "fwd_peak_q": round(fwd_peak / unit, 3), "bwd_peak_q": round(bwd_peak / unit, 3)}
    del out, leaves, q, k, v, dout
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--dims", type=int, nargs="*", default=[64, 128, 256])
    ap.add_argument("--seqs", type=int, nargs="*", default=[1024, 197])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--heads", type=int, default=16)
    a = ap.parse_args()
    points = []
    for s in a.seqs:
        for d in a.dims:
            for causal in (True, False):
                for backend in BACKENDS:
                    try:
                        r = point(backend, d, s, a.batch, a.heads, causal, torch.bfloat16)
                    except Exception as e:  # a backend refusing the point is data
                        r = {"backend": backend, "head_dim": d, "seq": s, "causal": causal,
                             "refused": " ".join(str(e).split())[:200]}
                    points.append(r)
                    print(json.dumps({k: r.get(k) for k in ("backend", "head_dim", "seq", "causal", "kept_q",
                                                            "fwd_peak_q", "bwd_peak_q", "out_stride", "refused")}),
                          flush=True)
    doc = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "cudnn": torch.backends.cudnn.version(), "points": points}
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
