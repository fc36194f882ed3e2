// A graph in a few lines of text, for rule authors and tests: no torch, no
// hand-written JSON, no strides.
//
//     # -(-a * b) is a * b
//     B = size(4)                  # a symbolic size, hint 4 (min 2)
//     a = input([B, 8], float32)   # dtype float32 when left out
//     b = input([B, 8])
//     n = neg(a)
//     m = mul.Tensor(n, b)
//     y = neg(m)
//     t = transpose.int(y, 0, 1)
//     output(t)
//
// Each line names a node (or not: `output(...)`), calls an op of the op
// table by its full name (`aten.view.default`) or short (`view`,
// `mul.Tensor`: without `aten.`/`prims.` and `.default`), and passes it
// arguments positionally or as `name=value`: earlier nodes and sizes by
// name, integers, numbers (`inf`, `-inf`), `true`/`false`/`none`, dtypes
// (`float32`, `bfloat16`, ...), strings in double quotes (a device:
// `"cuda"`), lists in brackets. Types come from each op's shape function
// (as the reader's check computes them); strides from PyTorch's layout
// rules: views and layout ops from their input's (tensor/written_layout.h),
// a `view` that PyTorch would refuse is refused, a clone and a pointwise
// result in their (first) input's order, everything else contiguous.
// Without an `output(...)` line the last node is the output.
#pragma once

#include <string>
#include <string_view>

#include "ir/graph.h"

namespace sator {

// Throws GraphError "FILE:LINE:COL: message" for the first problem.
Graph read_text_graph(std::string_view text, const std::string& file_label);
Graph read_text_graph_file(const std::string& path);

}  // namespace sator
