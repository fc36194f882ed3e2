// The runtime strides of a node the writer emits where its inputs are not
// the source's (so its recorded strides no longer hold). PyTorch decides a
// result's layout by the op: layout ops compute their strides from their
// input's (an expand's broadcast dims get stride 0, a split's pieces keep
// their input's strides), most kernels write contiguous results from
// contiguous inputs, and a few choose their own (the fused attention
// kernels write BSHD). Where the strides are not known, the writer says so,
// and a `view` of the result is written as `reshape`, which PyTorch serves
// as a view where it can and copies where it must: a wrong `view` would
// fail eagerly and in Inductor alike.
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"

namespace sator {

// PyTorch's is_contiguous: dimensions of size 1 may have any stride.
bool is_contiguous(const std::vector<SymExpr>& shape, const std::vector<SymExpr>& strides);

// The strides of layout op `node` (permute, transpose, t, expand, unsqueeze,
// squeeze, slice, select, alias) applied to `in`, whose strides are known;
// nullopt for any other op, or arguments it cannot read.
std::optional<std::vector<SymExpr>> layout_op_strides(const Node& node, const Node& in);

// The strides of each result of tuple op `node` (split, split_with_sizes,
// chunk, unbind: views of `in`, whose strides are known); nullopt for any
// other op.
std::optional<std::vector<std::vector<SymExpr>>> view_pieces_strides(const Node& node, const Node& in);

}  // namespace sator
