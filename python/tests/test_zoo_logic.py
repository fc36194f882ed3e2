"""The zoo harness's own logic, without torch or a GPU (ctest zoo_logic).

    python3 python/tests/test_zoo_logic.py

Row planning and resume, the equality judgement, the verdicts against the
targets, every architecture's config arguments, and the report (table and
summary) on a few synthetic rows.
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu"))
import zoo  # noqa: E402
import zoo_models as z  # noqa: E402
import zoo_report  # noqa: E402

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def main():
    rows = z.plan()
    check(len(z.ARCHS) == 19, f"the issue's 19 architectures ({len(z.ARCHS)})")
    check(rows[:2] == ["gpt2/amp-eager/infer", "gpt2/amp-eager/train"], "setup (a) first, gpt2 first")
    first_other = next(i for i, k in enumerate(rows) if "/amp-eager/" not in k)
    check(first_other == 2 * len(z.ARCHS), "every architecture in setup (a) before any other setup")
    check(all(k.split("/")[0] in z.CORE_ARCHS for k in rows[first_other:first_other + 6 * 2]),
          "then the core architectures")
    check(len(rows) == len(set(rows)) == len(z.ARCHS) * len(z.SETUPS) * 2, "every row once")
    done = [{"row": rows[0], "status": "ok"}, {"row": rows[1], "status": "timeout"}, {"row": rows[2]}]
    check(z.pending(rows[:4], done) == rows[2:4], "resume skips finished rows (a timeout is a result)")
    try:
        z.split_key("gpt2/amp-eager/bogus")
        check(False, "an unknown phase is refused")
    except ValueError:
        check(True, "an unknown phase is refused")
    check(z.judge_equal("amp-eager", 0.01, 0.01)[0], "bf16 error under tolerance: equal")
    check(not z.judge_equal("fp32-eager", 0.01, 0.001)[0], "float32 error 10x plain's and over tolerance: not equal")
    check(z.judge_equal("fp32-eager", 0.01, 0.009)[0], "within 1.25x plain's own error: equal")
    for arch, (_, _, kind, kwargs) in z.ARCHS.items():
        for size in z.SIZES.values():
            kw = kwargs(size)
            layers = [v for k, v in kw.items() if k in ("n_layer", "num_layers", "num_hidden_layers", "n_layers")]
            check(layers == [size["layers"]], f"{arch}: one layer count, the size's")
    check(z.config_kwargs("llama", z.SIZES["vocab128k"])["vocab_size"] == 128256, "vocab128k sets the vocabulary")
    check("vocab_size" not in z.config_kwargs("llama", z.SIZES["full"]), "full keeps the model's vocabulary")
    check(z.graph_name("llama", "amp-sdpa", "train", "vocab128k") == "llama-vocab128k.amp-sdpa.train",
          "a size of its own names its graphs")
    check(z.graph_name("llama", "amp-sdpa", "train") == "llama.amp-sdpa.train", "the zoo's size keeps the names")
    ok = {"row": "gpt2/amp-eager/infer", "arch": "gpt2", "setup": "amp-eager", "phase": "infer", "status": "ok",
          "plain": {"median_ms": 10.0, "peak_mib": 100.0, "compile_s": 10},
          "sator": {"median_ms": 7.0, "peak_mib": 100.0, "compile_s": 11}, "speedup": 10 / 7, "memory_ratio": 1.0,
          "pass_s": 0.5, "equal": {"logits": {"equal": True, "reason": ""}},
          "attention": {"softmax_in": 4, "sdpa_in": 0, "fused_in_compile": 4}}
    slow = json.loads(json.dumps(ok))
    slow.update(row="llama/amp-eager/infer", arch="llama", speedup=0.97)
    slow["sator"].update(median_ms=10.3, peak_mib=102.0)
    bad = json.loads(json.dumps(ok))
    bad.update(row="opt/amp-eager/infer", arch="opt", status="raised")
    bad["sator"]["raised"] = "InductorError: both a fallback and a decomp"
    bad["equal"] = {}
    check(z.verdicts(ok) == [], "a faster, equal row meets the targets")
    v = z.verdicts(slow)
    check(any("slower" in x for x in v) and any("larger" in x for x in v), f"3% slower and 2% larger are flagged: {v}")
    check(any("sator raised" in x for x in z.verdicts(bad)), "a raise is flagged")
    declined = json.loads(json.dumps(slow))
    declined["pass_reports"] = [{"skipped": "nothing to gain"}]
    check(all("noise" in x for x in z.verdicts(declined)) and not any("noise" in x for x in v),
          "a flagged row whose graphs were all left untouched says it is noise")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "zoo.jsonl")
        with open(path, "w") as f:
            for r in (ok, slow, bad):
                f.write(json.dumps(r) + "\n")
        loaded = zoo_report.load([path])
        check([r["row"] for r in loaded] == ["gpt2/amp-eager/infer", "opt/amp-eager/infer", "llama/amp-eager/infer"],
              "the report orders rows as the plan does")
        text = zoo_report.summary(loaded)
        check("1 raised" in text and "1 meet every target" in text and "1 of 2 architectures >= 1.3x" in text,
              f"summary counts: {text}")
        table = zoo_report.table(loaded)
        check("| gpt2/amp-eager/infer | ok  | 4/4 | 1.429 |" in table, "the table's gpt2 line")
    cpus = sorted(os.sched_getaffinity(0))
    for n in (1, 2, len(cpus), len(cpus) + 1):
        slots = zoo.cpu_slots(n)
        if n <= 1 or len(cpus) < n:
            check(slots is None, f"{n} slot(s) on {len(cpus)} CPUs: no pinning")
            continue
        flat = [c for s in slots for c in s]
        check(len(slots) == n and all(slots) and len(flat) == len(set(flat)) and set(flat) <= set(cpus),
              f"{n} slots: disjoint, non-empty CPU groups ({slots})")
    print(f"{len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
