"""Attention with an additive bias, each form a model family writes (issue 41),
through torch.compile with and without sator's InductorPass.

    python3 python/gpu/bias_forms.py OUT_DIR [--forms F ...] [--setups fp32 bf16] [--phases infer train]
                                     [--size B H L D] [--iters N]

The forms are tiny modules written from the issue's descriptions (no model's
code): a per-head linear bias on key positions folded into the scores by
baddbmm, then a causal masked_fill (`linear_bias`); content-to-position and
position-to-content terms gathered by relative distance from a position
embedding, scaled by 1/sqrt(3d), with a padding mask (`disentangled`); a
learned bucketed relative-position table shared by two encoder layers on
unscaled scores, a decoder's causal self-attention with it and a
cross-attention with a padding mask (`bucketed`); a mask built by `where`
from a constant 0-d tensor and the dtype's minimum, added to 16-bit scores
(`constant_mask`).

For each form x setup (fp32: float32; bf16: float32 weights under bf16
autocast) x phase (infer: no grad; train: forward and backward of a scalar
loss), the float32 eager reference, plain torch.compile and torch.compile with
InductorPass (kept graphs under OUT_DIR/keep/FORM.SETUP.PHASE) run on the same
weights and inputs; outputs and every gradient are compared with the
reference (the zoo's tolerances, python/gpu/zoo_models.judge_equal), and the
compiled variants are timed interleaved (CUDA events, medians). Training rows
add a third variant, the pass with --no-training-attention-bias (a bias goes
only to the cuDNN pair, the default before the weighing): the policy
measured. Writes
OUT_DIR/bias_forms.json: per row the pass's reports (attention fused,
--explain-attention's reasons), errors, times.
"""
import argparse
import copy
import json
import math
import os
import statistics
import sys
import time
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from sator_torch.inductor_pass import InductorPass, find_sator  # noqa: E402
from zoo_models import judge_equal  # noqa: E402
from zoo_row import interleaved_times, rel_err, take_grads  # noqa: E402


class Projections(nn.Module):
    def __init__(self, D, H):
        super().__init__()
        self.H, self.d = H, D // H
        self.q, self.k, self.v, self.o = (nn.Linear(D, D) for _ in range(4))

    def heads(self, lin, x):  # [B, L, D] -> [B, H, L, d]
        B, L, _ = x.shape
        return lin(x).view(B, L, self.H, self.d).transpose(1, 2)

    def merge(self, y):  # [B, H, L, d] -> [B, L, D]
        B, H, L, d = y.shape
        return self.o(y.transpose(1, 2).reshape(B, L, H * d))


class LinearBias(Projections):
    """Per-head slopes times the key's position, added to the scaled scores
    by baddbmm over [B*H, L, L], then the causal positions filled with the
    dtype's minimum."""

    def __init__(self, D, H):
        super().__init__(D, H)
        self.register_buffer("slopes", 2.0 ** (-8.0 * torch.arange(1, H + 1) / H), persistent=False)

    def forward(self, x, pad):
        B, L, _ = x.shape
        H, d = self.H, self.d
        q = self.heads(self.q, x).reshape(B * H, L, d)
        k = self.heads(self.k, x).reshape(B * H, L, d)
        v = self.heads(self.v, x)
        keys = torch.arange(L, device=x.device, dtype=torch.float32)
        bias = (self.slopes[:, None] * keys[None, :])[None, :, None, :].expand(B, H, 1, L).reshape(B * H, 1, L)
        scores = torch.baddbmm(bias.to(q.dtype), q, k.transpose(1, 2), beta=1.0, alpha=1.0 / math.sqrt(d))
        scores = scores.view(B, H, L, L)
        later = torch.ones(L, L, dtype=torch.bool, device=x.device).triu(1)
        scores = scores.masked_fill(later, torch.finfo(scores.dtype).min)
        p = F.softmax(scores, dim=-1, dtype=torch.float32).to(v.dtype)
        return self.merge(torch.matmul(p, v))


