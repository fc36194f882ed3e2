// A graph's outputs outlive everything else, and an output that is a view
// keeps its whole base storage alive. Models return fresh tensors where a
// view would pin more: GPT-2 returns each layer's key and value as clones
// of the permuted heads, not as views into the fused q/k/v projection (three
// times their size). Rewrites that drop a clone (clone(x) = x) turn those
// outputs back into views; this writes the copy again where the input
// returned a tensor of its own and the output would return a view of a
// larger storage.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace sator::schedule {

// Adds a clone before `g`'s output node for each such output, naming it
// fresh, and returns the new nodes' indices; `position` (the input's
// position of each of g's nodes, as schedule_for_memory reads it) gets the
// input's position of the returned node for each clone.
std::vector<NodeId> copy_pinning_outputs(Graph& g, const Graph& input, std::vector<int64_t>& position);

}  // namespace sator::schedule
