"""The zoo's table and chart from its results (no torch, no GPU).

    python3 python/gpu/zoo_report.py RESULTS.jsonl [MORE.jsonl ...] --md OUT.md [--png OUT.png]

The last result of each row counts. The table has one line per row:
what ran (or raised), attention fused in the compile out of the softmaxes
present, the speedup and peak-memory ratio of torch.compile + InductorPass
over plain torch.compile, the pass's own time against the whole compile,
equality against the float32 eager reference, and the row's standing
against issue 21's targets (zoo_models.verdicts). The chart (matplotlib,
only when --png is given) plots speedup and memory ratio per row.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zoo_models import plan, verdicts  # noqa: E402


def load(paths):
    rows = {}
    for p in paths:
        with open(p) as f:
            for line in f:
                line = line.strip()
                if line:
                    r = json.loads(line)
                    rows[r["row"]] = not_run_by_sator(r)
    order = {k: i for i, k in enumerate(plan())}
    return sorted(rows.values(), key=lambda r: order.get(r["row"], len(order)))


def not_run_by_sator(r):
    """A row whose pass never ran sator (no binary in that process) measured
    plain torch.compile twice: it is missing, not a row that meets."""
    skipped = [x.get("skipped", "") for x in r.get("pass_reports") or []]
    if r.get("status") == "ok" and any("no sator binary" in s for s in skipped):
        return dict(r, status="missing", reason="sator did not run in that process (no binary): to be measured again")
    return r


def fused_text(r):
    a = r.get("attention") or {}
    if not a:
        return ""
    present = (a.get("softmax_in") or 0) + (a.get("sdpa_in") or 0)
    done = a.get("fused_in_compile")
    if done is None:  # results from before the field: fused by graphs the pass accepted
        done = sum(x.get("attention_fused") or 0 for x in r.get("pass_reports", []) if not x.get("skipped"))
    pre = f" (+{a['sdpa_in']} already SDPA)" if a.get("sdpa_in") else ""
    return f"{done}/{a.get('softmax_in', 0)}{pre}" if present else "0/0"


def line(r):
    p, s = r.get("plain") or {}, r.get("sator") or {}
    if r.get("status") in ("missing", "failed", "timeout"):
        return f"| {r['row']} | {r['status']}: {str(r.get('reason', ''))[:80]} | | | | | | |"
    eq = r.get("equal") or {}
    eq_text = "yes" if eq and all(v["equal"] for v in eq.values()) else ("no" if eq else "-")
    share = ""
    if s.get("compile_s"):
        share = f"{r.get('pass_s', 0):.2f} s / {s['compile_s']:.1f} s ({100 * r.get('pass_s', 0) / s['compile_s']:.0f}%)"
    declined = "declined: nothing to gain" if r.get("declined") and all(
        "nothing to gain" in d for d in r["declined"]) else ("declined: " + r["declined"][0][:60] if r.get("declined") else "")
    v = verdicts(r)
    stand = "meets" if not v else "; ".join(v)[:120]
    sp = f"{r['speedup']:.3f}" if r.get("speedup") else "-"
    mem = f"{r['memory_ratio']:.3f}" if r.get("memory_ratio") else "-"
    ms = f"{s.get('median_ms', 0):.2f} / {p.get('median_ms', 0):.2f}" if s.get("median_ms") else "-"
    return f"| {r['row']} | {r['status']} {declined} | {fused_text(r)} | {sp} | {ms} | {mem} | {share} | {eq_text} | {stand} |"


def table(rows):
    out = ["| row (arch/setup/phase) | ran | attention fused / softmaxes | speedup | ms sator / plain | peak ratio | pass time / compile | equal | targets |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    out += [line(r) for r in rows]
    return "\n".join(out)


def summary(rows):
    ok = [r for r in rows if r.get("status") == "ok"]
    raised = [r for r in rows if r.get("status") == "raised"]
    infer = [r for r in ok if r["phase"] == "infer" and r["setup"] == "amp-eager" and r.get("speedup")]
    fast = [r for r in infer if r["speedup"] >= 1.3]
    meets = [r for r in ok if not verdicts(r)]
    return (f"{len(rows)} rows: {len(ok)} ran, {len(raised)} raised; {len(meets)} meet every target "
            f"(no raise, equal, <= 2% slower, <= 1% larger). Eager-attention inference (amp-eager): "
            f"{len(fast)} of {len(infer)} architectures >= 1.3x faster.")


def chart(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in rows if r.get("speedup") and r.get("memory_ratio")]
    names = [r["row"] for r in rows]
    fig, ax = plt.subplots(figsize=(max(8, 0.32 * len(rows)), 5))
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r["speedup"] for r in rows], width=0.4, label="speedup (plain / sator time)")
    ax.bar([x + 0.2 for x in xs], [r["memory_ratio"] for r in rows], width=0.4, label="peak memory (sator / plain)")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.axhline(1.3, color="green", linewidth=0.8, linestyle="--", label="1.3x (inference target)")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(names, rotation=90, fontsize=7)
    ax.set_ylim(0.6, 1.7)
    ax.set_title("torch.compile + sator_torch.InductorPass vs plain torch.compile (H200)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results", nargs="+")
    ap.add_argument("--md", required=True)
    ap.add_argument("--png")
    a = ap.parse_args()
    rows = load(a.results)
    text = summary(rows) + "\n\n" + table(rows) + "\n"
    with open(a.md, "w") as f:
        f.write(text)
    if a.png:
        chart(rows, a.png)
    print(summary(rows))


if __name__ == "__main__":
    main()
