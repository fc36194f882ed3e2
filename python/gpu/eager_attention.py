"""A transformers model with eager (unfused) attention, inference under
torch.compile with and without sator_torch.InductorPass.

    python3 python/gpu/eager_attention.py OUT.json [--layers 12] [--batch 8] [--seq 1024]

GPT-2 small (attn_implementation="eager"), random weights, bf16, no_grad.
Both compiles run in this process on the same inputs: latency is the median
of 30 runs after 5 warm-up runs (CUDA events), and the logits of the two are
compared (relative error; bf16 tolerance 2e-2).
"""
import argparse
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def latency(fn, ids, runs=30):
    for _ in range(5):
        fn(ids)
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn(ids)
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times), times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=1024)
    a = ap.parse_args()
    import torch._inductor.config as ic
    import transformers
    from sator_torch.inductor_pass import InductorPass

    torch.manual_seed(0)
    cfg = transformers.GPT2Config(n_layer=a.layers)
    cfg._attn_implementation = "eager"
    model = transformers.GPT2LMHeadModel(cfg).cuda().eval().to(torch.bfloat16)
    ids = torch.randint(0, cfg.vocab_size, (a.batch, a.seq), device="cuda")

    def run(x):
        with torch.no_grad():
            return model(x).logits

    result = {"model": "gpt2", "attn": "eager", "layers": a.layers, "batch": a.batch, "seq": a.seq, "dtype": "bfloat16"}
    result["eager_ms"], _ = latency(run, ids)
    torch._dynamo.reset()
    plain = torch.compile(run)
    ref = plain(ids).float()
    result["compile_ms"], result["compile_all"] = latency(plain, ids)
    torch._dynamo.reset()
    p = InductorPass(chunk="off")
    ic.joint_custom_pre_pass = p
    with_sator = torch.compile(run)
    out = with_sator(ids).float()
    result["sator_ms"], result["sator_all"] = latency(with_sator, ids)
    ic.joint_custom_pre_pass = None
    result["rel_error"] = ((out - ref).norm() / ref.norm()).item()
    result["equal_within_bf16"] = result["rel_error"] < 2e-2
    result["pass_reports"] = p.reports
    result["speedup"] = result["compile_ms"] / result["sator_ms"]
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1, default=str)
    print(f"eager attention GPT-2: eager {result['eager_ms']:.2f} ms, torch.compile {result['compile_ms']:.2f} ms, "
          f"with InductorPass {result['sator_ms']:.2f} ms ({result['speedup']:.2f}x); logits rel. error "
          f"{result['rel_error']:.2e}; attention fused {[r.get('attention_fused') for r in p.reports]}", flush=True)


if __name__ == "__main__":
    main()
