"""The zoo's architectures, setups and rows, and how a row is judged.

Pure Python (no torch): the harness's logic is tested without a GPU
(python/tests/test_zoo_logic.py). zoo_row.py builds and measures one row;
zoo.py runs the rows; zoo_report.py writes the table and the chart.

The architecture list is the issue's, exactly: more architectures are kept
aside as the unseen check, so none is added here.
"""

# Sizes where GPU time is measurable (the issue's): 4 layers, hidden 1024,
# 16 heads, batch 8, sequence 1024; ViT: 224x224 images, batch 64. "tiny" is
# for trying the harness itself (seconds per row).
SIZES = {
    "full": {"layers": 4, "hidden": 1024, "heads": 16, "ffn": 4096, "batch": 8, "seq": 1024, "image_batch": 64,
             "kv_heads": 4, "image": 224},
    "tiny": {"layers": 2, "hidden": 128, "heads": 4, "ffn": 256, "batch": 2, "seq": 64, "image_batch": 2,
             "kv_heads": 2, "image": 32},
    # Issue 25's Llama-style step with a 128k vocabulary and a small batch
    # (the LM head and loss dominate the peak): batch 2, sequence 2048.
    "vocab128k": {"layers": 4, "hidden": 1024, "heads": 16, "ffn": 4096, "batch": 2, "seq": 2048, "image_batch": 64,
                  "kv_heads": 4, "image": 224, "vocab": 128256},
}


def config_kwargs(arch, size):
    """The config arguments of an architecture at a size: the size's
    vocabulary where it names one, else the model's default."""
    kw = ARCHS[arch][3](size)
    if "vocab" in size:
        kw["vocab_size"] = size["vocab"]
    return kw


def graph_name(arch, setup, phase, size="full"):
    """A row's graphs' corpus name: arch.setup.phase, the size after the
    arch where it is not the zoo's own (llama-vocab128k.amp-sdpa.train)."""
    tag = "" if size in ("full", "tiny") else "-" + size
    return f"{arch}{tag}.{setup}.{phase}"

# arch -> (config class, model class, kind, config kwargs from a size dict).
# kind: "causal" (token ids -> next-token logits), "masked" (encoder, token
# ids + attention mask -> token logits), "vision" (pixels -> class logits).
# Position tables are sized to the sequence; vocabularies are each model's
# default (the LM head is part of the workload).


def _gpt2(s):
    return dict(n_layer=s["layers"], n_embd=s["hidden"], n_head=s["heads"], n_inner=s["ffn"], n_positions=s["seq"])


def _neox_style(s, **extra):
    return dict(num_hidden_layers=s["layers"], hidden_size=s["hidden"], num_attention_heads=s["heads"],
                intermediate_size=s["ffn"], max_position_embeddings=max(2048, s["seq"]), **extra)


def _bert_style(s, **extra):
    return dict(num_hidden_layers=s["layers"], hidden_size=s["hidden"], num_attention_heads=s["heads"],
                intermediate_size=s["ffn"], max_position_embeddings=s["seq"] + 2, **extra)


