"""Where a graph's eager run allocates memory the peak estimate does not
count: each node run alone under torch.cuda's peak counter, and what it
held beyond what it left allocated (a kernel's workspace, an op's own
temporaries), largest first (issue 25, item 3: why an estimate misses).
It also says where the eager run departs from the graph: the first nodes
whose result's strides differ from those the graph records, and the node
an exception came from.

    python3 python/gpu/peak_trace.py GRAPH.json [--top 10] [--json OUT.json]
"""
import argparse
import json
import os
import sys

import torch
from torch import fx

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
from sator_torch.loader import example_inputs, load, symbol_values, sym_value  # noqa: E402

MiB = 2**20


class Trace(fx.Interpreter):
    """Runs the GraphModule node by node (fx.Interpreter frees each value
    after its last use, as the estimate assumes), recording per node the
    bytes held during it beyond those left allocated after it, and where
    a result's strides differ from the graph's record."""

    def __init__(self, gm, recorded):
        super().__init__(gm)
        self.rows, self.recorded, self.strides = [], recorded, []

    def run_node(self, n):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        try:
            out = super().run_node(n)
        except Exception as e:
            raise RuntimeError(f"node {n.name} ({n.target}): {type(e).__name__}: {e}") from e
        torch.cuda.synchronize()
        transient = torch.cuda.max_memory_allocated() - torch.cuda.memory_allocated()
        self.rows.append((transient, n.name, str(n.target)))
        want = self.recorded.get(n.name)
        if want and isinstance(out, torch.Tensor) and out.numel() > 1 and list(out.shape) == want[0]:
            got = list(out.stride())
            significant = [g for g, w, d in zip(got, want[1], out.shape) if d > 1 and g != w]
            if significant:
                self.strides.append((n.name, str(n.target), list(out.shape), want[1], got))
        return out


def recorded_strides(path):
    doc = json.load(open(path))
    values = symbol_values(doc, None)
    out = {}
    for n in doc["nodes"]:
        if "shape" in n and "stride" in n:
            try:
                out[n["name"]] = ([sym_value(d, values) for d in n["shape"]], [sym_value(d, values) for d in n["stride"]])
            except Exception:  # noqa: BLE001  (a size it cannot evaluate: not compared)
                pass
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("graph")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args()
    gm = load(a.graph, named_random=True)
    inputs = example_inputs(a.graph)
    recorded = recorded_strides(a.graph)
    result = {"graph": os.path.basename(a.graph)}
    warm = Trace(gm, recorded)  # warm-up: kernels, cuBLAS workspace
    t = None
    try:
        warm.run(*inputs)
        t = Trace(gm, recorded)
        t.run(*inputs)
    except RuntimeError as e:
        result["raised"] = str(e)[:1000]
        print(f"{os.path.basename(a.graph)}: {result['raised']}")
        result["strides_differ"] = [dict(zip(("node", "op", "shape", "recorded", "eager"), s)) for s in warm.strides]
        for s in warm.strides[:5]:
            print(f"  strides differ at {s[0]} ({s[1]}): shape {s[2]} recorded {s[3]} eager {s[4]}")
        t = None
    if t is not None:
        print(f"{os.path.basename(a.graph)}: nodes holding memory beyond what they leave allocated")
        for transient, name, target in sorted(t.rows, reverse=True)[: a.top]:
            print(f"  {transient / MiB:9.1f} MiB  {name:24s} {target}")
        result["transient"] = [{"node": nm, "op": tg, "bytes": b} for b, nm, tg in sorted(t.rows, reverse=True)]
        result["strides_differ"] = [dict(zip(("node", "op", "shape", "recorded", "eager"), s)) for s in t.strides]
        for s in t.strides[:5]:
            print(f"  strides differ at {s[0]} ({s[1]}): shape {s[2]} recorded {s[3]} eager {s[4]}")
    if a.json:
        json.dump(result, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