class Disentangled(Projections):
    """Content scores plus content-to-position and position-to-content terms
    gathered by clamped relative distance from a learned position embedding
    (projected by the layer's own query and key maps), all scaled by
    1/sqrt(3d); keys masked by padding."""

    def __init__(self, D, H, span=32):
        super().__init__(D, H)
        self.span = span
        self.positions = nn.Parameter(torch.randn(2 * span, D) * 0.02)

    def forward(self, x, pad):
        B, L, _ = x.shape
        H, d, s = self.H, self.d, self.span
        q, k, v = self.heads(self.q, x), self.heads(self.k, x), self.heads(self.v, x)
        pk = self.k(self.positions).view(2 * s, H, d).permute(1, 2, 0)  # [H, d, 2s]
        pq = self.q(self.positions).view(2 * s, H, d).permute(1, 2, 0)
        i = torch.arange(L, device=x.device)
        rel = (i[:, None] - i[None, :]).clamp(-s, s - 1) + s  # [L, L] in [0, 2s)
        index = rel[None, None].expand(B, H, L, L)
        c2p = torch.gather(torch.matmul(q, pk), -1, index)
        p2c = torch.gather(torch.matmul(k, pq), -1, index.transpose(-1, -2)).transpose(-1, -2)
        scores = (torch.matmul(q, k.transpose(-1, -2)) + c2p + p2c) / math.sqrt(3 * d)
        scores = scores.masked_fill(~pad[:, None, None, :], torch.finfo(scores.dtype).min)
        p = F.softmax(scores, dim=-1, dtype=torch.float32).to(v.dtype)
        return self.merge(torch.matmul(p, v))


def bucket(rel, bidirectional, buckets=32, far=128):
    """Relative distance to a bucket: exact near, logarithmic far."""
    n = buckets // 2 if bidirectional else buckets
    out = (rel > 0).long() * n if bidirectional else torch.zeros_like(rel)
    dist = rel.abs() if bidirectional else (-rel).clamp(min=0)
    exact = n // 2
    log = exact + (torch.log(dist.float().clamp(min=1) / exact) / math.log(far / exact) * (n - exact)).long()
    return out + torch.where(dist < exact, dist, log.clamp(max=n - 1))


class BucketedAttention(Projections):
    """Unscaled scores plus a bias (the shared position bias, a mask or both)."""

    def forward(self, x, memory, bias):
        q, k, v = self.heads(self.q, x), self.heads(self.k, memory), self.heads(self.v, memory)
        scores = torch.matmul(q, k.transpose(-1, -2)) + bias
        p = F.softmax(scores.float(), dim=-1).type_as(scores)
        return self.merge(torch.matmul(p, v))


class Bucketed(nn.Module):
    """An encoder of two layers sharing one bucketed position-bias table
    (padding mask added), a decoder layer: causal self-attention with its own
    table, then cross-attention to the encoder with the padding mask alone."""

    def __init__(self, D, H):
        super().__init__()
        self.H = H
        self.enc_table = nn.Embedding(32, H)
        self.dec_table = nn.Embedding(32, H)
        self.enc = nn.ModuleList([BucketedAttention(D, H) for _ in range(2)])
        self.self_attn, self.cross = BucketedAttention(D, H), BucketedAttention(D, H)

    def position_bias(self, table, L, bidirectional, device):
        i = torch.arange(L, device=device)
        return table(bucket(i[None, :] - i[:, None], bidirectional)).permute(2, 0, 1)[None]  # [1, H, L, L]

    def forward(self, x, pad):
        B, L, _ = x.shape
        lowest = torch.finfo(x.dtype).min
        padding = (1.0 - pad[:, None, None, :].to(x.dtype)) * lowest  # [B, 1, 1, L]
        bias = self.position_bias(self.enc_table, L, True, x.device) + padding
        h = x
        for layer in self.enc:
            h = h + layer(h, h, bias)
        causal = torch.full((L, L), lowest, device=x.device).triu(1)[None, None]
        y = x + self.self_attn(x, x, self.position_bias(self.dec_table, L, False, x.device) + causal)
        return y + self.cross(y, h, padding)