ARCHS = {
    "gpt2": ("GPT2Config", "GPT2LMHeadModel", "causal", _gpt2),
    "gpt_neo": ("GPTNeoConfig", "GPTNeoForCausalLM", "causal", lambda s: dict(
        num_layers=s["layers"], hidden_size=s["hidden"], num_heads=s["heads"], intermediate_size=s["ffn"],
        attention_types=[[["global", "local"], s["layers"] // 2]], max_position_embeddings=max(2048, s["seq"]))),
    "gptj": ("GPTJConfig", "GPTJForCausalLM", "causal", lambda s: dict(
        n_layer=s["layers"], n_embd=s["hidden"], n_head=s["heads"], n_inner=s["ffn"],
        rotary_dim=s["hidden"] // s["heads"], n_positions=max(2048, s["seq"]))),
    "gpt_neox": ("GPTNeoXConfig", "GPTNeoXForCausalLM", "causal", lambda s: _neox_style(s)),
    "opt": ("OPTConfig", "OPTForCausalLM", "causal", lambda s: dict(
        num_hidden_layers=s["layers"], hidden_size=s["hidden"], num_attention_heads=s["heads"], ffn_dim=s["ffn"],
        word_embed_proj_dim=s["hidden"], max_position_embeddings=max(2048, s["seq"]))),
    "llama": ("LlamaConfig", "LlamaForCausalLM", "causal", lambda s: _neox_style(s, num_key_value_heads=s["heads"])),
    "mistral": ("MistralConfig", "MistralForCausalLM", "causal",
                lambda s: _neox_style(s, num_key_value_heads=s["kv_heads"], head_dim=s["hidden"] // s["heads"])),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM", "causal",
              lambda s: _neox_style(s, num_key_value_heads=s["kv_heads"])),
    "phi": ("PhiConfig", "PhiForCausalLM", "causal", lambda s: _neox_style(s)),
    "gemma": ("GemmaConfig", "GemmaForCausalLM", "causal", lambda s: _neox_style(
        s, num_key_value_heads=s["heads"], head_dim=s["hidden"] // s["heads"])),
    "stablelm": ("StableLmConfig", "StableLmForCausalLM", "causal",
                 lambda s: _neox_style(s, num_key_value_heads=s["heads"])),
    "starcoder2": ("Starcoder2Config", "Starcoder2ForCausalLM", "causal",
                   lambda s: _neox_style(s, num_key_value_heads=s["kv_heads"])),
    "gpt_bigcode": ("GPTBigCodeConfig", "GPTBigCodeForCausalLM", "causal", _gpt2),
    "mpt": ("MptConfig", "MptForCausalLM", "causal", lambda s: dict(
        n_layers=s["layers"], d_model=s["hidden"], n_heads=s["heads"], expansion_ratio=s["ffn"] // s["hidden"],
        max_seq_len=max(2048, s["seq"]))),
    "bert": ("BertConfig", "BertForMaskedLM", "masked", lambda s: _bert_style(s)),
    "roberta": ("RobertaConfig", "RobertaForMaskedLM", "masked", lambda s: _bert_style(s)),
    "electra": ("ElectraConfig", "ElectraForMaskedLM", "masked", lambda s: _bert_style(s, embedding_size=s["hidden"])),
    "distilbert": ("DistilBertConfig", "DistilBertForMaskedLM", "masked", lambda s: dict(
        n_layers=s["layers"], dim=s["hidden"], n_heads=s["heads"], hidden_dim=s["ffn"],
        max_position_embeddings=s["seq"])),
    "vit": ("ViTConfig", "ViTForImageClassification", "vision", lambda s: dict(
        num_hidden_layers=s["layers"], hidden_size=s["hidden"], num_attention_heads=s["heads"],
        intermediate_size=s["ffn"], image_size=s["image"], patch_size=16,
        num_labels=1000)),
}

# setup -> (weights dtype, autocast to bf16, attn_implementation). "amp" is
# the standard mixed-precision setup (float32 weights under bf16 autocast).
SETUPS = {
    "amp-eager": ("float32", True, "eager"),
    "amp-sdpa": ("float32", True, "sdpa"),
    "bf16-eager": ("bfloat16", False, "eager"),
    "bf16-sdpa": ("bfloat16", False, "sdpa"),
    "fp32-eager": ("float32", False, "eager"),
    "fp32-sdpa": ("float32", False, "sdpa"),
}
PHASES = ("infer", "train")

# The plan: setup (a) on every architecture; the others on at least
# these (the rest as device time allows, over sessions).
CORE_ARCHS = ("gpt2", "llama", "opt", "phi", "bert", "vit")


def plan(archs=None, setups=None, phases=PHASES):
    """Rows in the order they are run: setup (a) on every architecture
    first (inference before training), then the other setups on the core
    architectures, then on the rest."""
    archs = list(archs or ARCHS)
    setups = list(setups or SETUPS)
    rows = []
    for setup in setups:
        first = archs if setup == "amp-eager" else [a for a in archs if a in CORE_ARCHS]
        for arch in first:
            rows.extend(row_key(arch, setup, p) for p in phases)
    for setup in setups:
        if setup != "amp-eager":
            for arch in (a for a in archs if a not in CORE_ARCHS):
                rows.extend(row_key(arch, setup, p) for p in phases)
    return rows


def row_key(arch, setup, phase):
    return f"{arch}/{setup}/{phase}"


def split_key(key):
    arch, setup, phase = key.split("/")
    if arch not in ARCHS or setup not in SETUPS or phase not in PHASES:
        raise ValueError(f"not a zoo row: {key}")
    return arch, setup, phase


def pending(rows, done_results):
    """Rows with no final result yet (a row that timed out or crashed is final:
    it is a result; --retry runs those again)."""
    done = {r["row"] for r in done_results if r.get("status") in ("ok", "raised", "failed", "timeout", "missing")}
    return [k for k in rows if k not in done]


# Tolerances, relative L2 error against the float32 eager reference. A
# variant is "equal" when its error is within the dtype's tolerance or no
# worse than 1.25x plain torch.compile's own error on the same row.
TOLERANCE = {"float32": 1e-3, "bfloat16": 3e-2, "amp": 3e-2}


def tolerance(setup):
    dtype, autocast, _ = SETUPS[setup]
    return TOLERANCE["amp" if autocast else dtype]


def judge_equal(setup, err_sator, err_plain):
    """(equal, reason) for one compared quantity."""
    if err_sator is None:
        return False, "no value"
    tol = tolerance(setup)
    if err_sator <= tol:
        return True, f"{err_sator:.2e} <= tolerance {tol:.0e}"
    if err_plain is not None and err_sator <= 1.25 * err_plain:
        return True, f"{err_sator:.2e} within 1.25x plain's {err_plain:.2e}"
    return False, f"{err_sator:.2e} > tolerance {tol:.0e} and > 1.25x plain's {err_plain}"


# The targets (issue 21): no row slower by more than 2% or larger by more than 1%.
MAX_SLOWDOWN = 1.02
MAX_MEMORY = 1.01


def verdicts(row):
    """The row's standing against the targets: a list of strings, empty when
    it meets them all (or had nothing to compare)."""
    out = []
    p, s = row.get("plain") or {}, row.get("sator") or {}
    if s.get("raised"):
        out.append("sator raised: " + s["raised"][:120])
    if p.get("raised"):
        out.append("plain raised: " + p["raised"][:120])
    for what, ok in (row.get("equal") or {}).items():
        if not ok["equal"]:
            out.append(f"{what} differs ({ok['reason']})")
    # A row whose every graph the pass left untouched compiled the same
    # graphs twice: a difference there is the measurement's own noise, and
    # the verdict says so (it is still flagged, not hidden).
    noise = " (every graph untouched: measurement noise)" if untouched(row) else ""
    if p.get("median_ms") and s.get("median_ms") and s["median_ms"] > MAX_SLOWDOWN * p["median_ms"]:
        out.append(f"slower: {s['median_ms']:.2f} ms vs {p['median_ms']:.2f}{noise}")
    if p.get("peak_mib") and s.get("peak_mib") and s["peak_mib"] > MAX_MEMORY * p["peak_mib"]:
        out.append(f"larger: {s['peak_mib']:.0f} MiB vs {p['peak_mib']:.0f}{noise}")
    return out


def untouched(row):
    """Whether the pass handed back every graph of the row as it was."""
    reports = row.get("pass_reports") or []
    return bool(reports) and all(r.get("skipped") for r in reports)
