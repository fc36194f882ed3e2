// Training attention given a bias through the efficient kernels, weighed by
// the whole graph as Inductor fuses it (cost/fused_estimate.h).
//
// Extraction minimises a sum of per-node prices, which see no fusion: the
// decomposed block's pointwise chain over the [B, H, L, S] scores is priced
// as a kernel per op, and the efficient pair (the only kernels that take a
// bias in float32, and the only ones that return its gradient) wins where
// the GPU measures it slower (H100: 9 of 12 blocks with a bias needing its
// gradient, 1.06-1.18x; BERT's padding mask in float32, 0.95-0.99x). So
// each such block the extraction chose is tried without its kernels: the
// forward kernel's e-node priced out, the graph extracted again, both
// written and estimated as fused; the cheaper stays. The cuDNN pair and
// inference blocks are left to the extraction (measured faster fused).
#pragma once

#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

#include "cost/roofline.h"
#include "egraph/extraction.h"
#include "ir/graph.h"
#include "tensor/tensor_egraph.h"

namespace sator::pipeline {

// One extraction, with what the report says of it.
struct Extracted {
  eg::Extraction x;
  double dag_cost = 0;
  bool proved_optimal = false;
};

// One block weighed: its forward kernel in the graph with its kernels, both
// graphs' fused estimates, and which stayed.
struct BiasedKernelTrial {
  std::string kernel;  // the forward kernel's node in the graph with its kernels
  double with_kernels_us = 0, without_us = 0;
  bool kept_kernels = true;
  // The classes the graph without the kernels computes and the one with
  // them did not: the block's decomposed forms (its probabilities among
  // them, for --explain-attention).
  std::unordered_set<eg::Id> decomposed;
};

using ExtractWithout = std::function<Extracted(const std::unordered_set<eg::Id>& priced_out)>;

// Weighs each efficient forward kernel given a bias in `chosen` (the
// extraction of a joint graph), in the order written, replacing `chosen` and
// adding to `priced_out` where the graph without it is estimated cheaper.
// `out_of_time` stops the trials (the ones left keep their kernels).
std::vector<BiasedKernelTrial> weigh_biased_kernels(const TensorEGraph& t, const cost::Device& d, Extracted& chosen,
                                                    std::unordered_set<eg::Id>& priced_out,
                                                    const ExtractWithout& extract,
                                                    const std::function<bool()>& out_of_time);

}  // namespace sator::pipeline
