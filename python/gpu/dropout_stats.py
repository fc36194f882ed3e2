"""Issue 25 item 5: attention with dropout, fused inside torch.compile by
sator_torch.InductorPass (the kernel draws its own mask), is equal in
distribution to the decomposed block it replaced.

    python3 python/gpu/dropout_stats.py OUT.json [--seeds 256] [--batch 8] [--seq 512] [--fp32]

One causal attention block written as eager-attention models write it (q·kᵀ
scaled, the causal mask, softmax, dropout p = 0.1, ·v, an output
projection), in training mode under bf16 autocast (--fp32: without). Variants, each run once
per seed (torch.manual_seed(seed)) on the same input and the same fixed
loss L = sum(out · R):
  eager        the decomposed block, PyTorch's own dropout (the reference)
  sator        torch.compile with InductorPass (fuse_dropout=True, the default)
  eager_p012   the decomposed block with p = 0.12: a negative control that the
               statistics must tell apart (they can fail)
For each element of the output and of the input's gradient dL/dx, the mean
and the variance over seeds: z_mean = (m_a - m_b) / sqrt(v_a/n + v_b/n) and
z_var = (v_a - v_b) / sqrt(se(v_a)^2 + se(v_b)^2) (se of a sample variance from
the fourth moment, dropout's outputs are not normal). Under equal
distributions each z has mean 0 and mean square 1 whatever the elements'
correlation; the verdict asks mean(z^2) within 1 +- 0.15 for sator against
eager, and above 1.5 for the control.
"""
import argparse
import json
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


class Block(nn.Module):
    def __init__(self, dim, heads, p):
        super().__init__()
        self.heads, self.p = heads, p
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d // self.heads)
        # The causal triangle from positions, as transformers builds it (iota
        # comparisons the rules read as is_causal).
        pos = torch.arange(s, device=x.device)
        causal = pos[None, :] <= pos[:, None]
        # Added as a bias of zeros and the dtype's minimum, as transformers'
        # attention masks are (masked_fill's backward writes a `where` on the
        # scores' gradient that the training rule does not read yet).
        scores = scores + torch.where(causal, 0.0, torch.finfo(scores.dtype).min).to(scores.dtype)
        probs = F.dropout(F.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype), self.p, self.training)
        out = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, d)
        return self.proj(out)


class Moments:
    """Running sums of x, x^2, x^3, x^4 per element, in float64."""

    def __init__(self, like):
        self.n = 0
        self.s = [torch.zeros_like(like, dtype=torch.float64) for _ in range(4)]

    def add(self, x):
        x = x.detach().double()
        self.n += 1
        p = x
        for i in range(4):
            self.s[i] += p
            p = p * x

    def stats(self):
        n = self.n
        m = self.s[0] / n
        m2, m3, m4 = self.s[1] / n, self.s[2] / n, self.s[3] / n
        var_pop = (m2 - m * m).clamp_min(0)
        var = var_pop * n / (n - 1)
        mu4 = (m4 - 4 * m * m3 + 6 * m * m * m2 - 3 * m ** 4).clamp_min(0)
        var_of_var = ((mu4 - var_pop ** 2 * (n - 3) / (n - 1)) / n).clamp_min(1e-30)
        return m, var, var_of_var


def compare(a, b):
    ma, va, vva = a.stats()
    mb, vb, vvb = b.stats()
    live = (va + vb) > 1e-20  # elements dropout never touches have no spread
    z_mean = ((ma - mb) / torch.sqrt(va / a.n + vb / b.n).clamp_min(1e-30))[live]
    z_var = ((va - vb) / torch.sqrt(vva + vvb))[live]
    return {"elements": int(live.sum()), "mean_z2_mean": float((z_mean ** 2).mean()),
            "mean_z2_var": float((z_var ** 2).mean()), "mean_z_mean": float(z_mean.mean()),
            "frac_abs_z_mean_gt_4": float((z_mean.abs() > 4).float().mean())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seeds", type=int, default=256)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=512)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--fp32", action="store_true", help="float32 throughout (default: bf16 autocast)")
    a = ap.parse_args()
    dev = "cuda"
    torch.manual_seed(0)
    block = Block(a.dim, a.heads, 0.1).to(dev).train()
    x0 = torch.randn(a.batch, a.seq, a.dim, device=dev)
    r = torch.randn(a.batch, a.seq, a.dim, device=dev)

    from sator_torch.inductor_pass import InductorPass
    import torch._inductor.config as ic
    keep = os.environ.get("SATOR_KEEP_DIR")
    sator_pass = InductorPass(keep_dir=keep, verbose=False)

    def step(fn):
        x = x0.clone().requires_grad_(True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=not a.fp32):
            out = fn(x)
        loss = (out.float() * r).sum()
        loss.backward()
        return out.float(), x.grad

    torch._dynamo.reset()
    with ic.patch(joint_custom_pre_pass=sator_pass):
        compiled = torch.compile(block)
        step(compiled)  # compile once, outside the seeds
    control = Block(a.dim, a.heads, 0.12).to(dev).train()
    control.load_state_dict(block.state_dict())
    variants = {"eager": block, "sator": compiled, "eager_p012": control}
    moments = {k: None for k in variants}
    t0 = time.time()
    for seed in range(a.seeds):
        for name, fn in variants.items():  # interleaved: every seed runs each variant
            # The control draws from seeds of its own: on the reference's seeds
            # its masks would be the reference's, nearly (rand > 0.12 against
            # rand > 0.1), and the z statistics assume independent samples.
            torch.manual_seed(1000 + seed + (10**6 if name == "eager_p012" else 0))
            block.zero_grad(set_to_none=True)
            control.zero_grad(set_to_none=True)
            out, gx = step(fn)
            if moments[name] is None:
                moments[name] = (Moments(out), Moments(gx))
            moments[name][0].add(out)
            moments[name][1].add(gx)
    fused = sum(rep.get("attention_fused") or 0 for rep in sator_pass.reports if not rep.get("skipped"))
    res = {"seeds": a.seeds, "shape": [a.batch, a.seq, a.dim, a.heads], "dropout_p": 0.1,
           "autocast_bf16": not a.fp32,
           "device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "sator_reports": [{k: v for k, v in rep.items() if k in ("graph", "attention_fused", "skipped", "declined")}
                             for rep in sator_pass.reports],
           "sator_attention_fused": fused, "seconds": round(time.time() - t0, 1)}
    for other in ("sator", "eager_p012"):
        res[f"{other}_vs_eager"] = {"output": compare(moments[other][0], moments["eager"][0]),
                                    "grad_x": compare(moments[other][1], moments["eager"][1])}
    ok_sator = all(abs(res["sator_vs_eager"][w][s] - 1) <= 0.15 for w in ("output", "grad_x")
                   for s in ("mean_z2_mean", "mean_z2_var"))
    ok_control = all(res["eager_p012_vs_eager"][w]["mean_z2_var"] > 1.5 or
                     res["eager_p012_vs_eager"][w]["mean_z2_mean"] > 1.5 for w in ("output", "grad_x"))
    res["verdict"] = {"sator_equal_in_distribution": ok_sator, "control_told_apart": ok_control,
                      "sator_fused_dropout_attention": fused > 0}
    json.dump(res, open(a.out, "w"), indent=1)
    print(json.dumps(res, indent=1))
    sys.exit(0 if ok_sator and ok_control and fused > 0 else 1)


if __name__ == "__main__":
    main()
