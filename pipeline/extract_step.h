// The pipeline's extraction: each e-node's cost (the roofline's estimated
// compiled µs, or a node count), ops the output target refuses priced out,
// and the chosen extractor run in the time the run has left.
#pragma once

#include <unordered_set>

#include "egraph/extraction.h"
#include "ir/graph.h"
#include "pipeline/optimize.h"
#include "tensor/tensor_egraph.h"

namespace sator::pipeline {

// Extracts t's outputs. Records the extractor's cost and optimality in `r`,
// and "extraction" in r.limited when `seconds_left` cut its search short.
// The e-nodes in `priced_out` are never chosen (the peak guard's
// fallback: pipeline/peak_guard.h). Throws std::invalid_argument for an
// unknown extractor or device.
eg::Extraction extract_cheapest(const TensorEGraph& t, const Graph& input, const OptimizeOptions& options,
                                double seconds_left, OptimizeResult& r,
                                const std::unordered_set<eg::Id>& priced_out = {});

}  // namespace sator::pipeline
