"""One zoo row in its own process: an architecture, a setup, a phase.

    python3 python/gpu/zoo_row.py ARCH SETUP PHASE OUT.json [--size full|tiny] [--iters 50]
        [--graphs DIR] [--cache-check]

Builds the transformers model from its config with random weights (seed 0;
dropout probabilities set to 0 so that the variants can be compared value by
value), then in this one process:
  1. the float32 eager reference (a float32 copy of the same weights, no autocast);
  2. torch.compile + sator_torch.InductorPass (compiled first, so plain
     torch.compile's compile gets any warm cache, not sator's), then plain
     torch.compile: compile time (the first call; training: forward and
     backward), what the pass did (its reports, its own time), and the
     outputs (inference: logits; training: loss, gradient norm, every gradient)
     against each other and the reference;
  3. latency (inference) or step time (training: forward, backward, AdamW),
     the median of --iters calls per variant after warm-up, the two
     interleaved (ABAB, BABA, ...), CUDA events; then each one's peak CUDA
     memory over one call;
  4. with --cache-check: Dynamo reset, the sator variant compiled again: its
     compile time and Inductor's FX graph / AOTAutograd cache counters.
Each variant compiles a function of its own (distinct code objects), so
Dynamo never hands one variant the other's compiled code.

With --graphs, every joint graph the pass is handed is kept
(DIR/graphs/NAME.gK.json), with sator's output and report beside it
(DIR/sator/), and what Inductor's own joint passes make of the same graph in
plain torch.compile (DIR/inductor/NAME.gK.json): corpus/zoo's layout.

The GPU phases (reference, timing, memory) hold the lock file named by
$ZOO_GPU_LOCK when it is set, so that rows run in parallel by zoo.py compile
side by side but never time on a shared GPU.
"""
import argparse
import contextlib
import copy
import fcntl
import json
import os
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))

from zoo_models import ARCHS, SETUPS, SIZES, config_kwargs, graph_name, judge_equal  # noqa: E402


@contextlib.contextmanager
def gpu_lock():
    path = os.environ.get("ZOO_GPU_LOCK")
    if not path:
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def zero_dropout(cfg):
    """Every dropout probability of the config to 0 (the variants are compared
    value by value; a dropout mask drawn twice would differ)."""
    changed = []
    for k, v in list(vars(cfg).items()):
        if isinstance(v, float) and v > 0 and ("dropout" in k or "pdrop" in k or "drop_prob" in k):
            setattr(cfg, k, 0.0)
            changed.append(k)
    return changed


