"""Does a causal SDPA kernel do half the work? Times scaled_dot_product_attention
with and without is_causal, and the decomposed block compiled by Inductor
(softmax(q kᵀ·s + causal mask) v), on the H200 in float32 and bfloat16.
Variants interleaved, CUDA events around 10 back-to-back calls, median of 25.

    python3 python/gpu/causal_attention_rate.py OUT.json
"""
import json
import statistics
import sys

import torch
import torch.nn.functional as F


def timed(fn, calls=10):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1e3 / calls  # µs per call


def decomposed(q, k, v, mask, scale):
    return torch.softmax(q @ k.transpose(-2, -1) * scale + mask, dim=-1) @ v


def main(out_path):
    rows = []
    compiled = torch.compile(decomposed)
    for dtype in (torch.float32, torch.bfloat16):
        for (b, h, l, e) in ((8, 16, 1024, 64), (8, 12, 1024, 64), (2, 32, 2048, 128)):
            q, k, v = (torch.randn(b, h, l, e, device="cuda", dtype=dtype) for _ in range(3))
            mask = torch.full((l, l), float("-inf"), device="cuda", dtype=dtype).triu(1)
            scale = e ** -0.5
            variants = {
                "sdpa_causal": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale),
                "sdpa_full": lambda: F.scaled_dot_product_attention(q, k, v, scale=scale),
                "sdpa_bias": lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale),
                "compiled_decomposed": lambda: compiled(q, k, v, mask, scale),
            }
            for fn in variants.values():  # warm up (and compile)
                for _ in range(3):
                    fn()
            torch.cuda.synchronize()
            times = {name: [] for name in variants}
            for _ in range(25):
                for name, fn in variants.items():
                    times[name].append(timed(fn))
            flops = 2.0 * b * h * l * l * (e + e)
            row = {"dtype": str(dtype).replace("torch.", ""), "shape": [b, h, l, e], "full_flops": flops}
            for name, ts in times.items():
                med = statistics.median(ts)
                row[name + "_us"] = med
                row[name + "_tflops_full"] = flops / med / 1e6
            rows.append(row)
            print(json.dumps(row), flush=True)
    with open(out_path, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
