"""Decomposing the composite calls of a rebuilt graph (ops Inductor only
decomposes, such as a composite SDPA call) in one make_fx trace, and putting
tensor constants back behind lift_fresh_copy: steps of the pass's rebuild
(sator_torch.inductor_pass)."""
import torch
from torch import fx


def _relift_constants(graph, root):
    """AOTAutograd reads a tensor constant through lift_fresh_copy, which is
    how Inductor's fake-tensor pass turns it fake; sator's layout rules drop
    that copy (by value an identity), so it goes back in front of every use."""
    lift = torch.ops.aten.lift_fresh_copy.default
    for n in list(graph.nodes):
        if n.op != "get_attr" or not isinstance(getattr(root, n.target, None), torch.Tensor):
            continue
        users = [u for u in n.users if u.target is not lift]
        if not users:
            continue
        with graph.inserting_after(n):
            copy = graph.call_function(lift, (n,))
        for u in users:
            u.replace_input_with(n, copy)


class _Slot:
    def __init__(self, i):
        self.i = i


def _substitute(x, fn):
    if isinstance(x, (list, tuple)):
        return type(x)(_substitute(y, fn) for y in x) if isinstance(x, tuple) else [_substitute(y, fn) for y in x]
    if isinstance(x, dict):
        return {k: _substitute(v, fn) for k, v in x.items()}
    return fn(x)


def _is_composite(target):
    return isinstance(target, torch._ops.OpOverload) and torch._C._dispatch_has_kernel_for_dispatch_key(
        target.name(), "CompositeImplicitAutograd")


def _meta_key(v):
    """A hashable description of a node's value: what a decomposition's
    trace depends on (sizes, strides, dtype, device, grad), SymInts by name."""
    if isinstance(v, torch.Tensor):
        return ("T", tuple(str(d) for d in v.shape), tuple(str(d) for d in v.stride()), str(v.dtype),
                str(v.device), bool(v.requires_grad))
    if isinstance(v, (list, tuple)):
        return tuple(_meta_key(x) for x in v)
    return ("V", type(v).__name__, str(v))


def _decomposition_key(target, args, kwargs, inputs):
    """The memo key of one composite call, or None where an argument has no
    faithful text form (the call is then traced on its own)."""
    def plain(x):
        if isinstance(x, _Slot):
            return ("slot", x.i)
        if isinstance(x, (list, tuple)):
            return tuple(plain(y) for y in x)
        if isinstance(x, dict):
            return tuple(sorted((k, plain(v)) for k, v in x.items()))
        if x is None or isinstance(x, (bool, int, float, str, torch.dtype, torch.device, torch.memory_format,
                                       torch.layout, torch.SymInt)):
            return (type(x).__name__, str(x))
        raise TypeError(type(x).__name__)
    try:
        return (target, plain(args), plain(kwargs), tuple(_meta_key(n.meta.get("val")) for n in inputs))
    except TypeError:
        return None


def _refresh_fake_values(first, stop, mode):
    """Fresh fake values for the nodes from `first` up to `stop` (a copy of a
    memoized decomposition): each node gets a tensor of its own, as a trace
    would give it, so no two nodes look like one storage to Inductor."""
    val = lambda a: a.meta.get("val") if isinstance(a, fx.Node) else a  # noqa: E731
    n = first
    allow = mode.allow_non_fake_inputs
    mode.allow_non_fake_inputs = True
    try:
        with mode:
            while n is not stop:
                if n.op == "call_function":
                    args = fx.node.map_aggregate(n.args, val)
                    kwargs = fx.node.map_aggregate(n.kwargs, val)
                    n.meta["val"] = n.target(*args, **kwargs)
                n = n.next
    finally:
        mode.allow_non_fake_inputs = allow


