// A whole graph's compiled time as Inductor fuses it. The per-node estimate
// (graph_cost.h) prices each pointwise op as its own kernel reading and
// writing its operands: fine for ranking one op's forms against another's
// (what extraction does), but a chain of a dozen pointwise ops over an
// attention block's [B, H, L, S] scores is priced as a dozen reads and
// writes of them, where Inductor writes one kernel that reads the scores
// once and writes the probabilities once (H100, bf16, L = 1024: estimated
// 2.1x what Inductor's block measured; docs/results/attention_bias_forms.md).
//
// Here the memory-bound ops (pointwise, reductions, copies) are grouped as
// Inductor fuses them: a producer with a consumer over the same iteration
// space (the numel of their largest operand: a row reduction and the
// pointwise ops that read its result fuse, as softmax does), in the same
// phase (a joint graph's forward and backward are compiled apart: a value
// the backward reads from the forward is written, saved, and read again).
// Views are aliases of what they view. Each group is one kernel that reads
// what it takes from outside the group and writes what is read outside it
// (or is an output); matmuls, attention and convolutions keep their
// per-node price.
#pragma once

#include <cstddef>
#include <vector>

#include "cost/graph_cost.h"

namespace sator::cost {

struct FusedEstimate {
  double seconds = 0;          // compiled, as fused
  double extern_seconds = 0;   // of that: matmuls, attention, convolutions, chunked nodes
  size_t groups = 0;           // fused kernels of memory-bound ops
  double group_bytes = 0;      // what those kernels read and write
};

FusedEstimate fused_estimate(const Graph& g, const Device& d, const std::vector<NodeCost>& costs);
FusedEstimate fused_estimate(const Graph& g, const Device& d);

}  // namespace sator::cost