class ConstantMask(Projections):
    """A mask built by where() from a constant 0-d tensor and the minimum,
    added to the scaled (16-bit under autocast) scores, cast back."""

    def forward(self, x, pad):
        L = x.shape[1]
        q, k, v = self.heads(self.q, x), self.heads(self.k, x), self.heads(self.v, x)
        keep = pad[:, None, None, :] & torch.ones(L, L, dtype=torch.bool, device=x.device).tril()[None, None]
        mask = torch.where(keep, torch.tensor(0.0, device=x.device), torch.finfo(torch.float32).min)
        scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(self.d))
        scores = (scores + mask).to(q.dtype)
        p = F.softmax(scores, dim=-1, dtype=torch.float32).to(v.dtype)
        return self.merge(torch.matmul(p, v))


FORMS = {"linear_bias": LinearBias, "disentangled": Disentangled, "bucketed": Bucketed,
         "constant_mask": ConstantMask}


def make_fn(tag, phase):
    """A fresh code object per variant: Dynamo caches per code object."""
    body = "    return model(x, pad)\n" if phase == "infer" else "    return model(x, pad).float().square().mean()\n"
    ns = {}
    exec(compile(f"def run_{tag}(model, x, pad):\n{body}", f"<bias_forms {tag}>", "exec"), ns)
    return ns[f"run_{tag}"]


