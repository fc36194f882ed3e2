"""Execute a sator.graph JSON file in PyTorch (graph-format.md, "Executing a
graph in PyTorch"): ops resolve to torch.ops, getitem and _operator.* to
Python's operator module, get_attr constants are built from their values,
placeholders are fed in order and every symbol takes its hint.

Inputs are drawn per placeholder *name*, and random ops draw per node *name*,
so two graphs that share names (a graph and sator's optimization of it) see
the same inputs and the same random numbers whatever order they run in.
"""
import hashlib
import json
import operator

import torch
import torch._inductor.inductor_prims  # noqa: F401  (registers prims.inductor_*)


def _seed(name: str) -> int:
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little") & ((1 << 63) - 1)


def _generator(name: str, device) -> torch.Generator:
    g = torch.Generator(device=device)
    g.manual_seed(_seed(name))
    return g


_FLOATS = ("float16", "bfloat16", "float32", "float64")


class GraphRunner:
    def __init__(self, doc: dict, device: str = "cuda", upcast: bool = False, input_scale: float = 1.0):
        self.doc = doc
        self.device = torch.device(device)
        self.upcast = upcast  # run every floating-point tensor in float64 (a reference)
        self.input_scale = input_scale  # floating-point inputs drawn from N(0, input_scale^2)
        self.hints = {s["name"]: s["hint"] for s in doc.get("symbols", [])}
        self.env = {}

    # --- values -----------------------------------------------------------
    def sym(self, text):
        if isinstance(text, int):
            return text
        scope = dict(self.hints)
        scope.update(Max=max, Min=min, Mod=lambda a, b: a % b, FloorDiv=lambda a, b: a // b)
        return int(eval(text, {"__builtins__": {}}, scope))  # noqa: S307 (the format's own expressions)

    def value(self, v):
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, dict):
            (key, x), = v.items()
            if key == "node":
                return self.env[x]
            if key == "sym":
                return self.sym(x)
            if key == "float":
                return float(x)
            if key == "dtype":
                return torch.float64 if self.upcast and x in _FLOATS else getattr(torch, x)
            if key == "device":
                return self.device
            if key == "enum":
                return eval(x, {"torch": torch})  # noqa: S307 (e.g. torch.contiguous_format)
            raise ValueError(f"cannot run an argument {v}")
        return v

    # --- nodes ------------------------------------------------------------
    def placeholder(self, n):
        if "symint" in n:
            return self.sym(n["symint"])
        shape = [self.sym(d) for d in n["shape"]]
        stride = [self.sym(d) for d in n["stride"]]
        dtype = getattr(torch, n["dtype"])
        g = _generator("input:" + n["name"], self.device)
        if self.upcast and n["dtype"] in _FLOATS:
            dtype = torch.float64
        t = torch.empty_strided(shape, stride, dtype=dtype, device=self.device)
        if dtype.is_floating_point:
            t.copy_(torch.randn(shape, generator=g, device=self.device, dtype=torch.float32) * self.input_scale)
        elif dtype == torch.bool:
            t.copy_(torch.randint(0, 2, shape, generator=g, device=self.device).bool())
        else:  # token ids, labels, positions: 0 and 1 are valid for all of them
            t.copy_(torch.randint(0, 2, shape, generator=g, device=self.device))
        return t

    def call(self, n):
        op = n["op"]
        args = [self.value(a) for a in n.get("args", [])]
        kwargs = {k: self.value(v) for k, v in n.get("kwargs", {}).items()}
        if op == "getitem":
            return operator.getitem(*args)
        if op.startswith("_operator."):
            return getattr(operator, op.split(".", 1)[1])(*args)
        if op == "get_attr":
            if n.get("value") is None:
                raise ValueError("a get_attr without a value (a subgraph module) cannot run here")
            dtype = torch.float64 if self.upcast and n["dtype"] in _FLOATS else getattr(torch, n["dtype"])
            return torch.tensor(n["value"], dtype=dtype, device=self.device)
        if op.startswith("hop."):
            raise ValueError(f"higher-order op {op} cannot run here")
        # Random draws by node name, so reordered graphs draw the same numbers.
        if op == "aten.rand.default":
            dtype = kwargs.get("dtype") or torch.float32
            # Draw in float32 and widen, so a float64 run draws the same numbers.
            return torch.rand(args[0], generator=_generator(n["name"], self.device), device=self.device,
                              dtype=torch.float32).to(dtype)
        if op == "prims.inductor_random.default":
            size, mode = args[0], args[2]
            fn = torch.rand if mode == "rand" else torch.randn
            out = fn(size, generator=_generator(n["name"], self.device), device=self.device, dtype=torch.float32)
            return out.double() if self.upcast else out
        if op == "prims.inductor_seeds.default":
            return torch.arange(args[0], device=self.device, dtype=torch.int64)
        if "scaled_dot_product" in op:
            # Fused attention with dropout draws from the global generator:
            # seed it by node name, as for the explicit random ops.
            torch.manual_seed(_seed(n["name"]))
        namespace, name, overload = op.split(".")
        return getattr(getattr(getattr(torch.ops, namespace), name), overload)(*args, **kwargs)

    def run(self):
        outputs = None
        for n in self.doc["nodes"]:
            if n["op"] == "placeholder":
                self.env[n["name"]] = self.placeholder(n)
            elif n["op"] == "output":
                outputs = [self.value(v) if v is not None else None for v in n["args"][0]]
            else:
                self.env[n["name"]] = self.call(n)
        return outputs


def run_file(path: str, device: str = "cuda", upcast: bool = False, input_scale: float = 1.0):
    with open(path) as f:
        return GraphRunner(json.load(f), device, upcast, input_scale).run()
