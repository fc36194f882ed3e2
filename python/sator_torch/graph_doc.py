"""torch.fx graph -> sator.graph document (docs/graph-format.md): what the
exporter writes and what InductorPass sends to the sator binary."""
import math
import operator
import sys

import torch
from torch._subclasses.fake_tensor import unset_fake_temporarily


def _bound(b):
    """A ValueRanges bound as the format writes it: an int, or None when unbounded."""
    try:
        v = int(b)
    except (TypeError, ValueError, OverflowError):
        return None
    return v if abs(v) < (1 << 62) else None


def graph_symbols(graph):
    """The size symbols the graph's values use, with their hints and ranges
    from the shape environment (dynamic=True captures); [] for static graphs."""
    found = {}

    def visit(x):
        if isinstance(x, torch.SymInt):
            node = x.node
            for s in node.expr.free_symbols:
                found.setdefault(str(s), (s, node.shape_env))
        elif isinstance(x, torch.Tensor):
            for d in list(x.shape) + list(x.stride()):
                visit(d)
        elif isinstance(x, (list, tuple)):
            for y in x:
                visit(y)

    for n in graph.nodes:
        visit(n.meta.get("val"))
    out = []
    for name in sorted(found):
        sym, env = found[name]
        hint = env.var_to_val.get(sym) if env is not None else None
        rng = env.var_to_range.get(sym) if env is not None else None
        out.append({"name": name, "hint": int(hint) if hint is not None else 2,
                    "min": _bound(rng.lower) if rng is not None else 2,
                    "max": _bound(rng.upper) if rng is not None else None})
    return out


def _size(v):
    return int(v) if not isinstance(v, torch.SymInt) else str(v)


def _tensor(val):
    return {"shape": [_size(d) for d in val.shape], "stride": [_size(s) for s in val.stride()],
            "dtype": str(val.dtype).replace("torch.", "")}


def _value(v):
    if isinstance(v, torch.fx.Node):
        return {"node": v.name}
    if isinstance(v, (list, tuple)):
        return [_value(x) for x in v]
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return {"float": "nan"}
        if math.isinf(v):
            return {"float": "inf" if v > 0 else "-inf"}
        return v
    if isinstance(v, torch.SymInt):
        return {"sym": str(v)}
    if isinstance(v, torch.dtype):
        return {"dtype": str(v).replace("torch.", "")}
    if isinstance(v, torch.device):
        return {"device": str(v)}
    if isinstance(v, (torch.memory_format, torch.layout)):
        return {"enum": str(v)}
    if isinstance(v, str):
        return v
    return {"repr": repr(v)}


def _op_name(target):
    if target is operator.getitem:
        return "getitem"
    if isinstance(target, torch._ops.OpOverload):
        ns, name = target._schema.name.split("::")
        return f"{ns}.{name}.{target._overloadname or 'default'}"
    if getattr(target, "__module__", "") in ("_operator", "operator"):
        return f"_operator.{target.__name__}"
    return f"hop.{getattr(target, '__name__', str(target))}"


def graph_to_doc(graph, gm, name, source):
    nodes = []
    for n in graph.nodes:
        d = {"name": n.name}
        val = n.meta.get("val")
        if n.op == "placeholder":
            d["op"] = "placeholder"
            # AOTAutograd's names: tangents_N, primals_N (the AutoChunker's
            # tangent_overriden_as_one placeholder is an ordinary input).
            d["role"] = ("tangent" if n.name.startswith("tangents_") else
                         "primal" if n.name.startswith("primals_") else "input")
        elif n.op == "output":
            d["op"] = "output"
            d["args"] = [_value(n.args[0])]
            nodes.append(d)
            continue
        elif n.op == "get_attr":
            d["op"] = "get_attr"
            d["target"] = n.target
            attr = getattr(gm, n.target, None) if gm is not None else None
            real = getattr(attr, "constant", None)  # a fake tensor keeps the real constant here
            d["value"] = None
            for t in (real, attr):
                if isinstance(t, torch.Tensor) and t.numel() <= 64:
                    try:
                        # The joint passes run under Inductor's fake mode, which
                        # refuses to read a real tensor: step out of it.
                        with unset_fake_temporarily():
                            d["value"] = t.tolist()
                        break
                    except RuntimeError:  # a fake tensor without data
                        pass
            if d["value"] is None:
                print(f"note: {name}: constant {n.target} has no readable data "
                      f"({type(attr).__name__}, {tuple(getattr(attr, 'shape', ()))}, "
                      f"users: {[u.format_node() for u in n.users]})", file=sys.stderr)
            d["args"] = []
        else:
            d["op"] = _op_name(n.target)
            d["args"] = [_value(a) for a in n.args]
            if n.kwargs:
                d["kwargs"] = {k: _value(v) for k, v in n.kwargs.items()}
        if isinstance(val, torch.Tensor):
            d.update(_tensor(val))
        elif isinstance(val, (list, tuple)):
            d["outputs"] = [_tensor(x) if isinstance(x, torch.Tensor) else
                            ({"scalar": int(x)} if isinstance(x, (int, torch.SymInt)) else None) for x in val]
        elif isinstance(val, (int, torch.SymInt)):
            d["symint"] = _size(val)
        nodes.append(d)
    return {"format": "sator.graph", "version": 1, "name": name, "source": source, "symbols": graph_symbols(graph),
            "nodes": nodes}


