"""Capture the graph Inductor's joint-graph passes receive and write it as a
sator.graph file (graph-format.md). Used to try sator on models outside the
corpus; the corpus itself was captured the same way.

    python3 python/sator_torch/export.py OUT_DIR
"""
import json
import math
import operator
import os
import sys

import torch
import torch._inductor.config as inductor_config
from torch._subclasses.fake_tensor import unset_fake_temporarily


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
            d["role"] = "tangent" if n.name.startswith("tangent") else ("primal" if n.name.startswith("primal") else "input")
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
    return {"format": "sator.graph", "version": 1, "name": name, "source": source, "symbols": [], "nodes": nodes}


def capture(model, inputs, name, source, out_dir):
    """Write the joint graph as Inductor's joint-graph passes receive it
    (OUT_DIR/NAME.gK.json) and as they leave it (OUT_DIR/inductor/NAME.gK.json),
    the same two stages as corpus/graphs and corpus/inductor."""
    captured, after = [], []

    def before_hook(graph):
        captured.append(graph_to_doc(graph, graph.owning_module, f"{name}.g{len(captured)}", source))

    def after_hook(graph):
        stage = dict(source, stage="after_inductor_joint_passes")
        after.append(graph_to_doc(graph, graph.owning_module, f"{name}.g{len(after)}", stage))

    inductor_config.joint_custom_pre_pass = before_hook
    inductor_config.joint_custom_post_pass = after_hook
    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(model, dynamic=False)(*inputs)
    inductor_config.joint_custom_pre_pass = None
    inductor_config.joint_custom_post_pass = None
    os.makedirs(os.path.join(out_dir, "inductor"), exist_ok=True)
    for sub, docs in (("", captured), ("inductor", after)):
        for doc in docs:
            with open(os.path.join(out_dir, sub, doc["name"] + ".json"), "w") as f:
                json.dump(doc, f, separators=(",", ":"))
            print("captured", sub or "input", doc["name"], len(doc["nodes"]), "nodes")


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    import transformers
    torch.manual_seed(0)
    # as when the corpus was captured: TF32 lets Inductor's attention patterns
    # pass their dtype check on fp32 graphs
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    models = {
        "qwen2": (transformers.Qwen2Config, transformers.Qwen2ForCausalLM),
        "mistral": (transformers.MistralConfig, transformers.MistralForCausalLM),
    }
    for key, (cfg_cls, model_cls) in models.items():
        try:
            cfg = cfg_cls(hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=8,
                          num_key_value_heads=2, vocab_size=1000, max_position_embeddings=512)
            cfg._attn_implementation = "eager"
            model = model_cls(cfg).cuda().eval()
            ids = torch.randint(0, 1000, (2, 128), device="cuda")
            capture(model, (ids,), f"{key}.infer", {"model": key, "phase": "infer", "dynamic": False,
                                                     "torch": torch.__version__, "batch": 2, "seq": 128,
                                                     "attn": "eager", "stage": "joint"}, out_dir)
        except Exception as e:  # report, try the next model
            print("FAILED", key, type(e).__name__, str(e)[:500])


if __name__ == "__main__":
    main()
