#!/usr/bin/env python3
"""N disjoint copies of a sator.graph in one graph (names suffixed _cK,
outputs concatenated): the growth benchmark's input (docs/benchmarks.md).

    python3 scripts/replicate_graph.py GRAPH.json N OUT.json
"""
import json
import sys


def rename(value, suffix):
    if isinstance(value, dict):
        if set(value) == {"node"}:
            return {"node": value["node"] + suffix}
        return {k: rename(v, suffix) for k, v in value.items()}
    if isinstance(value, list):
        return [rename(v, suffix) for v in value]
    return value


def main():
    src, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    g = json.load(open(src))
    nodes, outputs = [], []
    for k in range(n):
        suffix = f"_c{k}"
        for node in g["nodes"]:
            if node["op"] == "output":
                outputs.extend(rename(node["args"][0], suffix))
                continue
            copy = dict(node)
            copy["name"] = node["name"] + suffix
            if "args" in copy:
                copy["args"] = rename(node["args"], suffix)
            if "kwargs" in copy:
                copy["kwargs"] = rename(node["kwargs"], suffix)
            nodes.append(copy)
    nodes.append({"name": "output", "op": "output", "args": [outputs]})
    doc = dict(g, name=f"{g['name']}.x{n}", nodes=nodes)
    with open(out, "w") as f:
        json.dump(doc, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
