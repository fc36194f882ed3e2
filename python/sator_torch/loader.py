"""sator.graph document -> executable torch.fx.GraphModule.

    gm = load("out.json")                  # symbols at their hints
    outs = gm(*example_inputs(doc))

Every op resolves to torch.ops (namespace.op.overload), getitem and
_operator.* to Python's operator module, get_attr constants become buffers.
Symbolic sizes take concrete values (the hints, or `symbols=`); placeholders
holding symbolic ints are still inputs of the module. A `sator.chunked` node
(docs/graph-format.md, "Chunked regions") becomes, per chunk, slices of its
sliced inputs, one call of its body (a submodule per distinct chunk size) and
getitems; a `cat` result is concatenated after the last chunk, a `sum`
result starts as zeros and each body adds its part to it. With
`subgraphs="invoke_subgraph"` the bodies are called through
torch.ops.higher_order.invoke_subgraph, so that Inductor compiles each body
apart and fuses nothing across chunks (what InductorPass uses).

FX frees each intermediate after its last use, so running the module eagerly
holds what sator's peak-memory estimator assumes.
"""
import ast
import hashlib
import json
import operator

import torch
from torch import fx

try:
    import torch._inductor.inductor_prims  # noqa: F401  (registers prims.inductor_*)
except ImportError:
    pass

CHUNKED = "sator.chunked"
_FLOATS = ("float16", "bfloat16", "float32", "float64")


class LoadError(ValueError):
    pass


def _seed(name):
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "little") & ((1 << 63) - 1)


def resolve_op(op):
    """The Python callable of a format op name."""
    if op == "getitem":
        return operator.getitem
    if op.startswith("_operator."):
        return getattr(operator, op.split(".", 1)[1])
    parts = op.split(".")
    if len(parts) != 3 or parts[0] not in ("aten", "prims"):
        raise LoadError(f"cannot run op {op}")
    return getattr(getattr(getattr(torch.ops, parts[0]), parts[1]), parts[2])


def _named_random(name, op, fn):
    """`fn` drawing from a stream named after its node, as run_graph.py draws:
    a graph and its optimization (which keeps names) draw the same numbers."""
    seed = _seed(name)

    def generator(device):
        g = torch.Generator(device=device)
        g.manual_seed(seed)
        return g

    def draw(*args, **kwargs):
        if op == "aten.rand.default":
            device = kwargs.get("device") or "cuda"
            out = torch.rand(args[0], generator=generator(device), device=device, dtype=torch.float32)
            return out.to(kwargs.get("dtype") or torch.float32)
        if op == "prims.inductor_random.default":
            device = kwargs.get("device") or "cuda"
            f = torch.rand if args[2] == "rand" else torch.randn
            return f(args[0], generator=generator(device), device=device, dtype=torch.float32)
        if op == "prims.inductor_seeds.default":
            return torch.arange(args[0], device=args[1], dtype=torch.int64)
        torch.manual_seed(seed)
        return fn(*args, **kwargs)

    draw.__name__ = "named_random_" + op.replace(".", "_")
    return draw


def _is_random(op):
    return any(k in op for k in ("rand", "dropout", "bernoulli", "inductor_seed", "scaled_dot_product"))


def sym_value(text, symbols):
    """An expression of the format (SymPy's printing) at concrete symbol values."""
    if isinstance(text, int):
        return text
    if isinstance(text, dict) and "sym" in text:  # an encoded {"sym": ...} value
        text = text["sym"]
    tree = ast.parse(str(text), mode="eval")
    allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Load, ast.Add, ast.Sub,
               ast.Mult, ast.Pow, ast.FloorDiv, ast.Mod, ast.USub, ast.Call)
    for node in ast.walk(tree):
        if not isinstance(node, allowed):
            raise LoadError(f"cannot evaluate size expression {text!r}")
    scope = dict(symbols)
    scope.update(Max=max, Min=min, Mod=operator.mod, FloorDiv=operator.floordiv)
    try:
        return int(eval(compile(tree, "<size>", "eval"), {"__builtins__": {}}, scope))  # noqa: S307
    except NameError as e:
        raise LoadError(f"size expression {text!r}: {e}") from None


