"""Charts of a `sator batch` summary (run through scripts/plot, which
installs matplotlib): layout ops and estimated cost per graph for the input,
greedy, sator and Inductor, and the time of greedy and sator per graph.

  python3 python/plot_batch.py BATCH_OUT_DIR
"""
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"input": "#bbbbbb", "greedy": "#e6862e", "sator": "#2e7de6", "inductor": "#6a3d9a"}


def grouped_bars(rows, series, value, title, xlabel, path, log=False):
    names = [r["graph"] for r in rows]
    height = 0.8 / len(series)
    fig, ax = plt.subplots(figsize=(9, 0.32 * len(rows) + 1.5))
    for k, s in enumerate(series):
        ys = [i + (k - (len(series) - 1) / 2) * height for i in range(len(rows))]
        xs = [value(r, s) for r in rows]
        ax.barh(ys, [x if x is not None else 0 for x in xs], height=height, color=COLORS[s], label=s)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(names, fontsize=7)
    ax.invert_yaxis()
    if log:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    for ext in ("svg", "png"):
        fig.savefig(f"{path}.{ext}", dpi=110)
    plt.close(fig)


def main():
    out = sys.argv[1]
    summary = json.load(open(os.path.join(out, "summary.json")))
    rows = [r for r in summary["rows"] if r["status"] == "ok"]
    if not rows:
        sys.exit("plot_batch: no successful graphs in the summary")
    charts = os.path.join(out, "charts")
    os.makedirs(charts, exist_ok=True)

    def field(r, s, f):
        return r.get(f"{s}_{f}")

    grouped_bars(rows, ["input", "greedy", "sator", "inductor"], lambda r, s: field(r, s, "layout_ops"),
                 "Layout ops per graph (fewer is better)", "layout ops", os.path.join(charts, "layout_ops"))

    def relative_cost(r, s):
        c, base = field(r, s, "cost"), field(r, "input", "cost")
        return None if c is None or not base else 100.0 * c / base

    grouped_bars(rows, ["greedy", "sator", "inductor"], relative_cost,
                 "Estimated cost relative to the input graph (lower is better)", "% of the input's estimated cost",
                 os.path.join(charts, "cost"))

    times = {}
    with open(os.path.join(out, "timings.csv")) as f:
        for t in csv.DictReader(f):
            times[t["graph"]] = t

    def time_of(r, s):
        t = times.get(r["graph"], {}).get(f"{s}_ms")
        return float(t) if t else None

    grouped_bars(rows, ["greedy", "sator"], time_of, "Optimize time per graph (median of repeats)", "ms (log scale)",
                 os.path.join(charts, "time"), log=True)
    link_charts(os.path.join(out, "summary.md"))
    print(f"plot_batch: wrote {charts}/layout_ops, cost, time (.svg, .png), linked from summary.md")


CHART_LINKS = ("Made by `scripts/plot` from this folder:\n\n"
               "![layout ops](charts/layout_ops.svg)\n\n![estimated cost](charts/cost.svg)\n\n"
               "![optimize time](charts/time.svg)\n")


def link_charts(summary_md):
    """summary.md's Charts section, once the charts exist: their links (the
    same text `sator batch` writes when it finds them drawn)."""
    if not os.path.exists(summary_md):
        return
    with open(summary_md) as f:
        text = f.read()
    head, sep, _ = text.partition("## Charts\n\n")
    if sep:
        with open(summary_md, "w") as f:
            f.write(head + sep + CHART_LINKS)


if __name__ == "__main__":
    main()
