#!/usr/bin/env python3
"""The time of one sator command on N copies of a graph against one copy,
the two sizes interleaved (the machine's noise hits both alike).

    python3 scripts/growth_ratio.py SATOR COMMAND [--copies 17] [--runs 11]

Inputs: corpus/graphs/gpt2-124m.train.g0.json replicated 1 and N times
(scripts/replicate_graph.py). Prints the median wall time of each size and
their ratio (issue 22's target: within 20x at 17 copies).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sator")
    ap.add_argument("command", choices=["optimize", "greedy", "compare"])
    ap.add_argument("--copies", type=int, default=17)
    ap.add_argument("--runs", type=int, default=11)
    a = ap.parse_args()
    base = os.path.join(ROOT, "corpus", "graphs", "gpt2-124m.train.g0.json")
    with tempfile.TemporaryDirectory() as tmp:
        times = {}
        for n in (1, a.copies):
            subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "replicate_graph.py"), base, str(n),
                            os.path.join(tmp, f"g{n}.json")], check=True)
            times[n] = []
        for _ in range(a.runs):
            for n in times:
                cmd = [a.sator, a.command, os.path.join(tmp, f"g{n}.json")]
                if a.command != "compare":
                    cmd += ["-o", os.path.join(tmp, f"o{n}.json")]
                t0 = time.perf_counter()
                subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
                times[n].append(time.perf_counter() - t0)
        one, many = statistics.median(times[1]), statistics.median(times[a.copies])
        print(f"{a.command}: 1 copy {one:.4f} s, {a.copies} copies {many:.4f} s, ratio {many / one:.1f}x "
              f"(medians of {a.runs}, interleaved)")


if __name__ == "__main__":
    main()