def chunk_bounds(rows, chunks):
    """Row boundaries of the chunks (ir/chunked_node.h): ceil(rows/chunks) each, the last takes the rest."""
    if rows <= 0:
        return [0]
    per = -(-rows // max(chunks, 1))
    bounds = list(range(0, rows, per))
    return bounds + [rows]


class _Builder:
    """Emits a document's nodes into an fx.Graph."""

    def __init__(self, graph, root, symbols, device, named_random, subgraphs, prefix=""):
        self.graph, self.root = graph, root
        self.symbols, self.device = symbols, device
        self.named_random, self.subgraphs = named_random, subgraphs
        self.prefix = prefix
        self.env = {}      # node name -> fx node (or a list of fx nodes for a chunked node)
        self.docs = {}     # node name -> its document entry
        self.bodies_built = []  # chunk bodies' GraphModules
        self.contiguous_slices = False  # copy every sliced input (not only strided slices)

    def value(self, v):
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, dict):
            (key, x), = v.items()
            if key == "node":
                return self.env[x]
            if key == "sym":
                return self.size(x)
            if key == "float":
                return float(x)
            if key == "dtype":
                return getattr(torch, x)
            if key == "device":
                return torch.device(self.device) if self.device else torch.device(x)
            if key == "enum":
                return eval(x, {"torch": torch})  # noqa: S307 (e.g. torch.contiguous_format)
            raise LoadError(f"cannot run an argument {v}")
        return v

    def size(self, text):
        """A size: an int, or (symbols given as fx Proxies) the fx node computing it."""
        if all(isinstance(v, int) for v in self.symbols.values()):
            return sym_value(text, self.symbols)
        scope = dict(self.symbols)
        v = eval(compile(ast.parse(str(text), mode="eval"), "<size>", "eval"), {"__builtins__": {}}, scope)  # noqa: S307
        return v.node if isinstance(v, fx.Proxy) else int(v)

    def emit(self, n, placeholder=None):
        name, op = n["name"], n["op"]
        self.docs[name] = n
        if op == "placeholder":
            node = placeholder(n) if placeholder else self.graph.placeholder(name)
        elif op == "output":
            outs = [self.value(v) if v is not None else None for v in n["args"][0]]
            return self.graph.output(tuple(outs))
        elif op == "get_attr":
            node = self._constant(n)
        elif op == CHUNKED:
            self.env[name] = self._chunked(n)
            return None
        elif op == "getitem" and isinstance(self.env.get(n["args"][0].get("node")), list):
            node = self.env[n["args"][0]["node"]][n["args"][1]]  # a chunked node's combined result
        else:
            node = self._call(n)
        self.env[name] = node
        return node

    def _constant(self, n):
        target = n.get("target")
        if target and self.root is not None and hasattr(self.root, target) and not self.prefix:
            return self.graph.create_node("get_attr", target, name=n["name"])  # rebuilding in place (InductorPass)
        if n.get("value") is None:
            # A joint graph's get_attr (a parameter or a submodule): the root must have it.
            target = n.get("target", n["name"])
            if self.root is not None and hasattr(self.root, target):
                return self.graph.create_node("get_attr", target, name=n["name"])
            raise LoadError(f"node {n['name']}: a get_attr without a value cannot run here")
        attr = f"_sator_const_{self.prefix}{n['name']}"
        t = torch.tensor(n["value"], dtype=getattr(torch, n["dtype"]), device=self.device)
        self.root.register_buffer(attr, t)
        return self.graph.create_node("get_attr", attr, name=n["name"])

    def _call(self, n):
        op = n["op"]
        if op.startswith("hop."):
            raise LoadError(f"node {n['name']}: higher-order op {op} cannot run here")
        fn = resolve_op(op)
        args = tuple(self.value(a) for a in n.get("args", []))
        kwargs = {k: self.value(v) for k, v in n.get("kwargs", {}).items()}
        if self.named_random and _is_random(op):
            fn = _named_random(n["name"], op, fn)
        return self.graph.create_node("call_function", fn, args, kwargs, name=n["name"])

    # --- sator.chunked ------------------------------------------------------
    def _body_module(self, n, rows, accumulate=()):
        """The body as a GraphModule for chunks of `rows` rows. For each result
        index in `accumulate` (a `sum` result) the body takes one more input,
        the running sum, and returns it plus its own part: the sum happens
        inside the body, so a compiler cannot gather every chunk's part into
        one fused add after the last chunk (which would hold them all)."""
        body = n["body"]
        symbols = dict(self.symbols)
        symbols[n["kwargs"]["row_symbol"]] = rows
        gm_root = torch.nn.Module()
        graph = fx.Graph()
        inner = _Builder(graph, gm_root, symbols, self.device, self.named_random, "module",
                         prefix=f"{self.prefix}{n['name']}_{rows}_")
        for b in body["nodes"]:
            inner.emit(b)
        if accumulate:
            _accumulate_in_body(graph, accumulate)
        body_gm = fx.GraphModule(gm_root, graph, class_name="SatorChunkBody")
        # Neither Inductor's AutoChunker nor InductorPass chunks a body again.
        body_gm.meta["produced_by_chunker"] = True
        body_gm.meta["sator_chunk_body"] = True
        self.bodies_built.append(body_gm)
        return body_gm

    def _chunked(self, n):
        kw = n["kwargs"]
        rows = sym_value(kw["rows"], self.symbols)
        bounds = chunk_bounds(rows, kw["chunks"])
        inputs = [self.env[a["node"]] for a in n["args"][0]]
        outputs = kw["outputs"]
        if self.subgraphs == "module":
            return self._chunked_eager(n, bounds, inputs)
        bodies = {}
        parts = [[] for _ in outputs]
        sums = tuple(i for i, how in enumerate(outputs) if how[0] != "cat")
        # Each sum starts from zeros and runs through every chunk's body.
        # (aten.full: a core op, which Inductor lowers after its decompositions have run.)
        device = self._device_of(inputs)
        totals = {i: self.graph.call_function(torch.ops.aten.full.default,
                                              ([sym_value(d, self.symbols) for d in n["outputs"][i]["shape"]], 0.0),
                                              {"dtype": getattr(torch, n["outputs"][i]["dtype"]), "layout": torch.strided,
                                               "device": device, "pin_memory": False})
                  for i in sums}
        for a, b in zip(bounds, bounds[1:]):
            size = b - a
            if size not in bodies:
                attr = f"_sator_{self.prefix}{n['name']}_body_{size}"
                self.root.add_module(attr, self._body_module(n, size, sums))
                bodies[size] = attr
            args = []
            for x, sl in zip(inputs, kw["inputs"]):
                if sl is None:
                    args.append(x)
                    continue
                dim, per_row = sl[0], sym_value(sl[1], self.symbols)
                piece = self.graph.call_function(torch.ops.aten.slice.Tensor, (x, dim, a * per_row, b * per_row))
                if dim != 0 or self.contiguous_slices:  # a slice along a later dim is strided: the body's views want it dense
                    piece = self.graph.call_function(torch.ops.aten.clone.default, (piece,),
                                                     {"memory_format": torch.contiguous_format})
                args.append(piece)
            args += [totals[i] for i in sums]
            if self.subgraphs == "invoke_subgraph":
                sub = self.graph.get_attr(bodies[size])
                call = self.graph.call_function(torch.ops.higher_order.invoke_subgraph,
                                                (sub, bodies[size]) + tuple(args))
            else:
                call = self.graph.call_module(bodies[size], tuple(args))
            for i in range(len(outputs)):
                got = self.graph.call_function(operator.getitem, (call, i))
                if i in totals:
                    totals[i] = got
                else:
                    parts[i].append(got)
        combined = []
        for i, (how, pieces) in enumerate(zip(outputs, parts)):
            if i in totals:
                combined.append(totals[i])
            else:
                combined.append(self.graph.call_function(torch.ops.aten.cat.default, (pieces, how[1]))
                                if len(pieces) > 1 else pieces[0])
        return combined

    def _device_of(self, inputs):
        """The device of the chunked node's results: the loader's, or (rebuilding
        a graph in place) that of the nearest ancestor carrying a value."""
        if self.device is not None:
            return torch.device(self.device)
        todo, seen = [x for x in inputs if isinstance(x, fx.Node)], set()
        while todo:
            x = todo.pop(0)
            if x in seen:
                continue
            seen.add(x)
            val = x.meta.get("val")
            if isinstance(val, torch.Tensor):
                return val.device
            todo.extend(x.all_input_nodes)
        raise LoadError("cannot tell the device of a sator.chunked node's results")

    def _chunked_eager(self, n, bounds, inputs):
        """One node running the chunks in Python, as sator's estimator assumes:
        each result allocated once and filled chunk by chunk (cat) or summed
        in place (sum); a chunk's slices are views."""
        kw = n["kwargs"]
        slices = [None if sl is None else (sl[0], sym_value(sl[1], self.symbols)) for sl in kw["inputs"]]
        # A sum is taken in the result's dtype, which may be wider than the body's part.
        combines = [("cat", c[1], sym_value(c[2], self.symbols)) if c[0] == "cat"
                    else ("sum", getattr(torch, n["outputs"][i]["dtype"])) for i, c in enumerate(kw["outputs"])]
        bodies = {}
        for a, b in zip(bounds, bounds[1:]):
            if b - a not in bodies:
                attr = f"_sator_{self.prefix}{n['name']}_body_{b - a}"
                self.root.add_module(attr, self._body_module(n, b - a))
                bodies[b - a] = getattr(self.root, attr)
        runner = _chunk_runner(bounds, slices, combines, bodies)
        call = self.graph.create_node("call_function", runner, tuple(inputs), {}, name=n["name"])
        return [self.graph.call_function(operator.getitem, (call, i)) for i in range(len(combines))]


