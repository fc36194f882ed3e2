// `sator optimize --explain-attention`: every softmax over a rank-4 tensor
// in the input graph (attention's probabilities), and whether the optimized
// graph still computes it — "fused" when an attention kernel took its place —
// or else the first reason it was not fused.
#pragma once

#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

#include "egraph/egraph.h"
#include "ir/graph.h"
#include "pipeline/biased_kernels.h"
#include "tensor/tensor_egraph.h"

namespace sator::pipeline {

struct AttentionBlock {
  std::string softmax;  // the input's softmax node
  bool fused = false;
  std::string why;      // not fused: the first reason
};

// What of OptimizeOptions the reasons read.
struct AttentionFusionOptions {
  bool training = true;       // training_attention: a joint graph's rules ran
  bool training_bias = false;  // training_attention_bias: ... also where the scores add a mask
  bool fuse_dropout = false;   // fuse_dropout: attention whose probabilities go through dropout
  // The estimated cost of the graph extracted with the given e-nodes priced
  // out (infinite where no form is left): a block fused in the e-graph but
  // kept decomposed is explained by the graph's estimate as extracted against
  // its estimate with the block's decomposed forms priced out. Unset: not said.
  std::function<double(const std::unordered_set<eg::Id>&)> cost_without;
  std::string cost_unit = "us";  // what cost_without counts
  // Training blocks given a bias through the efficient kernels, weighed by
  // the graph as Inductor fuses it (pipeline/biased_kernels.h): a block left
  // decomposed there is explained by that weighing's two estimates.
  const std::vector<BiasedKernelTrial>* biased_kernels = nullptr;
};

// `t` is the saturated e-graph of `input`; `output` was written from it with
// `enode_of` (TensorEGraph::write).
std::vector<AttentionBlock> explain_attention(const Graph& input, TensorEGraph& t, const Graph& output,
                                              const std::vector<eg::Id>& enode_of, const AttentionFusionOptions& options);

}  // namespace sator::pipeline
