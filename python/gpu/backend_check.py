"""torch.compile(model, backend="sator") on the GPU, as an installed user runs it.

    python3 python/gpu/backend_check.py OUT.json      (run from outside the repository)

A small GPT-2 (2 layers, width 256, 4 heads, batch 8, sequence 512) with
eager attention under bf16 autocast, float32 weights: inference and one
training step, each compiled with backend="sator" (found through the
torch_dynamo_backends entry point `pip install .` wrote) and with
options={"chunk": "auto", "max_autotune": False} (a pass option and an
Inductor setting), against the same model run eagerly. Checks: the sator
module imported is the installed one, the pass ran on every graph and fused
the attention, outputs and gradients agree with eager within bf16's
tolerance, an unknown option is refused, and a missing binary is an error
when the pass is made (strict) and a warning with strict=False.
"""
import json
import sys
import time
import warnings

import torch


def model_and_batch(seed=0):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    cfg = GPT2Config(n_layer=2, n_embd=256, n_head=4, n_positions=512, vocab_size=8192,
                     attn_implementation="eager", resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    model = GPT2LMHeadModel(cfg).cuda()
    ids = torch.randint(0, cfg.vocab_size, (8, 512), device="cuda")
    return model, ids


def loss_of(model, ids):
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(ids).logits
    return torch.nn.functional.cross_entropy(logits.float().view(-1, logits.shape[-1]), ids.view(-1))


def main():
    out_path = sys.argv[1]
    import sator_torch
    from sator_torch import backend as sator_backend

    result = {"sator_torch": sator_torch.__file__, "torch": torch.__version__, "device": torch.cuda.get_device_name()}
    checks = []

    def check(name, ok, detail=""):
        checks.append({"check": name, "ok": bool(ok), "detail": detail})
        print(("ok   " if ok else "FAIL ") + name + (f": {detail}" if detail else ""), flush=True)

    check("sator_torch is the installed package", "site-packages" in sator_torch.__file__, sator_torch.__file__)
    from torch._dynamo.backends.registry import list_backends
    check("backend 'sator' is listed by torch", "sator" in list_backends(exclude_tags=()), "")

    for phase in ("infer", "train"):
        # The second set differs from the defaults (chunk="off",
        # max_autotune=False) in a pass option, so that Inductor's FX graph
        # cache, keyed on the pass's options (InductorPass.uuid), cannot
        # answer it with the first compile's result: the pass must run again.
        # (Options equal to the defaults hit that cache, as they should: the
        # first run of this check asked for {"chunk": "off"} and got the
        # cached graph in 0.7 s, the pass not run.)
        for options in (None, {"chunk": "auto", "max_autotune": False}):
            torch._dynamo.reset()
            model, ids = model_and_batch()
            ref_model, _ = model_and_batch()
            ref_model.load_state_dict(model.state_dict())
            seen = {id(p): len(p.reports) for p in sator_backend.passes()}
            compiled = torch.compile(model, backend="sator", options=options)
            label = f"{phase} options={options}"
            t0 = time.perf_counter()
            if phase == "infer":
                with torch.no_grad():
                    got = loss_of(compiled, ids)
                    want = loss_of(ref_model, ids)
                diff = abs(got.item() - want.item())
                check(f"{label}: loss as eager", diff <= 2e-2 * max(1.0, abs(want.item())), f"|diff| {diff:.2e}")
            else:
                got = loss_of(compiled, ids)
                got.backward()
                want = loss_of(ref_model, ids)
                want.backward()
                worst = 0.0
                for (n, p), q in zip(model.named_parameters(), ref_model.parameters()):
                    scale = q.grad.abs().max().item() or 1.0
                    worst = max(worst, (p.grad - q.grad).abs().max().item() / scale)
                check(f"{label}: loss and gradients as eager", abs(got.item() - want.item()) <= 2e-2 and worst <= 5e-2,
                      f"loss |diff| {abs(got.item() - want.item()):.2e}, worst gradient {worst:.2e} of its max")
            torch.cuda.synchronize()
            reports = [r for p in sator_backend.passes() for r in p.reports[seen.get(id(p), 0):]]
            fused = sum(r.get("attention_fused") or 0 for r in reports)
            check(f"{label}: the pass ran and fused attention", reports and fused >= 2,
                  f"{len(reports)} graph(s), attention fused {fused}, first compile {time.perf_counter() - t0:.1f} s")
            result.setdefault("reports", {})[label] = reports

    torch._dynamo.reset()
    model, ids = model_and_batch()
    try:
        with torch.no_grad():
            loss_of(torch.compile(model, backend="sator", options={"no_such_option": 1}), ids)
        check("an unknown option is refused", False, "it compiled")
    except Exception as e:  # dynamo wraps the backend's error
        check("an unknown option is refused", "no_such_option" in str(e), str(e).splitlines()[0][:200])

    try:
        sator_torch.InductorPass(sator="/nonexistent/sator")
        check("a missing binary is an error when the pass is made", False, "no error")
    except FileNotFoundError as e:
        check("a missing binary is an error when the pass is made", True, str(e)[:200])
    with warnings.catch_warnings(record=True):
        p = sator_torch.InductorPass(sator="/nonexistent/sator", strict=False)
        check("strict=False: a pass without a binary", p.sator is None, "")

    result["checks"] = checks
    result["passed"] = sum(c["ok"] for c in checks)
    result["failed"] = sum(not c["ok"] for c in checks)
    with open(out_path, "w") as f:
        json.dump(result, f, indent=1, default=str)
    print(f"{result['passed']} of {len(checks)} checks passed on {result['device']}")
    return 1 if result["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
