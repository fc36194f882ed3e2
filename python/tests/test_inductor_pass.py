"""InductorPass never breaks a compile (issue 21). Needs torch and, for the
compile checks, a GPU (runs on the GPU machine; run_all.sh zoo).

    python3 python/tests/test_inductor_pass.py [SATOR]

1. unlowerable_ops flags a call Inductor only decomposes (aten._softmax),
   accepts one it lowers (aten.amax) and one the input graph already had.
2. A deliberately unlowerable output: with target="any" sator recomposes an
   unfused softmax into aten._softmax (which Inductor cannot lower after its
   decompositions). The pass must decline that graph with a warning, and
   torch.compile must run and equal plain torch.compile.
3. The default target (inductor-joint) on the same function: the pass
   accepts sator's graph, and the compile runs and equals plain; with all
   defaults the graph (no attention fused, nothing chunked) is left alone.
4. A rebuilt joint graph whose forward output would read a tangent (what
   AOTAutograd's partitioner rejects) is caught.
5. decompose_composites traces alike calls once and distinct ones together:
   three aten.linear calls, two alike, and two reshapes (one reading the
   first linear's input) make one trace; every
   node keeps a fake value of its own, and the decomposed graph computes
   what the composites did.
6. The rebuilt graph's fake values: a node the input had (same name, op,
   arguments) keeps the input's value where its inputs' values are the
   input's, or, for an op returning a tensor of its own, of the same type; a
   view over a changed base and a node over a changed type are propagated.
Without torch it exits 77 (skipped); without a GPU parts 2-3 are skipped.
"""
import os
import sys
import warnings

try:
    import torch
except ImportError:
    print("skipped: torch is not installed here")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from sator_torch.inductor_pass import InductorPass, find_sator, unlowerable_ops  # noqa: E402

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def crafted_graph(op):
    g = torch.fx.Graph()
    x = g.placeholder("x")
    if op == "softmax":
        y = g.call_function(torch.ops.aten._softmax.default, (x, -1, False))
    else:
        y = g.call_function(torch.ops.aten.amax.default, (x, [-1], True))
    g.output((y,))
    return g


def part1():
    import torch._inductor.compile_fx  # noqa: F401  (every lowering registered, as in a compile)

    bad = unlowerable_ops([crafted_graph("softmax")])
    check(len(bad) == 1 and "_softmax" in bad[0][1], f"aten._softmax is flagged: {bad}")
    check(unlowerable_ops([crafted_graph("amax")]) == [], "aten.amax is accepted (it has a lowering)")
    check(unlowerable_ops([crafted_graph("softmax")], known=crafted_graph("softmax")) == [],
          "an op the input graph already calls is accepted")


def attention(q, k, v):
    # The failing form: bf16 scores, a float32 softmax, cast back.
    s = (q @ k.transpose(-1, -2)) * 0.125
    p = torch.softmax(s.float() + 0.0, dim=-1).to(q.dtype)
    return (p @ v).sum(dim=1)


def compiled(pass_obj, args, tag):
    import torch._inductor.config as ic

    ns = {"attention": attention}
    exec(compile(f"def run_{tag}(q, k, v):\n    return attention(q, k, v)\n", tag, "exec"), ns)
    fn = torch.compile(ns[f"run_{tag}"])
    with ic.patch({"joint_custom_pre_pass": pass_obj} if pass_obj else {}), torch.no_grad():
        return fn(*args)