def build(arch, setup, size):
    import torch
    import transformers

    cfg_name, model_name, kind, kwargs = ARCHS[arch]
    if not hasattr(transformers, cfg_name) or not hasattr(transformers, model_name):
        raise LookupError(f"transformers {transformers.__version__} has no {cfg_name}/{model_name}")
    dtype, _, attn = SETUPS[setup]
    s = SIZES[size]
    cfg = getattr(transformers, cfg_name)(**config_kwargs(arch, s))
    dropped = zero_dropout(cfg)
    cfg._attn_implementation = attn
    torch.manual_seed(0)
    model = getattr(transformers, model_name)(cfg)
    model.to(device="cuda", dtype=getattr(torch, dtype))
    g = torch.Generator(device="cuda").manual_seed(1)
    if kind == "vision":
        b = s["image_batch"]
        inputs = {"pixel_values": torch.randn(b, 3, s["image"], s["image"], device="cuda", generator=g,
                                              dtype=getattr(torch, dtype))}
        labels = torch.randint(0, cfg.num_labels, (b,), device="cuda", generator=g)
    else:
        b, n = s["batch"], s["seq"]
        ids = torch.randint(0, cfg.vocab_size, (b, n), device="cuda", generator=g)
        inputs = {"input_ids": ids}
        if kind == "masked":  # padding on every other sequence, as a batch of real text has
            mask = torch.ones(b, n, dtype=torch.long, device="cuda")
            mask[::2, n - n // 8:] = 0
            inputs["attention_mask"] = mask
        labels = torch.randint(0, cfg.vocab_size, (b, n), device="cuda", generator=g)
    info = {"params": sum(p.numel() for p in model.parameters()), "config": cfg_name, "model": model_name,
            "kind": kind, "dropout_zeroed": dropped,
            "layers": getattr(cfg, "num_hidden_layers", None), "hidden": getattr(cfg, "hidden_size", None),
            "heads": getattr(cfg, "num_attention_heads", None), "vocab": getattr(cfg, "vocab_size", None),
            "attn_implementation": getattr(cfg, "_attn_implementation", None),
            "inputs": {k: list(v.shape) for k, v in inputs.items()}}
    return model, inputs, labels, info


def make_fn(tag, phase):
    """A function of its own (a fresh code object): Dynamo caches per code object."""
    import torch.nn.functional as F

    if phase == "infer":
        src = f"def run_{tag}(model, inputs, labels):\n    return model(**inputs).logits\n"
    else:
        src = (f"def run_{tag}(model, inputs, labels):\n"
               "    logits = model(**inputs).logits\n"
               "    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), labels.reshape(-1))\n")
    ns = {"F": F}
    exec(compile(src, f"<zoo {tag}>", "exec"), ns)
    return ns[f"run_{tag}"]


def take_grads(tensors):
    """The gradients of `tensors` (float32, flattened, concatenated; a zero
    where none has one), each tensor's gradient then cleared."""
    import torch

    tensors = list(tensors)
    grads = [t.grad.detach().float().flatten() for t in tensors if t.grad is not None]
    for t in tensors:
        t.grad = None
    return torch.cat(grads) if grads else torch.zeros(1, device="cuda")


def rel_err(x, ref, rows=1 << 22):
    """||x - ref|| / ||ref|| in float64, a slice of `rows` elements at a time:
    a whole large-vocabulary logits tensor in float64 (gemma: 2G elements,
    16 GiB) does not fit beside the model on a shared GPU."""
    x, ref = x.reshape(-1), ref.reshape(-1)
    num = den = 0.0
    for i in range(0, ref.numel(), rows):
        a, b = x[i:i + rows].double(), ref[i:i + rows].double()
        num += (a - b).square().sum().item()
        den += b.square().sum().item()
    return num ** 0.5 / (den ** 0.5 if den > 0 else 1.0)


class Row:
    def __init__(self, a):
        import torch

        self.a = a
        self.arch, self.setup, self.phase = a.arch, a.setup, a.phase
        self.model, self.inputs, self.labels, self.info = build(a.arch, a.setup, a.size)
        _, self.autocast, _ = SETUPS[a.setup]
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-5) if a.phase == "train" else None
        if a.phase == "train":
            self.model.train()
        else:
            self.model.eval()

    def amp(self):
        import torch

        return torch.autocast("cuda", dtype=torch.bfloat16) if self.autocast else contextlib.nullcontext()

    def call(self, fn):
        """One call: inference logits, or a training loss with its backward done."""
        import torch

        if self.phase == "infer":
            with torch.no_grad(), self.amp():
                return fn(self.model, self.inputs, self.labels)
        with self.amp():
            loss = fn(self.model, self.inputs, self.labels)
        loss.backward()
        return loss

    def step(self, fn):
        out = self.call(fn)
        if self.opt is not None:
            self.opt.step()
            self.opt.zero_grad(set_to_none=True)
        return out

    def values(self, out, model=None):
        """What is compared: logits, or loss, gradient norm and all gradients (float32, flattened)."""
        model = model or self.model
        if self.phase == "infer":
            return {"logits": out.detach().float()}
        flat = take_grads(model.parameters())
        return {"loss": out.detach().float().reshape(1), "grad_norm": flat.norm().reshape(1), "grads": flat}

    def reference(self):
        """The float32 eager values on a float32 copy of the same weights."""
        import torch

        ref_model = copy.deepcopy(self.model).float()
        inputs = {k: (v.float() if v.is_floating_point() else v) for k, v in self.inputs.items()}
        fn = make_fn("ref", self.phase)
        if self.phase == "infer":
            with torch.no_grad():
                out = fn(ref_model, inputs, self.labels)
        else:
            out = fn(ref_model, inputs, self.labels)
            out.backward()
        vals = self.values(out, ref_model)
        del ref_model
        torch.cuda.empty_cache()
        return vals


