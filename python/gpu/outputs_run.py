"""Does sator's output of every graph run? (a wrong `view` fails eagerly,
and in Inductor alike). Each graph optimized with the default options,
loaded as a GraphModule and run once on the GPU; prints the failures.

    python3 python/gpu/outputs_run.py OUT.json FOLDER... [--shard K/N]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
from sator_torch.inductor_pass import find_sator  # noqa: E402
from sator_torch.loader import example_inputs, load  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--shard", default="0/1")
    a = ap.parse_args()
    sator = find_sator()
    k, n = (int(x) for x in a.shard.split("/"))
    paths = sorted(os.path.join(d, f) for d in a.folders for f in os.listdir(d) if f.endswith(".json"))[k::n]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for p in paths:
            name = os.path.basename(p)[:-5]
            opt = os.path.join(tmp, name + ".sator.json")
            subprocess.run([sator, "optimize", p, "-o", opt], check=True, stdout=subprocess.DEVNULL)
            try:
                with torch.no_grad():
                    out = load(opt, named_random=True)(*example_inputs(opt))
                del out
                rows.append({"graph": name, "ran": True})
            except Exception as e:  # noqa: BLE001  (report, keep going)
                rows.append({"graph": name, "ran": False, "error": f"{type(e).__name__}: {e}"[:300]})
                print(f"{name}: FAILED {rows[-1]['error']}", flush=True)
            torch.cuda.empty_cache()
    json.dump(rows, open(a.out, "w"), indent=1)
    print(f"{sum(r['ran'] for r in rows)} of {len(rows)} outputs ran", flush=True)


if __name__ == "__main__":
    main()