def _accumulate_in_body(graph, indices):
    """Adds one placeholder per result index (after the body's own) and makes
    the body return that placeholder plus the result there."""
    nodes = list(graph.nodes)
    last_placeholder = [x for x in nodes if x.op == "placeholder"][-1]
    out = [x for x in nodes if x.op == "output"][0]
    results = list(out.args[0])
    accs = []
    with graph.inserting_after(last_placeholder):
        for i in reversed(indices):  # inserted right after the last: reversed keeps their order
            accs.insert(0, graph.placeholder(f"sator_running_sum_{i}"))
    with graph.inserting_before(out):
        for i, acc in zip(indices, accs):
            results[i] = graph.call_function(torch.ops.aten.add.Tensor, (acc, results[i]))
    out.args = (type(out.args[0])(results),)


def _chunk_runner(bounds, slices, combines, bodies):
    rows = bounds[-1]

    def run_chunked(*inputs):
        results = [None] * len(combines)
        for a, b in zip(bounds, bounds[1:]):
            args = []
            for x, sl in zip(inputs, slices):
                if sl is None:
                    args.append(x)
                else:
                    piece = x.narrow(sl[0], a * sl[1], (b - a) * sl[1])
                    args.append(piece if sl[0] == 0 else piece.contiguous())
            outs = bodies[b - a](*args)
            for i, (how, o) in enumerate(zip(combines, outs)):
                if how[0] == "cat":
                    dim, per_row = how[1], how[2]
                    if results[i] is None:
                        shape = list(o.shape)
                        shape[dim] = rows * per_row
                        results[i] = torch.empty(shape, dtype=o.dtype, device=o.device)
                    results[i].narrow(dim, a * per_row, (b - a) * per_row).copy_(o)
                else:
                    if results[i] is None:  # the first chunk's part becomes the sum (copied if it aliases or widens)
                        aliased = o._base is not None or any(o is x for x in args)
                        results[i] = o.to(how[1]) if o.dtype != how[1] else o.clone() if aliased else o
                    else:
                        results[i].add_(o)  # a 16-bit part is widened as it is added
            del outs, args
        return tuple(results)

    run_chunked.__name__ = "sator_chunked"
    return run_chunked


