"""Times sator.graph files on the GPU, node by node and whole, for
calibrating sator's roofline cost model (docs/cost-model.md).

  python3 python/calibrate_costs.py OUT.json GRAPH.json...

Arguments are decoded once (references to earlier nodes are looked up at
call time), so what is timed is PyTorch's own eager dispatch and kernels,
not the decoding. Symbols take their hints. Needs torch with CUDA.

Per graph:
  total_us     median eager time of the whole graph (inputs made beforehand),
               over ROUNDS rounds that visit the graphs in turn (so drifts of a
               shared machine spread over all graphs) of RUNS runs each;
  totals_us    every one of those runs.
Per node (dicts by node name):
  nodes        steady-state time of REPEAT back-to-back calls of the node
               alone, divided by REPEAT (median of SAMPLES): kernel or host
               dispatch, whichever bounds it -- what "op time" means when ops
               are ranked;
  gpu_us       the GPU's time for one call alone: the calls are queued behind
               a GPU sleep, so the host's dispatch is hidden and the CUDA
               events measure the kernels back to back;
  host_us      the host's time for one call alone (same queued calls, wall
               clock around them);
  seq_host_us  the host's time for the node inside a whole run (the run queued
               behind a GPU sleep, wall clock between nodes): dispatch with
               the caches a real run has.
"""
import json
import random
import statistics
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from sator_torch.run_graph import GraphRunner  # noqa: E402

REPEAT = 10
SAMPLES = 7
ROUNDS = 5
RUNS = 7


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


def run_all(runner, steps, inputs, stamps=None):
    env = dict(inputs)
    for step in steps:
        env[step[0]] = call(runner, env, step)
        if stamps is not None:
            stamps.append(time.perf_counter_ns())
    return env


class Sleeper:
    """Keeps the GPU busy for a while, so that work queued meanwhile runs back
    to back once it ends, whatever the host's dispatch cost."""

    def __init__(self):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        torch.cuda._sleep(10_000_000)
        b.record()
        b.synchronize()
        self.cycles_per_us = 10_000_000 / (a.elapsed_time(b) * 1e3)

    def sleep(self, us):
        torch.cuda._sleep(int(us * self.cycles_per_us))


def events():
    return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)


def time_node(runner, env, step, sleeper):
    steady, gpu, host = [], [], []
    for _ in range(SAMPLES):
        a, b = events()
        torch.cuda.synchronize()
        a.record()
        for _ in range(REPEAT):
            call(runner, env, step)
        b.record()
        b.synchronize()
        steady.append(a.elapsed_time(b) * 1e3 / REPEAT)
        a, b = events()
        torch.cuda.synchronize()
        sleeper.sleep(2000 + 2 * REPEAT * steady[-1])
        a.record()
        t0 = time.perf_counter_ns()
        for _ in range(REPEAT):
            call(runner, env, step)
        t1 = time.perf_counter_ns()
        b.record()
        b.synchronize()
        gpu.append(a.elapsed_time(b) * 1e3 / REPEAT)
        host.append((t1 - t0) / 1e3 / REPEAT)
    return statistics.median(steady), statistics.median(gpu), statistics.median(host)


def measure_nodes(prep, sleeper, host_budget_us):
    runner, steps, inputs = prep
    seq = {s[0]: [] for s in steps}
    for _ in range(5):
        torch.cuda.synchronize()
        sleeper.sleep(3 * host_budget_us + 2000)
        stamps = [time.perf_counter_ns()]
        env = run_all(runner, steps, inputs, stamps)
        torch.cuda.synchronize()
        for i, s in enumerate(steps):
            seq[s[0]].append((stamps[i + 1] - stamps[i]) / 1e3)
    out = {"nodes": {}, "gpu_us": {}, "host_us": {}, "seq_host_us": {k: statistics.median(v) for k, v in seq.items()}}
    for step in steps:
        steady, gpu, host = time_node(runner, env, step, sleeper)
        out["nodes"][step[0]], out["gpu_us"][step[0]], out["host_us"][step[0]] = steady, gpu, host
    return out


def time_totals(preps):
    totals = {name: [] for name in preps}
    order = list(preps)
    rng = random.Random(0)
    for _ in range(ROUNDS):
        rng.shuffle(order)
        for name in order:
            runner, steps, inputs = preps[name]
            for i in range(2 + RUNS):
                a, b = events()
                torch.cuda.synchronize()
                a.record()
                run_all(runner, steps, inputs)
                b.record()
                b.synchronize()
                if i >= 2:
                    totals[name].append(a.elapsed_time(b) * 1e3)
    return totals


def main():
    out, paths = sys.argv[1], sys.argv[2:]
    # fp32 matmuls through TF32, as the roofline model assumes (and as
    # python/sator_torch/export.py captures the corpus).
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.set_grad_enabled(False)
    results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "graphs": {}}
    preps = {}
    for p in paths:
        name = p.rsplit("/", 1)[-1]
        try:
            with open(p) as f:
                doc = json.load(f)
            runner = GraphRunner(doc, "cuda")
            inputs = {n["name"]: runner.placeholder(n) for n in doc["nodes"] if n["op"] == "placeholder"}
            preps[name] = (runner, prepare(runner, doc), inputs)
            run_all(*preps[name])
            results["graphs"][name] = {"ops": {n["name"]: n["op"] for n in doc["nodes"]}}
        except Exception as e:  # noqa: BLE001 (one graph's failure is recorded, the rest go on)
            results["graphs"][name] = {"error": repr(e)}
            preps.pop(name, None)
            print(f"{name}: FAILED {e!r}", flush=True)
    sleeper = Sleeper()
    t0 = time.time()
    for name, samples in time_totals(preps).items():
        results["graphs"][name].update(total_us=statistics.median(samples), totals_us=samples)
    print(f"whole-graph rounds: {time.time() - t0:.0f} s", flush=True)
    for name, prep in preps.items():
        t0 = time.time()
        g = results["graphs"][name]
        g.update(measure_nodes(prep, sleeper, g["total_us"]))
        torch.cuda.empty_cache()
        print(f"{name}: {g['total_us']:.0f} us eager, nodes {time.time() - t0:.0f} s", flush=True)
    with open(out, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
