"""Times every node of sator.graph files on the GPU, and each whole graph in
eager mode, for calibrating sator's roofline cost model (docs/cost-model.md).

  python3 python/calibrate_costs.py OUT.json GRAPH.json...

Arguments are decoded once (references to earlier nodes are looked up at
call time), so what is timed is PyTorch's own eager dispatch and kernels,
not the decoding. Per node: CUDA-event time of REPEAT back-to-back calls of
the node alone on the values of a full run, divided by REPEAT (median of 5
such measurements): its steady-state eager cost, kernel or dispatch,
whichever bounds it. Per graph: median eager time of all its nodes in order
(inputs made beforehand). Symbols take their hints. Needs torch with CUDA.
"""
import json
import statistics
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from sator_torch.run_graph import GraphRunner  # noqa: E402

REPEAT = 10
SAMPLES = 5


class Ref:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


def decode(runner, v):
    """Like GraphRunner.value, but node references stay Refs."""
    if isinstance(v, list):
        return [decode(runner, x) for x in v]
    if isinstance(v, dict) and list(v) == ["node"]:
        return Ref(v["node"])
    return runner.value(v)


def resolve(env, v):
    if isinstance(v, Ref):
        return env[v.name]
    if isinstance(v, list):
        return [resolve(env, x) for x in v]
    return v


def prepare(runner, doc):
    """(name, callable, args, kwargs) per non-placeholder node; None where the
    node needs GraphRunner's own handling (random ops, constants)."""
    steps = []
    for n in doc["nodes"]:
        op = n["op"]
        if op in ("placeholder", "output"):
            continue
        special = op in ("getitem", "get_attr") or op.startswith(("_operator.", "hop.", "prims.inductor")) or \
            op == "aten.rand.default" or "scaled_dot_product" in op and "dropout" in json.dumps(n.get("args", []))
        if special:
            steps.append((n["name"], None, n, None))
            continue
        namespace, name, overload = op.split(".")
        fn = getattr(getattr(getattr(torch.ops, namespace), name), overload)
        steps.append((n["name"], fn, decode(runner, n.get("args", [])),
                      {k: decode(runner, v) for k, v in n.get("kwargs", {}).items()}))
    return steps


def call(runner, env, step):
    name, fn, args, kwargs = step
    if fn is None:
        runner.env = env
        return runner.call(args)  # args holds the node itself
    return fn(*resolve(env, args), **{k: resolve(env, v) for k, v in kwargs.items()})


def run_all(runner, steps, inputs):
    env = dict(inputs)
    for step in steps:
        env[step[0]] = call(runner, env, step)
    return env


def calibrate(path):
    with open(path) as f:
        doc = json.load(f)
    runner = GraphRunner(doc, "cuda")
    with torch.no_grad():
        inputs = {n["name"]: runner.placeholder(n) for n in doc["nodes"] if n["op"] == "placeholder"}
        steps = prepare(runner, doc)
        for _ in range(3):
            env = run_all(runner, steps, inputs)
        torch.cuda.synchronize()
        totals = []
        for _ in range(9):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            a.record()
            run_all(runner, steps, inputs)
            b.record()
            b.synchronize()
            totals.append(a.elapsed_time(b) * 1e3)
        per_node = {}
        for step in steps:
            samples = []
            for _ in range(SAMPLES):
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                torch.cuda.synchronize()
                a.record()
                for _ in range(REPEAT):
                    call(runner, env, step)
                b.record()
                b.synchronize()
                samples.append(a.elapsed_time(b) * 1e3 / REPEAT)
            per_node[step[0]] = statistics.median(samples)
    return {"total_us": statistics.median(totals), "nodes": per_node,
            "ops": {n["name"]: n["op"] for n in doc["nodes"]}}


def main():
    out, paths = sys.argv[1], sys.argv[2:]
    # fp32 matmuls through TF32, as the roofline model assumes (and as
    # python/sator_torch/export.py captures the corpus).
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "graphs": {}}
    for p in paths:
        name = p.rsplit("/", 1)[-1]
        t0 = time.time()
        try:
            results["graphs"][name] = calibrate(p)
            print(f"{name}: {results['graphs'][name]['total_us']:.0f} us eager ({time.time() - t0:.0f} s)", flush=True)
        except Exception as e:  # noqa: BLE001 (one graph's failure is recorded, the rest go on)
            results["graphs"][name] = {"error": repr(e)}
            print(f"{name}: FAILED {e!r}", flush=True)
        torch.cuda.empty_cache()
    with open(out, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
