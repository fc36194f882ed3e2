// Small identities that let the attention rule see through the ways models
// write masks and casts, instead of the rule listing each form:
//
//   convert-roundtrip      convert(convert(x, w), t) = x    for x of type t and
//                          w holding every value of t (bf16/f16 -> f32 -> back)
//   masked-fill-as-add     where(c, x, K) = x + where(c, 0, K)
//                          where(c, K, x) = x + where(c, K, 0)
//                          for a masking constant K (<= -2^100), of x's dtype
//   masked-softmax-gradient
//                          where(c, 0, dS) = dS for the softmax backward dS of
//                          P = _softmax(where(c, K, y)) when c masks the causal
//                          triangle (or nothing): masked_fill's backward
//   add-small-operands-first
//                          (x + y) + z = x + (y + z) when y + z broadcasts
//                          into x from fewer elements (a dim of x that both
//                          y and z broadcast along)
//
// Composed, they turn GPT-Neo's `where(causal_buffer, scores, min) + mask`
// into `scores + bias`, the form the attention rule fuses with the bias as
// SDPA's attn_mask (under autocast only a bias of zeros and masking values:
// see mixed_precision.h).
//
// Exactness. convert-roundtrip is exact (a widening then a narrowing to the
// same type). masked-fill-as-add: where c selects x, x + 0 = x; where it
// selects K, x + K rounds to K whenever |x| < ulp(K)/2 (2^103 for float32's
// lowest, 2^119 for bfloat16's) — any finite attention score; an infinite
// or NaN x is the exception. add-small-operands-first is exact in real
// arithmetic; in floating point the sums round in another order (a bias of
// zeros and large negatives, the case it serves, adds exactly either way).
// masked-softmax-gradient is exact: every row of the causal triangle keeps
// its diagonal, so exp(K - max) is 0 in float32 (and float64) at every masked
// entry, P is exactly 0 there, and so is dS = P·(dP - sum(dP·P)).
#pragma once

#include <vector>

#include "egraph/rewrite.h"
#include "tensor/tensor_egraph.h"
#include "rules/layout_rules.h"

namespace sator::rules {

const std::vector<RuleInfo>& mask_algebra_rule_info();
std::vector<eg::Rewrite> mask_algebra_rules(TensorEGraph& t);

// The masking constants masked-fill-as-add accepts: at most this.
inline constexpr double kMaskingConstantAtMost = -1.2676506002282294e30;  // -2^100

}  // namespace sator::rules
