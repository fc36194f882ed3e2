#!/usr/bin/env python3
"""Writes a graph whose get_attr constant holds N float32 elements inline.

    python3 scripts/constant_graph.py N OUT.json

x [N] + c [N] -> output: the case of issue 22's finding that a 40M-element
inline constant took 6.4 GB (docs/benchmarks.md, "Growth").
"""
import random
import sys


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    rnd = random.Random(1)
    with open(out, "w") as f:
        f.write('{"format":"sator.graph","version":1,"name":"constant","source":{},"symbols":[],"nodes":[\n')
        f.write('{"name":"x","op":"placeholder","role":"input","shape":[%d],"stride":[1],"dtype":"float32"},\n' % n)
        f.write('{"name":"c","op":"get_attr","target":"c","value":[')
        chunk = 1 << 16
        for start in range(0, n, chunk):
            vals = ",".join(repr(rnd.random()) for _ in range(min(chunk, n - start)))
            f.write(("," if start else "") + vals)
        f.write('],"args":[],"shape":[%d],"stride":[1],"dtype":"float32"},\n' % n)
        f.write('{"name":"y","op":"aten.add.Tensor","args":[{"node":"x"},{"node":"c"}],'
                '"shape":[%d],"stride":[1],"dtype":"float32"},\n' % n)
        f.write('{"name":"output","op":"output","args":[[{"node":"y"}]]}\n]}\n')


if __name__ == "__main__":
    main()
