// Recomposition and attention rules.
//
// Recomposition undoes what AOTAutograd's decompositions did, so that the
// attention rule can see attention whatever form it was written in:
//   view(bmm(view(a), view(b)))                 = matmul(a, b)      (4-D matmul)
//   exp(x - amax(x, d)) / sum(exp(x - amax(x, d)), d) = _softmax(x, d)
//   convert(_softmax(convert(x, f32), d), bf16)       = _softmax(x, d)  (16-bit)
//   matmul(q * c, k) = matmul(q, k) * c          (scalars across matmuls)
//   view(addmm(b, view(x), permute(W))) = linear(x, W, b)  (nn.Linear)
// The attention rule then recognises
//   matmul(_softmax(matmul(q, kᵀ) · scale [+ mask], -1), v)
//     = scaled_dot_product_attention(q, k, v, mask, 0.0, False, scale=scale)
// with the scale a multiplication or a division (by a number, a constant or
// a run-time 0-d tensor), an additive mask of any form — the causal triangle
// becomes is_causal (causal_mask.h) — k transposed by permute or transpose,
// and the layout rules taking care of the views, clones and expands around
// each piece.
#pragma once

#include <vector>

#include "egraph/rewrite.h"
#include "tensor/tensor_egraph.h"
#include "rules/layout_rules.h"

namespace sator::rules {

const std::vector<RuleInfo>& recompose_rule_info();
std::vector<eg::Rewrite> recompose_rules(TensorEGraph& t);

const std::vector<RuleInfo>& attention_rule_info();
// `fuse_dropout` adds attention written with explicit dropout, which SDPA
// replaces with its own random draws (equal in distribution, not in value).
std::vector<eg::Rewrite> attention_rules(TensorEGraph& t, bool fuse_dropout = false);

}  // namespace sator::rules
