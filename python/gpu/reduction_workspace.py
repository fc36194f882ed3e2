"""What eager CUDA reductions allocate while they run (issue 25, item 3):
ATen's reduction kernels that split one output's inputs across thread
blocks stage partial results in global memory, allocated through the
caching allocator for the kernel's duration. Each case runs once to warm
up, then under the peak counter; the transient is the peak less what is
allocated after (input and result).

    python3 python/gpu/reduction_workspace.py OUT.json

OUT.json: the device, and per case the op, shape, strides, dims, dtypes
and the measured transient bytes; tests/data/reduction_workspace_h100.json
keeps one run, which tests check sator's model of the staging buffer against.
"""
import json
import sys

import torch

CASES = []
for rows, cols in [(8192, 1024), (8192, 4096), (4096, 768), (16384, 768), (16384, 3072), (2048, 50257),
                   (32768, 1024), (1024, 1024), (512, 4096), (8192, 12)]:
    for dt, out in [("bfloat16", "float32"), ("float32", None), ("bfloat16", None)]:
        CASES.append({"op": "sum", "shape": [rows, cols], "dims": [0], "dtype": dt, "out_dtype": out})
CASES += [
    {"op": "sum", "shape": [8, 1024, 1024], "dims": [0, 1], "dtype": "float32", "out_dtype": None},
    {"op": "sum", "shape": [8, 1024, 4096], "dims": [0, 1], "dtype": "bfloat16", "out_dtype": "float32"},
    {"op": "sum", "shape": [8, 1024, 1024], "dims": [1], "dtype": "float32", "out_dtype": None},
    {"op": "sum", "shape": [8, 16, 1024, 64], "dims": [2], "dtype": "float32", "out_dtype": None},
    {"op": "sum", "shape": [8192, 1024], "dims": [1], "dtype": "float32", "out_dtype": None},
    {"op": "sum", "shape": [8, 1024, 50257], "dims": [2], "dtype": "float32", "out_dtype": None},
    {"op": "sum", "shape": [8192, 4096], "dims": [0, 1], "dtype": "float32", "out_dtype": None},
    {"op": "sum", "shape": [4096, 8192], "dims": [0], "dtype": "float32", "out_dtype": None, "transpose": True},
    {"op": "amax", "shape": [8192, 4096], "dims": [0], "dtype": "float32", "out_dtype": None},
    {"op": "amax", "shape": [8192, 1024], "dims": [-1], "dtype": "float32", "out_dtype": None},
    {"op": "mean", "shape": [8192, 4096], "dims": [0], "dtype": "float32", "out_dtype": None},
    {"op": "var_mean", "shape": [8192, 1024], "dims": [0], "dtype": "float32", "out_dtype": None},
    {"op": "var_mean", "shape": [8, 1024, 1024], "dims": [2], "dtype": "float32", "out_dtype": None},
]


def run(case):
    dt = getattr(torch, case["dtype"])
    x = torch.randn(case["shape"], device="cuda").to(dt)
    if case.get("transpose"):  # reduce a transposed view: the reduced dim is the contiguous one
        x = x.t()
    dims = case["dims"]

    def call():
        if case["op"] == "sum":
            kw = {"dtype": getattr(torch, case["out_dtype"])} if case["out_dtype"] else {}
            return torch.ops.aten.sum.dim_IntList(x, dims, True, **kw)
        if case["op"] == "amax":
            return torch.ops.aten.amax.default(x, dims, True)
        if case["op"] == "mean":
            return torch.ops.aten.mean.dim(x, dims, True)
        if case["op"] == "var_mean":
            return torch.ops.aten.var_mean.correction(x, dims, correction=0, keepdim=True)
        raise ValueError(case["op"])

    out = call()
    del out
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    out = call()
    torch.cuda.synchronize()
    transient = torch.cuda.max_memory_allocated() - torch.cuda.memory_allocated()
    return dict(case, strides=list(x.stride()), shape=list(x.shape), transient_bytes=int(transient))


def main():
    props = torch.cuda.get_device_properties(0)
    res = {"device": props.name, "sms": props.multi_processor_count,
           "max_threads_per_sm": props.max_threads_per_multi_processor, "torch": torch.__version__,
           "cases": []}
    for c in CASES:
        r = run(c)
        res["cases"].append(r)
        print(f"{r['op']:9s} {str(r['shape']):22s} dims {str(r['dims']):8s} {r['dtype']:9s}->{r['out_dtype'] or '-':8s} "
              f"{r['transient_bytes'] / 2**20:9.2f} MiB", flush=True)
    json.dump(res, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
