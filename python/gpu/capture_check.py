"""A fresh capture of corpus/graphs/gpt2-124m.train against the corpus's files (issue 9).

    python3 python/gpu/capture_check.py OUT_DIR [CORPUS_GRAPHS_DIR [VARIANT ...]]

Captures with sator_torch.capture the joint graphs of corpus/README.md's
GPT-2 small training setup (GPT2LMHeadModel from its default config, batch 16,
sequence 1024, bf16 autocast, F.cross_entropy of the float32 logits viewed
as [16384, V]; the token ids serve as the labels, and Inductor's AutoChunker
at 8 chunks, as the corpus's `source` says), once per harness variant
(VARIANTS: where autocast is entered), then compares every graph node by node
with the corpus file of the same name: name, op, arguments, keyword
arguments, shape, stride, dtype, role.
Writes OUT_DIR/capture_check.json (the differences, at most 20 a graph) and
the captured files gzipped.
"""
import gzip
import json
import os
import sys

import torch
import torch.nn.functional as F

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(here))
from sator_torch.export import capture  # noqa: E402

KEYS = ("op", "args", "kwargs", "shape", "stride", "dtype", "role")


def differences(a, b):
    """Where document a (captured) differs from b (the corpus's)."""
    out = []
    if len(a["nodes"]) != len(b["nodes"]):
        out.append(f"{len(a['nodes'])} nodes against {len(b['nodes'])}")
    for x, y in zip(a["nodes"], b["nodes"]):
        if x["name"] != y["name"]:
            out.append(f"node {x['name']} where the corpus has {y['name']}")
            break
        for k in KEYS:
            if k == "args" and x["op"] == "get_attr":
                continue
            if json.dumps(x.get(k)) != json.dumps(y.get(k)) and not (k == "kwargs" and not x.get(k) and not y.get(k)):
                out.append(f"{x['name']}.{k}: {json.dumps(x.get(k))[:120]} vs {json.dumps(y.get(k))[:120]}")
        if len(out) >= 20:
            break
    if json.dumps(a.get("symbols")) != json.dumps(b.get("symbols")):
        out.append("symbols differ")
    return out


VARIANTS = {  # (autocast inside the compiled function, the call under autocast)
    # AOTAutograd traces the backward outside autocast: bias-gradient sums in bf16
    "autocast_inside": (True, False),
    # the joint graph, backward included, traced with autocast on (sum is on
    # autocast's float32 list: sum(..., dtype=float32)); the forward's casts move
    "autocast_outside": (False, True),
    # both: the forward as written inside, the backward traced under autocast
    "autocast_both": (True, True),
}


def capture_variant(variant, model, cfg, ids):
    inside, outside = VARIANTS[variant]

    # The corpus's loss (read off its graph: explicit sizes, then float32 logits):
    # `logits.view(-1, V)` would be recorded with its -1, and autocast's own
    # float32 cast of cross_entropy's input would come after the labels' view.
    def loss_fn(ids, labels):
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=inside):
            logits = model(ids).logits
            return F.cross_entropy(logits.view(16 * 1024, cfg.vocab_size).float(), labels.view(16 * 1024))

    source = {"model": "gpt2-124m", "phase": "train", "batch": 16, "seq": 1024, "autocast": "bf16",
              "loss": "F.cross_entropy", "auto_chunker": 8, "torch": torch.__version__, "stage": "joint"}
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=outside):
        return capture(loss_fn, (ids, ids), "gpt2-124m.train", source, None, train=True)


def main():
    out_dir = sys.argv[1]
    corpus = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.dirname(here)), "corpus", "graphs")
    os.makedirs(out_dir, exist_ok=True)
    import torch._inductor.config as ic
    import transformers
    ic.auto_chunker.enable = True
    ic.auto_chunker.num_chunk = 8
    torch.manual_seed(0)
    cfg = transformers.GPT2Config()
    model = transformers.GPT2LMHeadModel(cfg).cuda().train()
    ids = torch.randint(0, cfg.vocab_size, (16, 1024), device="cuda")
    result = {"torch": torch.__version__, "variants": {}}
    for variant in sys.argv[3:] or VARIANTS:
        docs = capture_variant(variant, model, cfg, ids)
        rows = result["variants"][variant] = []
        for doc in docs:
            path = os.path.join(corpus, doc["name"] + ".json")
            row = {"graph": doc["name"], "nodes": len(doc["nodes"])}
            if os.path.exists(path):
                with open(path) as f:
                    ref = json.load(f)
                row["corpus_nodes"] = len(ref["nodes"])
                row["differences"] = differences(doc, ref)
                row["equal"] = not row["differences"]
            else:
                row["equal"] = False
                row["differences"] = ["no corpus file of that name"]
            with gzip.open(os.path.join(out_dir, f"{variant}.{doc['name']}.json.gz"), "wt") as f:
                json.dump(doc, f, separators=(",", ":"))
            print(f"{variant}: capture {doc['name']}: {row['nodes']} nodes (corpus {row.get('corpus_nodes')}): "
                  f"{'equal' if row['equal'] else 'DIFFERENT ' + '; '.join(row['differences'][:4])}", flush=True)
            rows.append(row)
        with open(os.path.join(out_dir, "capture_check.json"), "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
