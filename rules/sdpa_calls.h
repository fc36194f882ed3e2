// Attention written as an SDPA call: the input's own kernel calls (the
// graphs of models on `attn_implementation="sdpa"`, and the kernels sator's
// training rule writes) read as attention blocks, so that the mask reader
// and the kernel choice apply to them as to a decomposed block.
//
//   getitem(K(q, k, v, m, ...), 0)            K a forward kernel (cuDNN,
//     = scaled_dot_product_attention(q, k, v, m', 0, causal', scale)   efficient) or SDPA itself, no dropout
//   getitem(Kb(dO, q, k, v, ..., m, ...), i),  getitem(K(q, k, v, m, ...), 0)
//     = the same of another kernel pair K'b, K' with m', causal'    (training: forward and backward together)
//
// where m' and causal' are the mask as causal_mask.h reads it: the causal
// triangle becomes is_causal, a mask adding 0 none at all. The other pair
// is cuDNN's (the fastest kernels measured on Hopper in 16 bits where no
// bias is passed: docs/cost-model.md) or the same kernel with the mask
// read; extraction chooses between them by the measured table.
#pragma once

#include <vector>

#include "egraph/rewrite.h"
#include "rules/layout_rules.h"
#include "tensor/tensor_egraph.h"

namespace sator::rules {

const std::vector<RuleInfo>& sdpa_call_rule_info();
// `fuse_dropout`: a training pair with dropout may change its kernels (the
// new ones draw their own mask: equal in distribution only, so opt-in).
std::vector<eg::Rewrite> sdpa_call_rules(TensorEGraph& t, bool fuse_dropout);

}  // namespace sator::rules
