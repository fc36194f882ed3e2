"""Capture the graph Inductor's joint-graph passes receive and write it as a
sator.graph file (graph-format.md). Used to try sator on models outside the
corpus; the corpus itself was captured the same way.

    python3 python/sator_torch/export.py OUT_DIR
"""
import json
import os
import sys

import torch
import torch.nn.functional as F
import torch._inductor.config as inductor_config

try:
    from .graph_doc import graph_to_doc
except ImportError:  # run as a script
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from sator_torch.graph_doc import graph_to_doc


def capture(model, inputs, name, source, out_dir, train=False, dynamic=False, loss=None):
    """Write the joint graph as Inductor's joint-graph passes receive it
    (OUT_DIR/NAME.gK.json) and as they leave it (OUT_DIR/inductor/NAME.gK.json),
    the same two stages as corpus/graphs and corpus/inductor.

    train=False runs the model under no_grad (an inference graph); train=True
    runs it and back-propagates `loss(output)` (default: the output itself,
    which must then be a scalar), so the graph is the joint forward and
    backward. dynamic=True marks sizes symbolic, as the corpus's .dyn graphs.
    Returns the captured documents."""
    captured, after = [], []

    def before_hook(graph):
        captured.append(graph_to_doc(graph, graph.owning_module, f"{name}.g{len(captured)}", source))

    def after_hook(graph):
        stage = dict(source, stage="after_inductor_joint_passes")
        after.append(graph_to_doc(graph, graph.owning_module, f"{name}.g{len(after)}", stage))

    saved = inductor_config.joint_custom_pre_pass, inductor_config.joint_custom_post_pass
    inductor_config.joint_custom_pre_pass = before_hook
    inductor_config.joint_custom_post_pass = after_hook
    torch._dynamo.reset()
    try:
        compiled = torch.compile(model, dynamic=dynamic)
        if train:
            out = compiled(*inputs)
            (loss(out) if loss else out).backward()
        else:
            with torch.no_grad():
                compiled(*inputs)
    finally:
        inductor_config.joint_custom_pre_pass, inductor_config.joint_custom_post_pass = saved
    if out_dir:
        os.makedirs(os.path.join(out_dir, "inductor"), exist_ok=True)
        for sub, docs in (("", captured), ("inductor", after)):
            for doc in docs:
                with open(os.path.join(out_dir, sub, doc["name"] + ".json"), "w") as f:
                    json.dump(doc, f, separators=(",", ":"))
                print("captured", sub or "input", doc["name"], len(doc["nodes"]), "nodes")
    return captured


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
            source = {"model": key, "phase": "infer", "dynamic": False, "torch": torch.__version__, "batch": 2,
                      "seq": 128, "attn": "eager", "stage": "joint"}
            capture(model, (ids,), f"{key}.infer", source, out_dir)
            # Training: the joint graph of a cross-entropy loss on the logits
            # (no dropout in these models' attention).
            model.train()
            capture(model, (ids,), f"{key}.train", dict(source, phase="train", loss="F.cross_entropy"), out_dir,
                    train=True, loss=lambda out: F.cross_entropy(out.logits.view(-1, 1000), ids.view(-1)))
        except Exception as e:  # report, try the next model
            print("FAILED", key, type(e).__name__, str(e)[:500])


if __name__ == "__main__":
    main()
