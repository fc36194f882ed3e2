// Attention under autocast (mixed precision): the scores come out of a bf16
// matmul, a float32 mask added to them promotes the sum to float32, softmax
// runs in float32 and its result is cast back for the bf16 matmul with v:
//   convert(_softmax(add(x16, m32), d), t16)
// The rule writes it as softmax in the 16-bit type with the mask cast to it,
//   _softmax(add(x16, m16), d)           m16 = convert(m32, t16) (clamped),
// the form the attention rule fuses; the fused kernel then reads q, k, v and
// the mask in 16 bits and computes in float32, which is what torch's own SDPA
// does under autocast (it casts the mask to bf16 too).
//
// Exactness: PyTorch's 16-bit softmax computes in float32 and rounds once, as
// the convert does. A mask of zeros and large negatives (causal, padding) is
// exact in 16 bits once its negatives are clamped to the type's lowest finite
// value — without the clamp float32's min overflows to -inf and a row with
// every key masked would give NaN where the float32 path gives a uniform row.
// A real-valued bias (ALiBi, relative positions) would be rounded to 16
// bits — an absolute error of ulp/2 in the logits, 4 for an ALiBi value near
// 1,400 (MPT's logits came out 28% off on the GPU) — so the rule takes only
// masks whose values it can follow to 0 and masking constants (<= -2^100)
// through where, add, casts and layout ops, and leaves other blocks as
// they are. `--no-mixed-precision-attention` turns the rule off.
//
// SDPA's math path under autocast (a model's own SDPA call, decomposed by
// the capture) upcasts the 16-bit q, k, v to float32 and computes attention
// there: the attention rule fuses that as float32 SDPA on the upcasts, and
// attention-on-16-bit-upcasts reads convert(SDPA(upcasts), t16) as SDPA on
// the 16-bit q, k, v — the kernel torch runs for that call on the GPU. Both
// compute the scores and the softmax in float32; the 16-bit kernels round
// the probabilities to 16 bits before P·v, an error of at most half a
// 16-bit ulp of max|v| per output element, the size of the output's own
// rounding to 16 bits that both do. The training rule's reading of the same
// path (attention_train_rules.cpp) rounds at the points the decomposed
// backward does (its products are 16-bit) and at that one more. Not exact,
// so checked where it counts: the zoo's rows compare the fused model's
// outputs and gradients against a float32 reference and against plain
// torch.compile's error (docs/results/zoo.md).
#pragma once

#include <vector>

#include "egraph/rewrite.h"
#include "tensor/tensor_egraph.h"
#include "rules/layout_rules.h"

namespace sator::rules {

const std::vector<RuleInfo>& mixed_precision_rule_info();
std::vector<eg::Rewrite> mixed_precision_rules(TensorEGraph& t);

// Whether every value of class `m` is known to be 0 or a masking value
// (<= -2^100, or -inf): a mask that 16 bits hold exactly once clamped.
bool zero_or_masking_values(TensorEGraph& t, eg::Id m);

}  // namespace sator::rules
