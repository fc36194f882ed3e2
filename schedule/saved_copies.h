// What a joint training graph's forward keeps for its backward. AOTAutograd's
// partitioner saves every forward value a backward node reads, and a saved
// view keeps its whole base storage alive through the backward. That span,
// the end of the forward, is where a training step's real peak lies; the
// whole-graph estimate (chunk/peak_memory.h) counts every pointwise
// intermediate Inductor fuses away and often finds its own peak elsewhere,
// so it cannot see a saved value grow.
//
// GPT-NeoX clones v out of its fused q/k/v projection before SDPA; the rule
// that drops a clone (the kernel takes strided v) makes the saved v a view
// of the projection, three times its size: +3.9% measured peak in bf16
// training on an H100 with the estimate unchanged. Here the copy is written
// again, in the forward, where the backward reads views of a storage that
// are together smaller than it: the base is then freed when the forward ends.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace sator::schedule {

// What a joint graph's forward keeps for its backward (zeros for a graph
// without tangent inputs).
struct SavedMemory {
  // The storages the forward allocates and the backward reads through any
  // view: what the partitioner saves before it chooses to recompute (and
  // before Inductor merges alike ones: an over-estimate).
  double bytes = 0;
  // Of those, the bytes kept only because a smaller view of them is read:
  // what copies of the views would free.
  double pinned_by_views = 0;
};
SavedMemory saved_memory(const Graph& g);

// Adds a clone right after each forward view whose base storage the
// backward reads only through views smaller together than it (and that no
// output keeps), points the backward's reads at the clones, and returns the
// clones' indices. `position` (the input's position of each of g's nodes,
// as schedule_for_memory reads it) stays aligned: a clone takes its view's.
std::vector<NodeId> copy_pinning_saved(Graph& g, std::vector<int64_t>& position);

}  // namespace sator::schedule
