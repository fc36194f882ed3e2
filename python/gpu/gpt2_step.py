"""One GPT-2 training-step configuration under torch.compile (corpus/README.md's setup).

    python3 python/gpu/gpt2_step.py CONFIG OUT.json [--layers 12] [--batch 16] [--seq 1024] [--steps 10]

CONFIG: plain (torch.compile alone), autochunk8 / autochunk64 (Inductor's
AutoChunker with that many chunks), sator (sator_torch.InductorPass:
attention fusion where the graph has unfused attention, and --chunk auto),
sator8 (InductorPass with --chunk 8), satoroff (InductorPass without chunking).
GPT-2 (GPT2LMHeadModel from its default config: 124M parameters), random
weights (seed 0), bf16 autocast, AdamW, F.cross_entropy on the logits;
the compiled function is the model plus the loss. Step time: median over
STEPS steps after 3 warm-up steps (CUDA synchronised, wall clock); peak:
torch.cuda.max_memory_allocated over the timed steps. The first step's loss
and the gradient norm after it are recorded so that configurations can be
checked against each other. The third warm-up step is split at the
backward to record what the forward keeps for it and each half's peak.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def configure(config):
    import torch._inductor.config as ic
    info = {}
    if config.startswith("autochunk"):
        n = int(config[len("autochunk"):])
        ac = ic.auto_chunker
        ac.enable = True
        knobs = ["num_chunk"]
        for k in ("num_chunk",):  # torch 2.11: auto_chunker.num_chunk (None: its own choice, 8)
            if k in knobs:
                setattr(ac, k, n)
                info["chunks_set_by"] = k
                break
    elif config.startswith("sator"):
        from sator_torch.inductor_pass import InductorPass
        chunk = config[len("sator"):] or "auto"  # sator, sator8, satoroff
        p = InductorPass(chunk=chunk, keep_dir=os.environ.get("SATOR_KEEP_DIR"))
        ic.joint_custom_pre_pass = p
        info["pass"] = p
    return info


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("config")
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--attn", default="sdpa")
    ap.add_argument("--memory-budget", type=float, default=None,
                    help="torch._functorch.config.activation_memory_budget: the partitioner recomputes "
                         "activations to keep this fraction of what it would save (1.0: its default)")
    ap.add_argument("--arch", default="gpt2", choices=("gpt2", "llama-vocab128k"),
                    help="llama-vocab128k: the zoo's vocab128k Llama (4 layers, hidden 1024, vocabulary 128,256); "
                         "pass --batch 2 --seq 2048 for issue 25's step")
    a = ap.parse_args()
    import transformers
    info = configure(a.config)
    if a.memory_budget is not None:
        import torch._functorch.config as fc
        fc.activation_memory_budget = a.memory_budget
        info["activation_memory_budget"] = a.memory_budget
    torch.manual_seed(0)
    if a.arch == "gpt2":
        cfg = transformers.GPT2Config(n_layer=a.layers)
        model_cls = transformers.GPT2LMHeadModel
    else:
        from zoo_models import SIZES, config_kwargs
        cfg = transformers.LlamaConfig(**config_kwargs("llama", SIZES["vocab128k"]))
        model_cls = transformers.LlamaForCausalLM
    cfg._attn_implementation = a.attn
    model = model_cls(cfg).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    g = torch.Generator(device="cuda")
    g.manual_seed(1)
    ids = torch.randint(0, cfg.vocab_size, (a.batch, a.seq), device="cuda", generator=g)
    labels = torch.randint(0, cfg.vocab_size, (a.batch, a.seq), device="cuda", generator=g)

    def loss_fn(ids, labels):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(ids).logits
            return F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))

    compiled = torch.compile(loss_fn)
    result = {"config": a.config, "arch": a.arch, "layers": a.layers if a.arch == "gpt2" else cfg.num_hidden_layers,
              "batch": a.batch, "seq": a.seq, "attn": a.attn, "vocab": cfg.vocab_size}
    t0 = time.time()
    times = []
    for step in range(3 + a.steps):
        if step == 3:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        torch.cuda.synchronize()
        if step == 2:  # a warm-up step split in two: what the forward keeps for the backward, and each half's peak
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            loss = compiled(ids, labels)
            torch.cuda.synchronize()
            result["forward_kept_mib"] = (torch.cuda.memory_allocated() - base) / 2**20
            result["forward_peak_mib"] = (torch.cuda.max_memory_allocated() - base) / 2**20
            torch.cuda.reset_peak_memory_stats()
            loss.backward()
            torch.cuda.synchronize()
            result["backward_peak_mib"] = (torch.cuda.max_memory_allocated() - base) / 2**20
            result["before_step_mib"] = base / 2**20
        s = time.perf_counter()
        if step != 2:
            loss = compiled(ids, labels)
            loss.backward()
        if step == 0:
            result["first_loss"] = loss.item()
            result["first_grad_norm"] = torch.sqrt(sum((p.grad.float() ** 2).sum() for p in model.parameters()
                                                       if p.grad is not None)).item()
            result["compile_and_first_step_s"] = round(time.time() - t0, 1)
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        if step >= 3:
            times.append((time.perf_counter() - s) * 1e3)
    result["step_ms"] = statistics.median(times)
    result["step_ms_all"] = [round(t, 3) for t in times]
    result["peak_mib"] = torch.cuda.max_memory_allocated() / 2**20
    for k, v in info.items():
        result[k] = v.reports if k == "pass" else v
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1, default=str)
    print(f"{a.config:12s} step {result['step_ms']:.1f} ms  peak {result['peak_mib']:.0f} MiB  "
          f"loss {result['first_loss']:.4f}  grad norm {result['first_grad_norm']:.4f}  "
          f"(held before {result['before_step_mib']:.0f}, forward keeps {result['forward_kept_mib']:.0f}, "
          f"peaks fwd {result['forward_peak_mib']:.0f} bwd {result['backward_peak_mib']:.0f} MiB over it)", flush=True)


if __name__ == "__main__":
    main()