def _trace_together(calls, table, mode):
    """One make_fx trace of several composite calls side by side (each on its
    own inputs), split into one fx.Graph per call: a trace's fixed cost
    (tracer, modes, the module's code) is most of what tracing one call costs,
    and a model has a handful of distinct calls (q/k/v/o, up, down, head).
    Returns [(graph, module)] in the calls' order; module holds constants."""
    from torch.fx.experimental.proxy_tensor import make_fx

    widths = [len(inputs) for _, _, _, inputs in calls]

    def fn(*vals):
        outs, at = [], 0
        for (target, args, kwargs, _), w in zip(calls, widths):
            mine = vals[at:at + w]
            at += w
            put = lambda x, mine=mine: mine[x.i] if isinstance(x, _Slot) else x  # noqa: E731
            outs.append(target(*_substitute(args, put), **_substitute(kwargs, put)))
        return outs

    def fresh(v):
        # A tensor of its own per slot: make_fx knows a tensor's proxy by the
        # tensor, so one value passed in two slots (q, k and v read the same
        # hidden state) would leave every use on the last slot's placeholder.
        if not isinstance(v, torch.Tensor):
            return v
        return torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device=v.device,
                                   requires_grad=v.requires_grad)

    allow = mode.allow_non_fake_inputs
    mode.allow_non_fake_inputs = True
    try:
        with mode:
            vals = [fresh(n.meta["val"]) for _, _, _, inputs in calls for n in inputs]
            gm = make_fx(fn, decomposition_table=table, tracing_mode="real")(*vals)
    finally:
        mode.allow_non_fake_inputs = allow
    nodes = list(gm.graph.nodes)
    placeholders = [n for n in nodes if n.op == "placeholder"]
    results = nodes[-1].args[0]
    pieces, at = [], 0
    for k, w in enumerate(widths):
        mine = placeholders[at:at + w]
        at += w
        need, todo = set(mine), []
        fx.node.map_arg(results[k], todo.append)
        while todo:
            n = todo.pop()
            if n not in need:
                need.add(n)
                todo.extend(n.all_input_nodes)
        sub = fx.Graph()
        env = {}
        for n in nodes:
            if n in need:
                env[n] = sub.node_copy(n, lambda a: env[a])
        sub.output(fx.node.map_arg(results[k], lambda a: env[a]))
        pieces.append((sub, gm))
    return pieces


def _slotted(node):
    """A call's args and kwargs with its fx.Node arguments as _Slots, and
    those nodes in slot order."""
    inputs = []

    def slot(x):
        if isinstance(x, fx.Node):
            inputs.append(x)
            return _Slot(len(inputs) - 1)
        return x

    return _substitute(node.args, slot), _substitute(dict(node.kwargs), slot), inputs


def _composite_calls(graph):
    """Each composite call of `graph`: (node, args, kwargs, inputs as
    _slotted gives them, memo key)."""
    found = []
    for node in graph.nodes:
        if node.op == "call_function" and _is_composite(node.target):
            args, kwargs, inputs = _slotted(node)
            found.append((node, args, kwargs, inputs, _decomposition_key(node.target, args, kwargs, inputs)))
    return found


def decompose_composites(root, graph, mode):
    """Replaces each call of a CompositeImplicitAutograd op in `graph` by what
    PyTorch's dispatcher decomposes it into (traced with make_fx on the node's
    fake values), metadata included. Calls alike in op, arguments and input
    sizes/strides/dtypes (a model's layers) are traced once, and the distinct
    ones in one trace together (_trace_together): tracing is most of the
    pass's Python time, a copy with fresh fake values is a tenth of it."""
    try:  # what Inductor itself decomposes (t, for one, has no lowering)
        from torch._inductor.decomposition import select_decomp_table
        table = select_decomp_table()
    except ImportError:
        table = None

    calls = _composite_calls(graph)
    if not calls:
        return
    firsts, seen = [], set()
    for c in calls:
        if c[4] is None or c[4] not in seen:
            firsts.append(c)
            if c[4] is not None:
                seen.add(c[4])
    try:
        pieces = _trace_together([(c[0].target, c[1], c[2], c[3]) for c in firsts], table, mode)
    except Exception:  # one call the joint trace cannot take: each on its own
        pieces = [_trace_together([(c[0].target, c[1], c[2], c[3])], table, mode)[0] for c in firsts]
    traced = {}  # memo key -> the traced decomposition (its constants already on root)
    by_node = {}
    for c, (sub, module) in zip(firsts, pieces):
        for n in sub.nodes:  # constants the decomposition made
            if n.op == "get_attr":
                # A name root does not hold yet: every trace names its first
                # constant _tensor_constant0 (the per-call fallback traces
                # apart), and a plain tensor attribute is no buffer to count.
                k = 0
                while hasattr(root, f"_sator_decomp_{k}"):
                    k += 1
                name = f"_sator_decomp_{k}"
                value = getattr(module, n.target)
                setattr(root, name, value)
                n.target = name
                if isinstance(value, torch.Tensor) and not isinstance(n.meta.get("val"), torch._subclasses.FakeTensor):
                    n.meta["val"] = mode.from_tensor(value)
        by_node[c[0]] = sub
        if c[4] is not None:
            traced[c[4]] = sub
    for node, _, _, _, key in calls:
        # Its inputs now: a composite that read an earlier one reads that
        # one's decomposition since it was replaced.
        inputs = _slotted(node)[2]
        reused = node not in by_node
        sub = traced[key] if reused else by_node[node]
        placeholders = [n for n in sub.nodes if n.op == "placeholder"]
        val_map = dict(zip(placeholders, inputs))
        before = node.prev
        with graph.inserting_before(node):
            out = graph.graph_copy(sub, val_map)
        if reused:
            _refresh_fake_values(before.next, node, mode)
        node.replace_all_uses_with(out)
        graph.erase_node(node)
    graph.lint()
    if isinstance(root, fx.GraphModule) and root.graph is graph:
        root.recompile()
