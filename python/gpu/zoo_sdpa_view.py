"""The zoo's "sdpa" view: per model and phase, plain torch.compile on the
model's SDPA path, sator on it, and sator on the same model written with
eager attention, side by side (issue 38's measure: the fastest thing the user
could have run instead). Pure Python; prints a markdown table.

    python3 python/gpu/zoo_sdpa_view.py docs/results/zoo/h100_sdpa.jsonl [--setup amp]

Rows measured in different calls (or beside other rows' compiles) compare
less well than rows of one call run one at a time: the table names the
session and call of each figure (s13c11), a row measured alone is kept over
a later one measured beside others, and the eager-vs-SDPA ratio is taken
from a pair of rows of one call wherever there is one.
"""
import argparse
import json


def alone(r):
    return "(parallel 1)" in r.get("measured", "")


def call_of(r):
    """The session and call a row was measured in ("session 13, H100, call 11")."""
    m = r.get("measured", "")
    return m.split(" (")[0].split(", ")[0::2] if "call " in m else None


def short_call(r):
    """s13c11: session 13, call 11."""
    m = r.get("measured", "")
    if "call " not in m:
        return "?"
    session = m.split("session ")[1].split(",")[0] if "session " in m else "?"
    return f"s{session}c{m.split('call ')[1].split(' ')[0]}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--setup", default="amp", help="amp or bf16: the setups amp-sdpa/amp-eager or bf16-sdpa/bf16-eager")
    a = ap.parse_args()
    rows, history = {}, {}
    for line in open(a.results):
        r = json.loads(line)
        if r.get("status") != "ok":
            continue
        history.setdefault(r["row"], []).append(r)
        # The last measurement of a row wins, except that one taken alone
        # (parallel 1) is kept over one taken beside other rows' compiles:
        # these launch-bound steps move by up to 15% there.
        old = rows.get(r["row"])
        if old is None or alone(r) or not alone(old):
            rows[r["row"]] = r
    archs = sorted({k.split("/")[0] for k in rows})
    print("| model | phase | plain-sdpa ms | sator-sdpa ms (speedup, peak) | sator-eager ms (peak) | plain-sdpa / sator-eager | calls |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for arch in archs:
        for phase in ("infer", "train"):
            s = rows.get(f"{arch}/{a.setup}-sdpa/{phase}")
            e = rows.get(f"{arch}/{a.setup}-eager/{phase}")
            # The eager-vs-SDPA ratio compares two rows: taken from one call
            # where there is such a pair (the machine and its load differ
            # between calls by more than the gaps measured), the latest,
            # a pair measured alone first.
            pairs = [(x, y) for x in history.get(f"{arch}/{a.setup}-sdpa/{phase}", [])
                     for y in history.get(f"{arch}/{a.setup}-eager/{phase}", []) if call_of(x) == call_of(y)]
            if pairs:
                s, e = max(pairs, key=lambda p: (alone(p[0]) and alone(p[1]), pairs.index(p)))
            if not s and not e:
                continue
            call = lambda r: short_call(r) if r else "-"  # noqa: E731
            cells = [arch, phase]
            cells.append(f"{s['plain']['median_ms']:.2f}" if s else "")
            cells.append(f"{s['sator']['median_ms']:.2f} ({s['speedup']:.3f}x, {s['memory_ratio']:.3f})" if s else "")
            cells.append(f"{e['sator']['median_ms']:.2f} ({e['memory_ratio']:.3f})" if e else "")
            cells.append(f"**{s['plain']['median_ms'] / e['sator']['median_ms']:.3f}**" if s and e else "")
            cells.append(f"{call(s)} / {call(e)}")
            print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
