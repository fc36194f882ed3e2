// Which rules saturate a graph: the shipped sets the graph and the options
// call for, in the order the runner applies them, then the user's files.
#pragma once

#include <string>
#include <vector>

#include "egraph/rewrite.h"
#include "ir/graph.h"
#include "pipeline/optimize.h"
#include "tensor/tensor_egraph.h"

namespace sator::pipeline {

// Whether a graph is a joint training graph (has tangent inputs): its
// attention is fused forward and backward together or not at all.
bool is_training_graph(const Graph& g);

// The rewrites for `t` (loaded from `input`) under `options`; throws
// std::invalid_argument for a `without_rules` name no shipped rule has.
std::vector<eg::Rewrite> rules_for(const Graph& input, TensorEGraph& t, const OptimizeOptions& options);

}  // namespace sator::pipeline