def part2(sator):
    g = torch.Generator(device="cuda").manual_seed(0)
    args = [torch.randn(2, 4, 64, 32, device="cuda", generator=g, dtype=torch.bfloat16) for _ in range(3)]
    ref = compiled(None, args, "plain")
    p = InductorPass(sator=sator, target="any", verbose=False, decline_without_gain=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = compiled(p, args, "any")
    skipped = [r.get("skipped", "") for r in p.reports]
    check(any("cannot lower" in s for s in skipped),
          f"target=any: the graph holding aten._softmax is declined ({skipped})")
    check(any("unchanged" in str(w.message) for w in caught), "... with a warning")
    check(torch.allclose(out.float(), ref.float(), atol=1e-2, rtol=1e-2), "... and the compile runs and equals plain")

    p = InductorPass(sator=sator, verbose=False, decline_without_gain=False)
    out = compiled(p, args, "joint")
    check(p.reports and not any(r.get("skipped") for r in p.reports),
          f"target=inductor-joint: sator's graph is accepted ({p.reports})")
    check(torch.allclose(out.float(), ref.float(), atol=1e-2, rtol=1e-2), "... and the compile runs and equals plain")

    p = InductorPass(sator=sator, verbose=False)
    compiled(p, args, "gain")
    check(any("nothing to gain" in r.get("skipped", "") for r in p.reports),
          f"defaults: a graph with no attention fused and no chunking is left alone ({p.reports})")


def part4():
    """The partitioner's invariant: forward outputs stay free of tangents."""
    from sator_torch.inductor_pass import forward_outputs_on_tangents

    def joint(tangent_in_forward):
        g = torch.fx.Graph()
        x, t = g.placeholder("primals_1"), g.placeholder("tangents_1")
        y = g.call_function(torch.ops.aten.mul.Tensor, (x, t if tangent_in_forward else x))
        dx = g.call_function(torch.ops.aten.mul.Tensor, (t, x))
        g.output((y, dx))
        return g

    check(forward_outputs_on_tangents(joint(False), joint(False)) == [], "same dependence: accepted")
    check(forward_outputs_on_tangents(joint(False), joint(True)) == [0],
          "a forward output made to read a tangent is caught")


def part5():
    """Memoized decompositions: alike calls traced once, values their own."""
    import torch.fx.experimental.proxy_tensor as proxy_tensor
    from torch._subclasses.fake_tensor import FakeTensorMode
    from sator_torch.inductor_pass import decompose_composites

    mode = FakeTensorMode()
    g = torch.fx.Graph()
    x, w, w2 = g.placeholder("x"), g.placeholder("w"), g.placeholder("w2")
    lin = torch.ops.aten.linear.default
    a = g.call_function(lin, (x, w))
    b = g.call_function(lin, (a, w))      # alike: same op, sizes, strides, dtype
    c = g.call_function(lin, (b, w2))     # another weight size: its own decomposition
    r = g.call_function(torch.ops.aten.reshape.default, (c, [15]))  # another op, same trace
    m = g.call_function(torch.ops.aten.reshape.default, (x, [24]))  # reads x, as the first linear does
    g.output((r, m))
    real = [torch.randn(3, 8), torch.randn(8, 8), torch.randn(5, 8)]
    for ph, t in zip([x, w, w2], real):
        ph.meta["val"] = mode.from_tensor(t)
    for n, shape in ((a, (3, 8)), (b, (3, 8)), (c, (3, 5)), (r, (15,)), (m, (24,))):
        n.meta["val"] = mode.from_tensor(torch.empty(shape))
    gm = torch.fx.GraphModule(torch.nn.Module(), g)
    traces = []
    original = proxy_tensor.make_fx

    def counting(*args, **kwargs):
        traces.append(1)
        return original(*args, **kwargs)

    proxy_tensor.make_fx = counting
    try:
        decompose_composites(gm, gm.graph, mode)
    finally:
        proxy_tensor.make_fx = original
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    check(not any(n.target in (lin, torch.ops.aten.reshape.default) for n in calls), "every composite decomposed")
    check(len(traces) == 1, f"four distinct calls: traced {len(traces)} times (want 1, together)")
    vals = [n.meta.get("val") for n in calls]
    check(all(v is not None for v in vals) and len({id(v) for v in vals}) == len(vals),
          "every decomposed node has a fake value of its own")
    want = torch.nn.functional.linear(torch.nn.functional.linear(torch.nn.functional.linear(
        real[0], real[1]), real[1]), real[2]).reshape(15)
    got = gm(*real)
    check(isinstance(got, (list, tuple)) and len(got) == 2, "both outputs")
    check(torch.allclose(got[0], want, atol=1e-5), "the decomposed graph computes the linears")
    check(torch.equal(got[1], real[0].reshape(24)), "... and the reshape of x, which the first linear reads too")


def part6():
    """Fake values kept across the rebuild (_ValueReuse)."""
    from sator_torch.inductor_pass import _ValueReuse
    aten = torch.ops.aten

    def graph(b_op, b_args=()):
        g = torch.fx.Graph()
        x = g.placeholder("x")
        a = g.create_node("call_function", aten.relu.default, (x,), name="a")
        b = g.create_node("call_function", b_op, (a,) + b_args, name="b")
        c = g.create_node("call_function", aten.neg.default, (b,), name="c")
        e = g.create_node("call_function", aten.view.default, (b, [12]), name="e")
        d = g.create_node("call_function", aten.mul.Scalar, (a, 2.0), name="d")
        g.output((c, d, e))
        return g

    def run(g):
        """Values as a propagation would give them."""
        for n in g.nodes:
            if n.op == "placeholder":
                n.meta["val"] = x_val
            elif n.op == "call_function":
                args = torch.fx.node.map_aggregate(n.args, lambda a: a.meta["val"] if isinstance(a, torch.fx.Node) else a)
                n.meta["val"] = n.target(*args)

    x_val = torch.randn(3, 4)
    old = graph(aten.exp.default)
    run(old)
    old_vals = {n.name: n.meta.get("val") for n in old.nodes}

    def reused(new):
        reuse, kept = _ValueReuse(new, old), set()
        for n in new.nodes:
            if n.op == "placeholder":
                n.meta["val"] = x_val
            elif n.op == "call_function":
                v = reuse.value_for(n)
                if v is not None:
                    n.meta["val"] = v
                    kept.add(n.name)
                else:
                    args = torch.fx.node.map_aggregate(n.args, lambda a: a.meta["val"] if isinstance(a, torch.fx.Node) else a)
                    n.meta["val"] = n.target(*args, **n.kwargs)
        return kept, {n.name: n.meta.get("val") for n in new.nodes}

    kept, vals = reused(graph(aten.sin.default))
    check(kept == {"a", "c", "d"}, f"b changed, same type: kept {sorted(kept)} (want a, c, d; the view e over a new b is not)")
    check(vals["a"] is old_vals["a"], "... a kept node has the input's own value")
    check(vals["e"] is not old_vals["e"] and vals["e"]._base is vals["b"], "... the view e is propagated over the new b")
    kept, _ = reused(graph(aten._to_copy.default, ()))
    check("c" in kept, "b as a float32 copy: c kept (b's type is the same)")
    g16 = graph(aten.exp.default)
    for n in g16.nodes:
        if n.name == "b":
            n.target = aten._to_copy.default
            n.kwargs = {"dtype": torch.float16}
    kept, _ = reused(g16)
    check("c" not in kept and "a" in kept, f"b now float16: c propagated again (kept {sorted(kept)})")


def part7():
    """A missing binary is an error when the pass is made, not a silent no-op
    on every compile (issue 43); missing_ok=True keeps the old warning."""
    saved = os.environ.get("SATOR")
    os.environ["SATOR"] = "/nonexistent/sator-typo"
    try:
        raised = None
        try:
            InductorPass(sator="/nonexistent/sator-typo", verbose=False)
        except FileNotFoundError as e:
            raised = str(e)
        check(find_sator("/nonexistent/sator-typo") is None, "a path given is not replaced by another binary")
        check(raised is not None and "sator-typo" in raised and "missing_ok" in raised,
              f"a missing binary raises naming where it looked ({raised})")
        p = InductorPass(sator="/nonexistent/sator-typo", verbose=False, missing_ok=True)
        check(p.sator is None, "missing_ok=True constructs the pass without a binary")
    finally:
        if saved is None:
            os.environ.pop("SATOR", None)
        else:
            os.environ["SATOR"] = saved


def main():
    sator = sys.argv[1] if len(sys.argv) > 1 else None
    part1()
    part7()
    part4()
    part5()
    part6()
    if torch.cuda.is_available():
        part2(sator)
    else:
        print("skipped parts 2-3: no GPU")
    print(f"{len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
