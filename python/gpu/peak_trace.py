"""Where a graph's eager run allocates memory the peak estimate does not
count: each node run alone under torch.cuda's peak counter, and what it
held beyond what it left allocated (a kernel's workspace, an op's own
temporaries), largest first (issue 25, item 3: why an estimate misses).

    python3 python/gpu/peak_trace.py GRAPH.json [--top 10]
"""
import argparse
import os
import sys

import torch
from torch import fx

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
from sator_torch.loader import example_inputs, load  # noqa: E402

MiB = 2**20


class Trace(fx.Interpreter):
    """Runs the GraphModule node by node (fx.Interpreter frees each value
    after its last use, as the estimate assumes), recording per node the
    bytes held during it beyond those left allocated after it."""

    def __init__(self, gm):
        super().__init__(gm)
        self.rows = []

    def run_node(self, n):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        out = super().run_node(n)
        torch.cuda.synchronize()
        transient = torch.cuda.max_memory_allocated() - torch.cuda.memory_allocated()
        self.rows.append((transient, n.name, str(n.target)))
        return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("graph")
    ap.add_argument("--top", type=int, default=10)
    a = ap.parse_args()
    gm = load(a.graph, named_random=True)
    inputs = example_inputs(a.graph)
    Trace(gm).run(*inputs)  # warm-up: kernels, cuBLAS workspace
    t = Trace(gm)
    t.run(*inputs)
    print(f"{os.path.basename(a.graph)}: nodes holding memory beyond what they leave allocated")
    for transient, name, target in sorted(t.rows, reverse=True)[: a.top]:
        print(f"  {transient / MiB:9.1f} MiB  {name:24s} {target}")


if __name__ == "__main__":
    main()
