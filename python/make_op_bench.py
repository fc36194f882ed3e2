"""Collects the distinct instances of representative ops in the corpus's
static graphs (matmuls, pointwise, softmax, reductions, attention, copies)
and writes them as one sator.graph whose every op node has placeholders of
its own: `calibrate_costs.py` then times each instance at its corpus shapes,
and `sator cost` predicts each (docs/cost-model.md).

  python3 python/make_op_bench.py CORPUS_GRAPHS_DIR OUT.json [--max-elements N]
"""
import argparse
import glob
import json
import os

OPS = {
    "aten.mm.default", "aten.bmm.default", "aten.addmm.default", "aten.matmul.default", "aten.linear.default",
    "aten.add.Tensor", "aten.mul.Tensor", "aten.div.Tensor", "aten.sub.Tensor", "aten.exp.default",
    "aten.tanh.default", "aten.rsqrt.default", "aten._softmax.default", "aten.sum.dim_IntList", "aten.amax.default",
    "aten.var_mean.correction", "aten.clone.default", "prims.convert_element_type.default",
    "aten.scaled_dot_product_attention.default", "aten._scaled_dot_product_efficient_attention.default",
    "aten._scaled_dot_product_cudnn_attention.default", "aten.where.self",
}


def contiguous(shape):
    stride, run = [], 1
    for s in reversed(shape):
        stride.append(run)
        run *= s
    return list(reversed(stride))


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("out")
    ap.add_argument("--max-elements", type=int, default=1 << 28)
    args = ap.parse_args()
    seen, nodes, outputs = set(), [], []
    for path in sorted(glob.glob(os.path.join(args.corpus, "*.json"))):
        if ".dyn." in path:
            continue  # static shapes only: no symbols to settle
        doc = json.load(open(path))
        by_name = {n["name"]: n for n in doc["nodes"]}
        for n in doc["nodes"]:
            if n["op"] not in OPS or "shape" not in n and "outputs" not in n:
                continue
            refs = []

            def walk(v):
                if isinstance(v, list):
                    for x in v:
                        walk(x)
                elif isinstance(v, dict) and list(v) == ["node"]:
                    refs.append(v["node"])
            walk(n.get("args", []))
            walk(n.get("kwargs", {}))
            inputs = [by_name[r] for r in refs]
            if any("shape" not in i or i["op"] == "get_attr" for i in inputs):
                continue  # symint or tuple arguments, constants: skip
            total = sum(numel(i["shape"]) for i in inputs) + (numel(n["shape"]) if "shape" in n else 0)
            if total > args.max_elements:
                continue
            key = (n["op"], json.dumps([(i["shape"], i["dtype"]) for i in inputs]),
                   json.dumps([a for a in n.get("args", []) if not isinstance(a, dict)]), json.dumps(n.get("kwargs", {})))
            if key in seen:
                continue
            seen.add(key)
            k = len(seen)
            rename = {}
            for j, i in enumerate(inputs):
                if i["name"] in rename:
                    continue
                name = f"i{k}_{j}"
                rename[i["name"]] = name
                nodes.append({"name": name, "op": "placeholder", "role": "input", "shape": i["shape"],
                              "stride": contiguous(i["shape"]), "dtype": i["dtype"]})

            def sub(v):
                if isinstance(v, list):
                    return [sub(x) for x in v]
                if isinstance(v, dict) and list(v) == ["node"]:
                    return {"node": rename[v["node"]]}
                return v
            m = {key2: val for key2, val in n.items() if key2 not in ("name", "args", "kwargs", "stride")}
            m["name"] = f"op{k}"
            m["args"] = sub(n.get("args", []))
            if "kwargs" in n:
                m["kwargs"] = sub(n["kwargs"])
            if "shape" in n:
                m["stride"] = contiguous(n["shape"])
            nodes.append(m)
            outputs.append({"node": m["name"]})
    nodes.append({"name": "output", "op": "output", "args": [outputs]})
    doc = {"format": "sator.graph", "version": 1, "name": "corpus_ops", "source": {"note": "make_op_bench.py"},
           "symbols": [], "nodes": nodes}
    json.dump(doc, open(args.out, "w"))
    print(f"{len(outputs)} op instances -> {args.out}")


if __name__ == "__main__":
    main()
