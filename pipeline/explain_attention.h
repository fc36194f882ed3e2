// `sator optimize --explain-attention`: every softmax over a rank-4 tensor
// in the input graph (attention's probabilities), and whether the optimized
// graph still computes it — "fused" when an attention kernel took its place —
// or else the first reason it was not fused.
#pragma once

#include <string>
#include <vector>

#include "egraph/egraph.h"
#include "ir/graph.h"
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
};

// `t` is the saturated e-graph of `input`; `output` was written from it with
// `enode_of` (TensorEGraph::write).
std::vector<AttentionBlock> explain_attention(const Graph& input, TensorEGraph& t, const Graph& output,
                                              const std::vector<eg::Id>& enode_of, const AttentionFusionOptions& options);

}  // namespace sator::pipeline
