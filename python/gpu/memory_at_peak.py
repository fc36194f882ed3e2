"""What a training step holds at its peak, per variant: plain torch.compile
and torch.compile with sator's InductorPass, one zoo row (issue 38: three
bf16 training rows peak higher with sator, cause unknown).

    python3 python/gpu/memory_at_peak.py ARCH SETUP OUT.json [--size full]

Each variant: the model built, compiled, one warm step (the optimizer's
state), then one step under torch.cuda.memory._record_memory_history; from
the snapshot's trace, the allocated bytes over the step and the blocks live
at its highest point, each with the generated-code line that allocated it.
OUT.json: per variant the peak and the live blocks (largest first); printed:
the blocks whose sizes the two variants hold in different numbers.
"""
import argparse
import collections
import gc
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))


def live_at_peak(snapshot):
    """(peak bytes, [blocks live then]) from the allocator's trace."""
    events = snapshot["device_traces"][0] if snapshot["device_traces"] else []
    live, now, best, best_live = {}, 0, 0, {}
    for e in events:
        if e["action"] == "alloc":
            live[e["addr"]] = e
            now += e["size"]
            if now > best:
                best, best_live = now, dict(live)
        elif e["action"] == "free_completed" and e["addr"] in live:
            now -= live.pop(e["addr"])["size"]
    return best, list(best_live.values())


def where(block):
    """The generated (or model) code line that allocated the block."""
    frames = block.get("frames") or []
    for f in frames:
        if "torchinductor" in f.get("filename", "") or "/tmp/" in f.get("filename", ""):
            return f"{os.path.basename(f['filename'])}:{f['line']} {f['name']}"
    return " < ".join(f"{os.path.basename(f.get('filename', '?'))}:{f.get('line')}" for f in frames[:3]) or "?"


def measure(a, variant):
    import torch
    from zoo_row import Row, compile_variant
    from sator_torch.inductor_pass import InductorPass

    row = Row(a)
    p = InductorPass(verbose=False) if variant == "sator" else None
    fn, res, _ = compile_variant(row, variant, p, None)
    if fn is None:
        raise RuntimeError(res.get("raised"))
    row.step(fn)
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(max_entries=1_000_000, stacks="python")
    row.step(fn)
    torch.cuda.synchronize()
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    peak = torch.cuda.max_memory_allocated()
    traced_peak, blocks = live_at_peak(snap)
    out = {"max_memory_allocated": peak, "base": base, "traced_peak_over_step": traced_peak,
           "pass_reports": [{k: r.get(k) for k in ("skipped", "attention_changed", "attention_kernels")}
                            for r in (p.reports if p else [])],
           "blocks": sorted(({"mib": round(b["size"] / 2**20, 2), "where": where(b)} for b in blocks),
                            key=lambda b: -b["mib"])}
    del row, fn, p
    gc.collect()
    torch.cuda.empty_cache()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("arch")
    ap.add_argument("setup")
    ap.add_argument("out")
    ap.add_argument("--size", default="full")
    a = ap.parse_args()
    a.phase, a.iters, a.graphs, a.chunk = "train", 1, None, "off"
    res = {v: measure(a, v) for v in ("plain", "sator")}
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)
    for v in ("plain", "sator"):
        r = res[v]
        print(f"{v}: max_memory_allocated {r['max_memory_allocated'] / 2**20:.0f} MiB, traced peak over the step "
              f"{r['traced_peak_over_step'] / 2**20:.0f} MiB, {len(r['blocks'])} blocks live then")
    count = {v: collections.Counter(round(b["mib"]) for b in res[v]["blocks"]) for v in res}
    for mib in sorted(set(count["plain"]) | set(count["sator"]), reverse=True):
        if count["plain"][mib] != count["sator"][mib] and mib >= 1:
            ex = {v: [b["where"] for b in res[v]["blocks"] if round(b["mib"]) == mib][:3] for v in res}
            print(f"{mib:6d} MiB: plain {count['plain'][mib]}, sator {count['sator'][mib]}  {json.dumps(ex)[:600]}")


if __name__ == "__main__":
    main()
