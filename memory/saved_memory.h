// What a joint training graph's forward keeps for its backward. AOTAutograd's
// partitioner saves every forward value a backward node reads, and a saved
// view keeps its whole base storage alive through the backward. That span,
// the end of the forward, is where a training step's real peak lies; the
// whole-graph estimate (peak_memory.h) counts every pointwise intermediate
// Inductor fuses away and often finds its own peak elsewhere, so it cannot
// see a saved value grow. schedule/saved_copies.h writes copies where views
// would keep more than the input's did.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "memory/peak_memory.h"

namespace sator::memory {

// The storages a joint graph's forward allocates that its backward reads.
struct SavedStorages {
  // The forward: the nodes the outputs that read no tangent need, tangents
  // excluded (the partitioner's split). Empty for a graph without tangents.
  std::vector<bool> forward;
  Storages st;                               // storages_of(g)
  std::vector<std::vector<NodeId>> readers;  // by storage: forward nodes the backward reads it through
  std::vector<bool> kept_by_output;          // by storage: an output reads it
};
SavedStorages saved_storages(const Graph& g);
// The same from g's storages, computed by the caller (storages_of(g)).
SavedStorages saved_storages(const Graph& g, Storages st);

// The bytes of the views through which the backward reads saved storage
// `id`; -1 where it reads the base itself (or a tuple's piece).
double read_through_views(const Graph& g, const SavedStorages& s, size_t id);

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
// The same from g's storages, lent by the caller (storages_of(g), given back
// as they were): a form whose saved values and order are both estimated
// computes them once.
SavedMemory saved_memory(const Graph& g, Storages& st);

}  // namespace sator::memory