def compile_variant(row, name, pass_obj, graphs_dir):
    """Compiles and runs the variant once; (fn, result dict, compared values)."""
    import torch
    import torch._inductor.config as ic

    res = {"variant": name}
    fn = torch.compile(make_fn(name, row.phase))
    patch = {}
    recorder = None
    if pass_obj is not None:
        patch["joint_custom_pre_pass"] = pass_obj
    elif graphs_dir:
        recorder = InductorRecorder()
        patch["joint_custom_post_pass"] = recorder
    t0 = time.perf_counter()
    try:
        with ic.patch(patch):
            out = row.call(fn)
            torch.cuda.synchronize()
    except Exception as e:  # the row records it; the other variant still runs
        res["raised"] = f"{type(e).__name__}: {e}"[:2000]
        res["traceback"] = traceback.format_exc()[-4000:]
        return None, res, None
    res["compile_s"] = round(time.perf_counter() - t0, 3)
    if recorder is not None:
        res["recorder_s"] = round(recorder.seconds, 3)
        res["compile_s"] = round(res["compile_s"] - recorder.seconds, 3)
        res["inductor_graphs"] = recorder.docs
    vals = row.values(out)
    return fn, res, vals


def InductorRecorder():
    """joint_custom_post_pass: the graph as Inductor's own joint passes leave it
    (a CustomGraphPass, so that it has the uuid Inductor's cache asks for)."""
    from torch._inductor.custom_graph_pass import CustomGraphPass

    class Recorder(_Recording, CustomGraphPass):
        pass

    return Recorder()


class _Recording:
    def __init__(self):
        self.docs, self.seconds = [], 0.0

    def __call__(self, graph):
        from sator_torch.graph_doc import graph_to_doc

        t0 = time.perf_counter()
        self.docs.append(graph_to_doc(graph, graph.owning_module, f"g{len(self.docs)}",
                                      {"stage": "after_inductor_joint_passes"}))
        self.seconds += time.perf_counter() - t0

    def uuid(self):
        return "zoo-inductor-recorder"


def interleaved_times(step, fns, iters):
    """{name: [ms, ...]}: `step(fn)` of each variant per round, CUDA events
    around each, the order reversed every other round."""
    import torch

    names = list(fns)
    times = {n: [] for n in names}
    for i in range(iters):
        for n in (names if i % 2 == 0 else names[::-1]):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            step(fns[n])
            e.record()
            e.synchronize()
            times[n].append(s.elapsed_time(e))
    return times


def time_variants(row, fns, iters, warmup=5):
    import torch

    names = list(fns)
    for _ in range(warmup):
        for n in names:
            row.step(fns[n])
    torch.cuda.synchronize()
    times = interleaved_times(row.step, fns, iters)
    peaks = {}
    for n in names:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        row.step(fns[n])
        torch.cuda.synchronize()
        peaks[n] = (torch.cuda.max_memory_allocated() / 2**20, base / 2**20)
    return times, peaks


