#!/usr/bin/env python3
"""Two sator binaries' outputs on every corpus and zoo graph, both priced by
the second binary's cost model (where a change touches the model itself,
scripts/estimates_ab.py compares each output under its own model instead):
estimated peak (each run's own report) and estimated time (the second
binary's `optimize OUT --iter-limit 1` report, cost_in). Exit 1 if any
graph's peak or time is higher after.

    python3 scripts/estimates_repriced.py BEFORE AFTER [GRAPH...]
"""
import glob
import json
import os
import subprocess
import sys
import tempfile


def main():
    old, new = sys.argv[1], sys.argv[2]
    graphs = sys.argv[3:] or sorted(glob.glob("corpus/graphs/*.json") + glob.glob("corpus/zoo/graphs/*.json"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for g in graphs:
            res = {}
            for tag, b in (("before", old), ("after", new)):
                o, r = os.path.join(tmp, tag + ".json"), os.path.join(tmp, tag + ".r.json")
                subprocess.run([b, "optimize", g, "-o", o, "--report", r], check=True, stdout=subprocess.DEVNULL)
                peak = json.load(open(r))["peak_bytes_out"]
                subprocess.run([new, "optimize", o, "--report", r, "--iter-limit", "1"], check=True,
                               stdout=subprocess.DEVNULL)
                res[tag] = (peak, json.load(open(r))["cost_in"])
            rows.append((os.path.basename(g), res["before"], res["after"]))
    higher_peak = [r for r in rows if r[2][0] > r[1][0] * (1 + 1e-9)]
    higher_time = [r for r in rows if r[2][1] > r[1][1] * (1 + 1e-6)]
    lower_time = [r for r in rows if r[2][1] < r[1][1] * (1 - 1e-6)]
    print(f"{len(rows)} graphs; peak higher on {len(higher_peak)}; time higher on {len(higher_time)}, "
          f"lower on {len(lower_time)}")
    for name, b, a in higher_peak:
        print(f"  peak {name}: {b[0] / 2**20:.1f} -> {a[0] / 2**20:.1f} MiB")
    for name, b, a in higher_time + lower_time:
        print(f"  time {name}: {b[1]:.1f} -> {a[1]:.1f} us")
    return 1 if higher_peak or higher_time else 0


if __name__ == "__main__":
    sys.exit(main())