class Row:
    def __init__(self, form, setup, phase, size):
        torch.manual_seed(0)
        B, H, L, D = size
        self.form, self.setup, self.phase = form, setup, phase
        self.model = FORMS[form](D, H).cuda()
        self.model.train(phase == "train")
        self.x = torch.randn(B, L, D, device="cuda")
        self.pad = torch.ones(B, L, dtype=torch.bool, device="cuda")
        self.pad[: B // 2, L - L // 4:] = False  # half the batch padded
        if phase == "train":
            self.x.requires_grad_(True)

    def amp(self):
        import contextlib
        return torch.autocast("cuda", dtype=torch.bfloat16) if self.setup == "bf16" else contextlib.nullcontext()

    def call(self, fn, model=None):
        model = model or self.model
        if self.phase == "infer":
            with torch.no_grad(), self.amp():
                return fn(model, self.x, self.pad)
        with self.amp():
            loss = fn(model, self.x, self.pad)
        loss.backward()
        return loss

    def values(self, out, model=None):
        model = model or self.model
        if self.phase == "infer":
            return {"out": out.detach().float()}
        return {"loss": out.detach().float().reshape(1), "grads": take_grads(list(model.parameters()) + [self.x])}

    def reference(self):
        model = copy.deepcopy(self.model)
        if self.phase == "infer":
            with torch.no_grad():
                out = make_fn("ref", "infer")(model, self.x, self.pad)
        else:
            out = make_fn("ref", "train")(model, self.x, self.pad)
            out.backward()
        return self.values(out, model)


def run_row(form, setup, phase, args, out_dir):
    import torch._inductor.config as ic

    tag = f"{form}.{setup}.{phase}"
    res = {"row": tag}
    torch._dynamo.reset()  # each row compiles afresh (the recompile limit is per code object)
    row = Row(form, setup, phase, args.size)
    ref = row.reference()
    keep = os.path.join(out_dir, "keep", tag)
    passes = {"sator": InductorPass(keep_dir=keep, verbose=False, extra=["--explain-attention"])}
    if phase == "train" and args.bias_variant:
        # The training policy's other side: the efficient kernels left out
        # (a bias only to the cuDNN pair), measured rather than assumed.
        passes["sator_cudnn_only"] = InductorPass(keep_dir=keep + ".cudnn_only", verbose=False,
                                                  extra=["--explain-attention", "--no-training-attention-bias"])
    p = passes["sator"]
    fns, vals = {}, {}
    for name, pass_obj in list(passes.items()) + [("plain", None)]:
        fn = torch.compile(make_fn(f"{name}_{form}_{setup}_{phase}", phase))
        t0 = time.perf_counter()
        try:
            with ic.patch({"joint_custom_pre_pass": pass_obj} if pass_obj else {}):
                out = row.call(fn)
                torch.cuda.synchronize()
        except Exception as e:
            res[name] = {"raised": f"{type(e).__name__}: {e}"[:1500], "traceback": traceback.format_exc()[-3000:]}
            continue
        res[name] = {"compile_s": round(time.perf_counter() - t0, 3)}
        fns[name], vals[name] = fn, row.values(out)
    for name, pass_obj in passes.items():
        res[name + "_reports"] = pass_obj.reports
        for r in pass_obj.reports:  # --explain-attention's listing, from the kept report
            kept = os.path.join(pass_obj.keep_dir, f"joint{r['graph']}.report.json")
            if os.path.exists(kept):
                with open(kept) as f:
                    r["attention_blocks"] = json.load(f).get("attention_blocks")
    eq = {}
    for name in passes:
        for k in ref:
            if name in vals and "plain" in vals:
                e_s, e_p = rel_err(vals[name][k], ref[k]), rel_err(vals["plain"][k], ref[k])
                ok, why = judge_equal("amp-sdpa" if setup == "bf16" else "fp32-sdpa", e_s, e_p)
                eq[f"{name}.{k}"] = {"sator_vs_ref": e_s, "plain_vs_ref": e_p, "equal": ok, "reason": why}
    res["equal"] = eq
    if "plain" in fns and len(fns) >= 2:
        for _ in range(3):
            for n in fns:
                row.call(fns[n])
        times = interleaved_times(row.call, fns, args.iters)
        for n in fns:
            res[n]["ms"] = statistics.median(times[n])
        res["speedup"] = {n: res["plain"]["ms"] / res[n]["ms"] for n in fns if n != "plain"}
    for name, pass_obj in passes.items():
        fused = sum(r.get("attention_fused") or 0 for r in pass_obj.reports if not r.get("skipped"))
        why = {b.get("why") for r in pass_obj.reports for b in (r.get("attention_blocks") or []) if not b.get("fused")}
        ok = all(v["equal"] for k, v in eq.items() if k.startswith(name + ".")) if eq else None
        print(f"{tag:30s} {name:10s} fused {fused}  equal {ok}  speedup {res.get('speedup', {}).get(name, float('nan')):.3f}  "
              + ("; ".join(str(r.get("skipped") or "") for r in pass_obj.reports if r.get("skipped")) + " | "
                 + " / ".join(sorted(str(w) for w in why)))[:400], flush=True)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--forms", nargs="+", default=list(FORMS), choices=list(FORMS))
    ap.add_argument("--setups", nargs="+", default=["fp32", "bf16"], choices=["fp32", "bf16"])
    ap.add_argument("--phases", nargs="+", default=["infer", "train"], choices=["infer", "train"])
    ap.add_argument("--size", nargs=4, type=int, default=[8, 12, 512, 768], metavar=("B", "H", "L", "D"))
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--no-bias-variant", dest="bias_variant", action="store_false",
                    help="training rows: leave out the variant with --no-training-attention-bias")
    args = ap.parse_args()
    if not find_sator():
        sys.exit("no sator binary (set $SATOR)")
    torch.backends.cuda.matmul.allow_tf32 = False
    import torch._inductor.config as ic
    ic.fx_graph_cache = False  # every compile runs the pass
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for form in args.forms:
        for setup in args.setups:
            for phase in args.phases:
                try:
                    rows.append(run_row(form, setup, phase, args, args.out))
                except Exception as e:
                    rows.append({"row": f"{form}.{setup}.{phase}", "failed": f"{type(e).__name__}: {e}"[:1500],
                                 "traceback": traceback.format_exc()[-3000:]})
                    print(f"{form}.{setup}.{phase}: failed: {e}", flush=True)
                torch.cuda.empty_cache()
                # Written after every row: a call cut at its time limit keeps what ran.
                doc = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "size": args.size,
                       "rows": rows}
                with open(os.path.join(args.out, "bias_forms.json"), "w") as f:
                    json.dump(doc, f, indent=1, default=str)


if __name__ == "__main__":
    main()