def profile_variants(row, fns, out_dir, key, steps=3):
    """torch.profiler's CUDA kernel table for each variant over `steps` steps:
    OUT_DIR/KEY.VARIANT.txt (the table) and, returned, each variant's 25
    costliest kernels (name, calls, total ms per step)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    os.makedirs(out_dir, exist_ok=True)
    summary = {}
    for n, fn in fns.items():
        row.step(fn)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(steps):
                row.step(fn)
            torch.cuda.synchronize()
        avg = prof.key_averages()
        attr = "device_time_total" if hasattr(avg[0], "device_time_total") else "cuda_time_total"
        kernels = sorted((e for e in avg if getattr(e, attr) > 0), key=lambda e: -getattr(e, attr))
        with open(os.path.join(out_dir, f"{key}.{n}.txt"), "w") as f:
            f.write(avg.table(sort_by=attr, row_limit=60, max_name_column_width=100))
        summary[n] = [{"kernel": e.key[:120], "calls": e.count // steps, "ms": round(getattr(e, attr) / 1e3 / steps, 4)}
                      for e in kernels[:25]]
        summary[n + "_total_ms"] = round(sum(getattr(e, attr) for e in kernels) / 1e3 / steps, 4)
    return summary


def attention_counts(doc):
    """(attention softmaxes, fused attention kernels) in a graph document:
    softmaxes over the last dim of a rank >= 3 tensor (amax or _softmax;
    only the forward has them) and forward SDPA-family ops."""
    if not doc:
        return None, None
    shapes = {n["name"]: n.get("shape") for n in doc["nodes"]}
    soft = fused = 0
    for n in doc["nodes"]:
        op = n["op"]
        if op in ("aten.amax.default", "aten._softmax.default", "aten._safe_softmax.default"):
            src = n["args"][0].get("node") if isinstance(n["args"][0], dict) else None
            shape = shapes.get(src) or []
            if len(shape) >= 3:
                soft += 1
        elif "scaled_dot_product" in op and "backward" not in op:
            fused += 1
    return soft, fused


def save_graphs(row, out_dir, keep_dir, pass_obj, plain_res):
    """Copies the kept graphs under their corpus names; returns the names."""
    name = graph_name(row.arch, row.setup, row.phase, row.a.size)
    source = {"model": row.arch, "setup": row.setup, "phase": row.phase, "size": row.a.size,
              "attn": SETUPS[row.setup][2], "weights": SETUPS[row.setup][0], "autocast_bf16": SETUPS[row.setup][1],
              "via": "zoo.py (InductorPass input)"}
    saved = []
    for sub in ("graphs", "sator", "inductor"):
        os.makedirs(os.path.join(out_dir, sub), exist_ok=True)
    for r in pass_obj.reports:
        k = r["graph"]
        stem = os.path.join(keep_dir, f"joint{k}")
        if not os.path.exists(stem + ".json"):
            continue
        with open(stem + ".json") as f:
            doc = json.load(f)
        doc["name"] = f"{name}.g{k}"
        doc["source"] = dict(doc.get("source") or {}, **source)
        with open(os.path.join(out_dir, "graphs", doc["name"] + ".json"), "w") as f:
            json.dump(doc, f, separators=(",", ":"))
        saved.append(doc["name"])
        for suffix in (".sator.json", ".report.json"):
            if os.path.exists(stem + suffix):
                os.replace(stem + suffix, os.path.join(out_dir, "sator", doc["name"] + suffix))
    for k, doc in enumerate((plain_res or {}).pop("inductor_graphs", []) or []):
        doc["name"] = f"{name}.g{k}"
        doc["source"] = dict(doc.get("source") or {}, **source)
        doc["source"]["via"] = "zoo.py (plain torch.compile)"
        with open(os.path.join(out_dir, "inductor", doc["name"] + ".json"), "w") as f:
            json.dump(doc, f, separators=(",", ":"))
    return saved


def cache_check(row, pass_obj):
    """Dynamo reset, the sator variant compiled again: FX graph / AOTAutograd cache counters."""
    import torch
    import torch._inductor.config as ic
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    before = {k: dict(v) for k, v in counters.items() if k in ("inductor", "aot_autograd")}
    calls_before = len(pass_obj.reports)
    fn = torch.compile(make_fn("sator_again", row.phase))
    t0 = time.perf_counter()
    with ic.patch({"joint_custom_pre_pass": pass_obj}):
        row.step(fn)
        torch.cuda.synchronize()
    after = {k: dict(v) for k, v in counters.items() if k in ("inductor", "aot_autograd")}
    delta = {}
    for k, d in after.items():
        for c, v in d.items():
            if "cache" in c and v != before.get(k, {}).get(c, 0):
                delta[f"{k}.{c}"] = v - before.get(k, {}).get(c, 0)
    return {"compile_again_s": round(time.perf_counter() - t0, 3), "counters": delta,
            "pass_called_again": len(pass_obj.reports) - calls_before, "uuid": pass_obj.uuid()}


def run(a):
    import torch
    from sator_torch.inductor_pass import InductorPass, find_sator
    if not find_sator():  # the row would measure plain torch.compile twice
        raise RuntimeError("sator did not run: no binary found (set $SATOR)")

    result = {"row": f"{a.arch}/{a.setup}/{a.phase}", "arch": a.arch, "setup": a.setup, "phase": a.phase,
              "size": a.size, "iters": a.iters, "torch": torch.__version__}
    import transformers
    result["transformers"] = transformers.__version__
    try:
        row = Row(a)
    except LookupError as e:
        result.update(status="missing", reason=str(e))
        return result
    except Exception as e:
        if "does not support an attention implementation" in str(e):
            # The installed transformers has no such attention for this
            # architecture (GPT-J, GPT-Neo and MPT have no sdpa path): the
            # row does not exist, it did not fail.
            result.update(status="missing", reason=f"transformers: {str(e).split('. Please')[0]}"[:500])
            return result
        result.update(status="failed", reason=f"building the model: {type(e).__name__}: {e}"[:2000])
        return result
    result["model"] = row.info
    with gpu_lock():
        ref = row.reference()
    keep = os.path.join(a.graphs, "keep", f"{a.arch}.{a.setup}.{a.phase}") if a.graphs else None
    options = {} if a.phase == "infer" else {"chunk": a.chunk}
    # Experiments: more `sator optimize` arguments for the pass (e.g.
    # "--without-rule sdpa-call-training"), recorded in the row.
    extra = os.environ.get("ZOO_SATOR_EXTRA", "").split()
    p = InductorPass(keep_dir=keep, verbose=False, extra=extra, **options)
    result["pass_options"] = {"chunk": p.chunk, "target": p.target, "decline_without_gain": p.decline_without_gain,
                              "extra": extra}
    fns, vals = {}, {}
    fn, result["sator"], vals["sator"] = compile_variant(row, "sator", p, None)
    if fn is not None:
        fns["sator"] = fn
    fn, result["plain"], vals["plain"] = compile_variant(row, "plain", None, a.graphs)
    if fn is not None:
        fns["plain"] = fn
    result["pass_reports"] = p.reports
    result["pass_s"] = round(sum(r.get("pass_ms", 0) for r in p.reports) / 1e3, 3)
    result["declined"] = [r["skipped"] for r in p.reports if r.get("skipped")]
    if a.graphs:
        result["graphs"] = save_graphs(row, a.graphs, keep, p, result["plain"])
        docs_in, docs_out = [], []
        for name in result["graphs"]:
            with open(os.path.join(a.graphs, "graphs", name + ".json")) as f:
                docs_in.append(json.load(f))
            out_path = os.path.join(a.graphs, "sator", name + ".sator.json")
            docs_out.append(json.load(open(out_path)) if os.path.exists(out_path) else None)
        present = [attention_counts(d) for d in docs_in]
        after = [attention_counts(d) for d in docs_out]
        result["attention"] = {"softmax_in": sum(x[0] or 0 for x in present),
                               "sdpa_in": sum(x[1] or 0 for x in present),
                               "softmax_out": sum((x[0] or 0) for x in after if x[0] is not None),
                               "sdpa_out": sum((x[1] or 0) for x in after if x[1] is not None),
                               "declined_graphs": sum(1 for d in docs_out if d is None),
                               "fused_in_compile": sum(r.get("attention_fused") or 0 for r in p.reports
                                                       if not r.get("skipped"))}
    result["plain"].pop("inductor_graphs", None)
    # Equality: each variant against the float32 reference, and sator against plain.
    eq = {}
    if vals.get("sator") is not None and vals.get("plain") is not None:
        errs = {}
        for k in ref:
            e_s, e_p = rel_err(vals["sator"][k], ref[k]), rel_err(vals["plain"][k], ref[k])
            ok, why = judge_equal(a.setup, e_s, e_p)
            errs[k] = {"sator_vs_ref": e_s, "plain_vs_ref": e_p, "sator_vs_plain": rel_err(vals["sator"][k],
                                                                                          vals["plain"][k])}
            eq[k] = {"equal": ok, "reason": why}
        result["errors"] = errs
        if a.phase == "train":
            result["loss"] = {k: vals[k]["loss"].item() for k in ("sator", "plain")}
            result["loss"]["ref"] = ref["loss"].item()
            result["grad_norm"] = {k: vals[k]["grad_norm"].item() for k in ("sator", "plain")}
            result["grad_norm"]["ref"] = ref["grad_norm"].item()
    result["equal"] = eq
    del vals, ref
    torch.cuda.empty_cache()
    if fns:
        with gpu_lock():
            times, peaks = time_variants(row, fns, a.iters)
        for n in fns:
            result[n]["median_ms"] = statistics.median(times[n])
            result[n]["times_ms"] = [round(t, 4) for t in times[n]]
            result[n]["peak_mib"], result[n]["base_mib"] = peaks[n]
        if "sator" in fns and "plain" in fns:
            result["speedup"] = result["plain"]["median_ms"] / result["sator"]["median_ms"]
            result["memory_ratio"] = result["sator"]["peak_mib"] / result["plain"]["peak_mib"]
        if a.profile:
            with gpu_lock():
                result["profile"] = profile_variants(row, fns, a.profile, result["row"].replace("/", "."))
    if a.cache_check and "sator" in fns:
        fns.clear()
        try:
            result["cache_check"] = cache_check(row, p)
        except Exception as e:
            result["cache_check"] = {"raised": f"{type(e).__name__}: {e}"[:1000]}
    result["status"] = "raised" if (result["sator"].get("raised") or result["plain"].get("raised")) else "ok"
    if any("no sator binary" in (x.get("skipped") or "") for x in result.get("pass_reports") or []):
        result["status"], result["reason"] = "failed", "sator did not run: no binary found ($SATOR)"
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("arch", choices=sorted(ARCHS))
    ap.add_argument("setup", choices=sorted(SETUPS))
    ap.add_argument("phase", choices=("infer", "train"))
    ap.add_argument("out")
    ap.add_argument("--size", default="full", choices=sorted(SIZES))
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--graphs", help="keep every joint graph here (corpus/zoo layout)")
    ap.add_argument("--chunk", default="off", help="InductorPass chunk= for training rows (its default: off)")
    ap.add_argument("--cache-check", action="store_true")
    ap.add_argument("--profile", help="write each variant's CUDA kernel table (torch.profiler) here")
    a = ap.parse_args()
    t0 = time.perf_counter()
    try:
        result = run(a)
    except Exception as e:  # anything else: still one line of result
        result = {"row": f"{a.arch}/{a.setup}/{a.phase}", "status": "failed",
                  "reason": f"{type(e).__name__}: {e}"[:2000], "traceback": traceback.format_exc()[-4000:]}
    result["wall_s"] = round(time.perf_counter() - t0, 1)
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1, default=str)
    brief = {k: result.get(k) for k in ("row", "status", "speedup", "memory_ratio", "pass_s", "attention", "wall_s")}
    print("zoo_row:", json.dumps(brief, default=str), flush=True)


if __name__ == "__main__":
    main()
