// Taking a scalar loss's tangent out of a chunked node (what Inductor's
// AutoChunker calls `scale_by`). In a joint graph the backward of a scalar
// loss is linear in its tangent t: the chunked node can run with t = 1 and
// the results that are linear in t be multiplied by t afterwards. Then the
// node no longer depends on a tangent, so a forward/backward partitioner can
// run it in the forward with the loss it computes (the loss's value must not
// wait for its own gradient's tangent).
//
// Linearity is decided by a degree analysis: every value is of degree 0 (does
// not depend on t), 1 (homogeneous of degree one in t: t·f(x)) or neither;
// factoring happens only when each of the node's inputs and results is of
// degree 0 or 1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace sator::chunk {

inline constexpr int8_t kNotHomogeneous = -1;

// Each node's degree in `tangent` (0, 1 or kNotHomogeneous), given the
// degrees of the placeholders (`seed`, one per node; others 0).
std::vector<int8_t> tangent_degrees(const Graph& g, std::vector<int8_t> seed);

struct TangentScaling {
  Graph graph;               // unchanged when nothing was factored
  std::string tangent;       // the tangent taken out ("" when none)
  size_t scaled_results = 0; // results multiplied by it after the node
  std::string why_not;       // why a tangent feeding the node stays in it
};

// Factors a scalar tangent out of the sator.chunked node `chunked` of `g`,
// whose results are the getitem nodes that follow it.
TangentScaling scale_by_tangent(const Graph& g, NodeId chunked);

}  // namespace sator::chunk
