// Rewrites a region (region.h) into one `sator.chunked` node: its body is the
// region's nodes with the chunked dim sized `row_symbol * per_row`, its
// inputs are the region's, sliced or whole, and each value the rest of the
// graph uses is a result, concatenated (Sliced) or summed (Partial).
#pragma once

#include <stdexcept>

#include "chunk/region.h"
#include "chunk/tangent_scale.h"

namespace sator::chunk {

struct ApplyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The graph with the region chunked `chunks` ways. Nodes the region needed
// from later in the graph move before the chunked node; what only the region
// used is dropped; a scalar tangent it reads is taken out of it
// (tangent_scale.h), which `scaling` (if given) describes, its graph left
// empty. Throws ApplyError when the body does not type-check.
Graph apply_chunking(const Graph& g, const Region& r, int64_t chunks, TangentScaling* scaling = nullptr);

// Per output of the graph: whether it depends on a tangent input. A joint
// graph's forward outputs must not (AOTAutograd's partitioner splits the
// graph at them); apply_chunking refuses a region that would make one.
std::vector<bool> tangent_dependent_outputs(const Graph& g);

// Drops every node (not a placeholder or the output) whose result nobody uses.
Graph remove_dead_nodes(const Graph& g);

}  // namespace sator::chunk
