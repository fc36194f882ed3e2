// Attention in joint training graphs, forward and backward fused together.
//
// The forward's softmax output P is saved for the backward, so fusing the
// forward alone keeps the L×S scores alive and saves nothing. The rule
// matches the backward's core — AOTAutograd's decomposition of
// _softmax_backward_data,
//   dS = fma(-P, sum(dP·P, -1, keepdim), dP·P),   dP = matmul(dO, vᵀ),
// — finds its forward through P = _softmax(scores, -1) (scores read as
// attention_builder.h reads them: [mask +] s·matmul(q, kᵀ)) and O =
// matmul(P, v), and adds
//   (O, lse, seed, offset) = _scaled_dot_product_efficient_attention(q, k, v, m, True, 0, causal, scale=s)
//   (dq, dk, dv, _)        = _scaled_dot_product_efficient_attention_backward(dO, q, k, v, m, O, lse, seed,
//                                                                              offset, 0, [T,T,T,F], causal, scale=s)
// merging O, matmul(dS·s, k) = dq, matmul((dS·s)ᵀ, q) = dk (and its
// transposed form matmul(qᵀ, dS·s) = dkᵀ) and matmul(Pᵀ, dO) = dv with what
// the graph computes. Extraction then finds the fused graph cheaper, the
// scores no longer needed by anything. With `fuse_dropout`, attention with
// dropout (P' = P·keep/(1-p) in the forward, dP = dP'·keep/(1-p) in the
// backward) becomes the kernels with dropout_p = p: they draw their own mask,
// so this holds in distribution only (hence opt-in, as for inference). A
// mask's own gradient (a learned bias) is not fused.
#pragma once

#include <vector>

#include "egraph/rewrite.h"
#include "tensor/tensor_egraph.h"
#include "rules/layout_rules.h"

namespace sator::rules {

const std::vector<RuleInfo>& attention_train_rule_info();
// `fuse_dropout`: attention whose probabilities go through dropout too, fused
// into the kernels' own dropout (equal in distribution, not in value).
// Attention whose scores add a mask (bias) tensor, its gradient not asked,
// passed to the kernels as attn_bias (expanded to [B, H, L, S], rows padded
// to 16): never; where the cuDNN kernels take the block (16-bit q, k, v:
// cuDNN's biased pair measured 2-3x faster than the efficient one, and
// rules/sdpa_calls.h offers it); or always (--training-attention-bias).
enum class TrainingBias : uint8_t { Never, WhereCudnn, Always };
std::vector<eg::Rewrite> attention_train_rules(TensorEGraph& t, bool fuse_dropout = false,
                                               TrainingBias bias = TrainingBias::Always);

}  // namespace sator::rules