def _doc(doc_or_path):
    if isinstance(doc_or_path, dict):
        return doc_or_path
    with open(doc_or_path) as f:
        return json.load(f)


def symbol_values(doc, symbols=None):
    values = {s["name"]: s["hint"] for s in doc.get("symbols", [])}
    values.update(symbols or {})
    return values


def load(doc_or_path, device="cuda", symbols=None, named_random=False, subgraphs="module"):
    """A GraphModule running the document's graph. `device` replaces the
    devices the graph names (None keeps them); `named_random` draws every
    random op from a stream named after its node (for comparing graphs).
    `subgraphs` says how chunk bodies run: "module" (one Python node running
    every chunk, in place), "fx" (submodule calls) or "invoke_subgraph" (what
    InductorPass hands Inductor)."""
    if subgraphs not in ("module", "fx", "invoke_subgraph"):
        raise ValueError(f"subgraphs must be 'module', 'fx' or 'invoke_subgraph', not {subgraphs!r}")
    doc = _doc(doc_or_path)
    root = torch.nn.Module()
    graph = fx.Graph()
    b = _Builder(graph, root, symbol_values(doc, symbols), device, named_random, subgraphs)
    for n in doc["nodes"]:
        b.emit(n)
    gm = fx.GraphModule(root, graph, class_name="SatorGraph")
    return gm


def example_inputs(doc_or_path, device="cuda", symbols=None, upcast=False, input_scale=1.0):
    """Random inputs for the document's placeholders, drawn per placeholder
    name (a graph and its optimization get the same ones): floats from
    N(0, input_scale²) (as run_graph.GraphRunner draws them),
    bools and integers 0 or 1 (valid token ids, labels and indices);
    placeholders holding symbolic ints get their values."""
    doc = _doc(doc_or_path)
    values = symbol_values(doc, symbols)
    out = []
    for n in doc["nodes"]:
        if n["op"] != "placeholder":
            continue
        if "symint" in n:
            out.append(sym_value(n["symint"], values))
            continue
        shape = [sym_value(d, values) for d in n["shape"]]
        stride = [sym_value(d, values) for d in n["stride"]]
        dtype = getattr(torch, n["dtype"])
        if upcast and n["dtype"] in _FLOATS:
            dtype = torch.float64
        g = torch.Generator(device=device)
        g.manual_seed(_seed("input:" + n["name"]))
        t = torch.empty_strided(shape, stride, dtype=dtype, device=device)
        if dtype.is_floating_point:
            t.copy_(torch.randn(shape, generator=g, device=device, dtype=torch.float32) * input_scale)
        elif dtype == torch.bool:
            t.copy_(torch.randint(0, 2, shape, generator=g, device=device).bool())
        else:
            t.copy_(torch.randint(0, 2, shape, generator=g, device=device))
        out.append(t)
    return out
