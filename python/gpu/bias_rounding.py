"""How close each way of computing attention with a float32 bias under bf16
autocast comes to the float32 result (issue 41, deliverable 3): the policy
question behind "a float32 term added to 16-bit q·kᵀ under autocast".

    python3 python/gpu/bias_rounding.py OUT.json [--size B H L D] [--seeds N]

Under autocast a model's decomposed block computes the scores q·kᵀ in bf16
(rounded to bf16), adds the float32 bias in float32, runs softmax in float32
and rounds the probabilities to bf16 before P·v. A fused SDPA call takes the
bias as its `attn_mask` in the inputs' dtype: the bias is rounded to bf16,
while q·kᵀ is accumulated in float32 and never rounded. Which one is closer
to the float32 model is a measurement. For each bias shape (per head: [1, H,
L, L]; per batch: [B, 1, L, L]; full: [B, H, L, L]) and magnitude (the
bias's largest absolute value: 0.5 ... 2000; a linear bias on key positions
reaches slope x L, a learned table a few units), with and without a causal
mask, the script computes

  - `reference`: everything in float32 (q, k, v, bias from the same draw);
  - `decomposed`: the autocast graph's arithmetic, step for step;
  - `fused_<backend>`: SDPA on bf16 q, k, v and the bias cast to bf16, with
    each backend that takes an additive mask (efficient, cuDNN, math);

and records ||out - reference|| / ||reference|| (float64), the median over
`--seeds` draws, and the same for the gradients of q, k, v and the bias where
the backend returns the bias's (efficient, math). q, k, v ~ N(0, 1) so the
scores have unit scale after the 1/sqrt(d) scaling; the bias is a smooth
pattern (slopes x relative position, the linear-bias family) scaled to its
magnitude plus N(0, 1) noise of 1% of it (a learned table's roughness).
"""
import argparse
import json
import math
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"efficient": SDPBackend.EFFICIENT_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
            "math": SDPBackend.MATH}
MAGNITUDES = (0.5, 2.0, 8.0, 32.0, 128.0, 512.0, 2000.0)
SHAPES = ("per_head", "per_batch", "full")


def rel(x, ref):
    x, ref = x.double().reshape(-1), ref.double().reshape(-1)
    den = ref.norm().item()
    return (x - ref).norm().item() / (den if den > 0 else 1.0)


def make_bias(shape, B, H, L, magnitude, gen):
    pos = torch.arange(L, device="cuda", dtype=torch.float32)
    rel_pos = pos[None, :] - pos[:, None]  # key - query
    if shape == "per_head":
        dims = (1, H)
    elif shape == "per_batch":
        dims = (B, 1)
    else:
        dims = (B, H)
    slopes = torch.rand(dims[0], dims[1], 1, 1, device="cuda", generator=gen) + 0.5
    smooth = slopes * rel_pos[None, None]
    smooth = smooth / smooth.abs().amax() * magnitude
    noise = torch.randn(smooth.shape, device="cuda", generator=gen) * (0.01 * magnitude)
    return (smooth + noise).contiguous()


def decomposed(q16, k16, v16, bias32, scale, causal):
    """The autocast graph's arithmetic: bf16 scores, float32 bias and softmax,
    bf16 probabilities."""
    s16 = (q16 @ k16.transpose(-2, -1)) * scale  # bf16 matmul, bf16 scale
    s = s16.float() + bias32
    if causal:
        L = s.shape[-1]
        s = s.masked_fill(torch.ones(L, L, device="cuda", dtype=torch.bool).triu(1), float("-inf"))
    p16 = torch.softmax(s, dim=-1).to(torch.bfloat16)
    return p16 @ v16


def causal_mask_into(bias, causal):
    if not causal:
        return bias
    L = bias.shape[-1]
    return bias.masked_fill(torch.ones(L, L, device="cuda", dtype=torch.bool).triu(1), float("-inf"))


