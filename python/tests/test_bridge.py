"""Bridge tests that need no GPU (ctest python_bridge; docs/bridge.md).

    python3 python/tests/test_bridge.py CORPUS_DIR [SATOR_BINARY]

1. Format round trip: every static corpus graph is loaded into a GraphModule,
   its values are propagated with fake tensors (no data, no GPU), and the
   graph is written back with the exporter's own graph_to_doc: every node's
   name, op, arguments, shape and dtype must equal the corpus file's.
2. A sator.chunked graph (sator's output, when the binary is given) runs on
   the CPU and equals its input graph.
Without torch it prints why and exits 77, which ctest reports as skipped.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import torch
except ImportError:
    print("skipped: torch is not installed here (the bridge tests need it; the GPU machine has it)")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from sator_torch.graph_doc import graph_to_doc  # noqa: E402
from sator_torch.loader import example_inputs, load  # noqa: E402


def fake_roundtrip(path):
    """Differences between a corpus file and its load -> fake run -> export."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.passes.fake_tensor_prop import FakeTensorProp

    with open(path) as f:
        doc = json.load(f)
    gm = load(doc, device="cpu")
    mode = FakeTensorMode(allow_non_fake_inputs=True)
    with mode:
        inputs = [torch.empty_strided([int(d) for d in n["shape"]], [int(s) for s in n["stride"]],
                                      dtype=getattr(torch, n["dtype"]), device="cpu")
                  for n in doc["nodes"] if n["op"] == "placeholder"]
    FakeTensorProp(gm, mode=mode).propagate_dont_convert_inputs(*inputs)
    back = graph_to_doc(gm.graph, gm, doc["name"], doc["source"])
    problems = []
    orig = {n["name"]: n for n in doc["nodes"]}
    for n in back["nodes"]:
        o = orig.get(n["name"])
        if o is None:
            problems.append(f"{n['name']}: not in the file")
            continue
        if n["op"] == "get_attr":
            continue  # the constant is now a buffer of the module; its value is checked by running it
        for key in ("op", "args", "kwargs", "shape", "dtype"):
            a, b = o.get(key), n.get(key)
            if key == "args" and o["op"] == "placeholder":
                continue
            if key in ("args", "kwargs"):
                a, b = json.dumps(a).replace('"cuda:0"', '"cpu"'), json.dumps(b)
            if a != b and not (key == "kwargs" and not a and not b):
                problems.append(f"{n['name']}.{key}: {str(a)[:80]} vs {str(b)[:80]}")
    if len(back["nodes"]) != len(doc["nodes"]):
        problems.append(f"{len(back['nodes'])} nodes vs {len(doc['nodes'])}")
    return problems


def chunked_sums(corpus, sator):
    """A chunked training graph whose results include sums (the LM-head weight
    gradient: gpt2-124m.train.g1, the AutoChunker's own body, rechunked), loaded in each of the loader's three ways of running chunks:
    eagerly ("module"), as FX submodules and through invoke_subgraph (what
    InductorPass hands Inductor; the sums run through the bodies). Each must
    equal the unchunked graph on the CPU. Returns the number of failures."""
    src = os.path.join(corpus, "graphs", "gpt2-124m.train.g1.json")
    failures = 0
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "chunked.json")
        subprocess.run([sator, "chunk", src, "--chunks", "3", "--min-bytes", "1", "-o", out], check=True,
                       capture_output=True)
        with open(out) as f:
            chunked = json.load(f)
        node = next(n for n in chunked["nodes"] if n["op"] == "sator.chunked")
        assert ["sum"] in node["kwargs"]["outputs"], "expected a summed result in the chunked region"
        inputs = example_inputs(src, device="cpu")
        a = load(src, device="cpu", named_random=True)(*inputs)
        for how in ("module", "fx", "invoke_subgraph"):
            try:
                b = load(chunked, device="cpu", subgraphs=how, named_random=True)(*inputs)
                err = max(((x.double() - y.double()).norm() / max(y.double().norm(), 1e-4 * y.numel() ** 0.5)).item()
                          for x, y in zip(b, a) if isinstance(y, torch.Tensor) and y.dtype.is_floating_point)
                ok = err < 2e-2  # bf16: the chunks sum in another order
                print(f"chunked gpt2-124m.train.g1 ({how}) on the CPU: relative error {err:.2e} {'ok' if ok else 'FAIL'}")
            except Exception as e:  # noqa: BLE001
                ok = False
                print(f"chunked gpt2-124m.train.g1 ({how}) on the CPU: FAIL {type(e).__name__}: {str(e)[:300]}")
            failures += not ok
    return failures


def main():
    corpus = sys.argv[1]
    sator = sys.argv[2] if len(sys.argv) > 2 else None
    failures = 0
    graphs = sorted(f for f in os.listdir(os.path.join(corpus, "graphs")) if f.endswith(".json") and ".dyn." not in f)
    for name in graphs:
        try:
            problems = fake_roundtrip(os.path.join(corpus, "graphs", name))
        except Exception as e:  # noqa: BLE001
            problems = [f"{type(e).__name__}: {e}"[:300]]
        print(f"round trip {name}: {'ok' if not problems else 'FAIL ' + '; '.join(problems[:3])}")
        failures += bool(problems)
    if sator:
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(corpus, "graphs", "zoo_sfdp1.infer.g0.json")
            out = os.path.join(d, "chunked.json")
            subprocess.run([sator, "chunk", src, "--min-bytes", "1", "--min-ratio", "1.01", "--chunks", "3", "-o", out],
                           check=True, capture_output=True)
            with open(out) as f:
                chunked = json.load(f)
            assert any(n["op"] == "sator.chunked" for n in chunked["nodes"]), "sator chunk did not chunk"
            inputs = example_inputs(src, device="cpu")
            a = load(src, device="cpu")(*inputs)
            b = load(chunked, device="cpu")(*inputs)
            err = max(((x.double() - y.double()).norm() / y.double().norm()).item() for x, y in zip(b, a))
            ok = err < 1e-5
            print(f"chunked zoo_sfdp1 on the CPU: relative error {err:.2e} {'ok' if ok else 'FAIL'}")
            failures += not ok
        failures += chunked_sums(corpus, sator)
    print(f"{failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
