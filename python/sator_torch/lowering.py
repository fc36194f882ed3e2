"""Whether Inductor can lower a rebuilt graph, and whether a joint graph's
forward outputs stay computable without tangents: the checks the pass runs
before it accepts sator's graph (sator_torch.inductor_pass)."""
import operator

import torch
from torch import fx


class NotLowerable(Exception):
    """sator's rebuilt graph holds an op Inductor cannot lower here."""


def _tangent_dependence(graph):
    """Per output position: whether the value depends on a tangent input."""
    dep = {}
    outs = []
    for n in graph.nodes:
        if n.op == "placeholder":
            dep[n] = n.name.startswith("tangents")
        elif n.op == "output":
            outs = list(torch.utils._pytree.tree_leaves(n.args[0]))
        else:
            dep[n] = any(dep.get(a, False) for a in n.all_input_nodes)
    return [bool(dep.get(o, False)) if isinstance(o, fx.Node) else False for o in outs]


def forward_outputs_on_tangents(old, new):
    """Output positions that `old` computes without tangents and `new` would
    compute from one: a joint graph's forward outputs must stay computable
    from the primals alone, or the partitioner fails ("was invalid, but is
    output") — a chunked region reading a tangent and also yielding a
    forward value does that."""
    a, b = _tangent_dependence(old), _tangent_dependence(new)
    if len(a) != len(b):
        return [f"{len(a)} outputs became {len(b)}"]
    return [i for i, (x, y) in enumerate(zip(a, b)) if not x and y]


def _call_targets(graph):
    return {n.target for n in graph.nodes if n.op == "call_function"}


def unlowerable_ops(graphs, known=None):
    """(node name, op, why) for every call in `graphs` that Inductor, as
    configured in this process, could not lower in a joint graph: an op with
    no lowering that Inductor only decomposes (its decompositions ran before
    the joint passes, so it would hit make_fallback's "both a fallback and a
    decomp" assertion), a higher-order op without a lowering, or an op with
    neither while implicit fallbacks are off. Ops the graph `known` already
    calls are accepted: Inductor was going to lower them anyway."""
    import torch._inductor.config as inductor_config
    from torch._inductor import decomposition, lowering

    lowerings = lowering.lowerings
    allow_list = getattr(lowering, "FALLBACK_ALLOW_LIST", set())
    decomps = set(decomposition.select_decomp_table()) | set(decomposition.decompositions)
    accepted = _call_targets(known) if known is not None else set()
    bad = []
    for g in graphs:
        for n in g.nodes:
            t = n.target
            if n.op != "call_function" or t in accepted or t is operator.getitem or t in lowerings:
                continue
            if isinstance(t, torch._ops.HigherOrderOperator):
                bad.append((n.name, str(t), "a higher-order op without an Inductor lowering"))
            elif not isinstance(t, torch._ops.OpOverload):
                continue  # Python functions on SymInts (operator.mul, ...) run at trace time
            elif t in decomps:
                bad.append((n.name, str(t), "Inductor decomposes it and has no lowering for it"))
            elif not inductor_config.implicit_fallbacks and t.name().split(".")[0] not in allow_list:
                bad.append((n.name, str(t), "no lowering, and implicit fallbacks are off"))
    return bad