def run_point(shape, magnitude, causal, size, seed):
    B, H, L, D = size
    d = D // H
    gen = torch.Generator(device="cuda").manual_seed(seed)
    q, k, v = (torch.randn(B, H, L, d, device="cuda", generator=gen) for _ in range(3))
    bias = make_bias(shape, B, H, L, magnitude, gen)
    dout = torch.randn(B, H, L, d, device="cuda", generator=gen)
    scale = 1 / math.sqrt(d)
    leaves = lambda *ts: [t.detach().clone().requires_grad_(True) for t in ts]  # noqa: E731

    # float32 reference (math path in float64 would be slower and no closer at this size)
    qr, kr, vr, br = leaves(q, k, v, bias)
    with sdpa_kernel(SDPBackend.MATH):
        ref = F.scaled_dot_product_attention(qr, kr, vr, attn_mask=causal_mask_into(br, causal), scale=scale)
    ref.backward(dout)
    want = {"out": ref.detach(), "dq": qr.grad, "dk": kr.grad, "dv": vr.grad, "dbias": br.grad}

    results = {}
    q16, k16, v16 = (t.to(torch.bfloat16) for t in (q, k, v))
    a, b_, c, bb = leaves(q16, k16, v16, bias)
    out = decomposed(a, b_, c, bb, scale, causal)
    out.backward(dout.to(torch.bfloat16))
    results["decomposed"] = {"out": rel(out, want["out"]), "dq": rel(a.grad, want["dq"]), "dk": rel(b_.grad, want["dk"]),
                             "dv": rel(c.grad, want["dv"]), "dbias": rel(bb.grad, want["dbias"])}
    for name, backend in BACKENDS.items():
        a, b_, c = leaves(q16, k16, v16)
        # cuDNN takes a bias only where no gradient of it is needed.
        bb = bias.detach().clone().requires_grad_(name != "cudnn")
        try:
            with sdpa_kernel(backend):
                m16 = causal_mask_into(bb, causal).to(torch.bfloat16)
                out = F.scaled_dot_product_attention(a, b_, c, attn_mask=m16, scale=scale)
                out.backward(dout.to(torch.bfloat16))
        except RuntimeError as e:
            results["fused_" + name] = {"refused": str(e).splitlines()[0][:200]}
            continue
        r = {"out": rel(out, want["out"]), "dq": rel(a.grad, want["dq"]), "dk": rel(b_.grad, want["dk"]),
             "dv": rel(c.grad, want["dv"])}
        if bb.grad is not None:
            r["dbias"] = rel(bb.grad, want["dbias"])
        results["fused_" + name] = r
    # The bias left in float32 beside bf16 q, k, v: whether a kernel takes it
    # so (then fusing rounds nothing the decomposed block keeps).
    for name in ("efficient", "math"):
        a, b_, c = leaves(q16, k16, v16)
        bb = bias.detach().clone().requires_grad_(True)
        try:
            with sdpa_kernel(BACKENDS[name]):
                out = F.scaled_dot_product_attention(a, b_, c, attn_mask=causal_mask_into(bb, causal), scale=scale)
                out.backward(dout.to(torch.bfloat16))
        except RuntimeError as e:
            results["fused_" + name + "_f32_bias"] = {"refused": str(e).splitlines()[0][:200]}
            continue
        results["fused_" + name + "_f32_bias"] = {"out": rel(out, want["out"]), "dq": rel(a.grad, want["dq"]),
                                                  "dk": rel(b_.grad, want["dk"]), "dv": rel(c.grad, want["dv"])}
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--size", nargs=4, type=int, default=[8, 12, 512, 768], metavar=("B", "H", "L", "D"))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="two magnitudes, one shape (a smoke test)")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("bias_rounding.py: needs a CUDA GPU")
    torch.backends.cuda.matmul.allow_tf32 = False  # the reference is float32, not TF32
    shapes = SHAPES[:1] if a.quick else SHAPES
    mags = MAGNITUDES[::3] if a.quick else MAGNITUDES
    points = []
    for shape in shapes:
        for causal in (False, True):
            for mag in mags:
                per_seed = [run_point(shape, mag, causal, a.size, 1000 + s) for s in range(a.seeds)]
                med = {}
                for variant in per_seed[0]:
                    if "refused" in per_seed[0][variant]:
                        med[variant] = per_seed[0][variant]
                        continue
                    med[variant] = {q: statistics.median(p[variant][q] for p in per_seed) for q in per_seed[0][variant]}
                points.append({"shape": shape, "causal": causal, "magnitude": mag, "errors": med})
                dec = med["decomposed"]["out"]
                fused = {v: e["out"] for v, e in med.items() if v.startswith("fused_") and "out" in e}
                print(f"{shape:9s} causal={int(causal)} |bias|={mag:7.1f}  decomposed {dec:.2e}  " +
                      "  ".join(f"{v[6:]} {e:.2e}" for v, e in fused.items()), flush=True)
    doc = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "size": a.size, "seeds": a.seeds,
           "points": points}
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
