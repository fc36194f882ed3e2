// Evaluating a sator.chunked node (ir/chunked_node.h) in the reference
// interpreter: its body once per chunk on slices of the sliced inputs, the
// results concatenated or summed.
#pragma once

#include <functional>

#include "interp/graph_eval.h"

namespace sator::interp {

EvalValue evaluate_chunked(const Graph& g, const Node& n, const std::vector<EvalValue>& values,
                           const std::function<int64_t(const SymExpr&)>& concrete, const SymbolValues& symbols,
                           const EvalOptions& options);

}  // namespace sator::interp
