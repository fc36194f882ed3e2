// Recognising what an additive attention mask built from iotas does.
//
// Masks are built from iotas: the column index along the last axis, the row
// index along the one before, compared, combined with `&`, and turned into
// 0 / -inf (or a huge negative) by `where`. This follows a class through
// those ops keeping each value as an affine form a·j + b·i + c of the column
// j and row i (a boolean keeps its comparisons with 0), drops the
// comparisons that hold on every entry of the mask's shape (a sliding window
// wider than the sequence, `row >= 0`), and says whether the mask keeps
// every entry (it adds 0: no mask at all) or exactly the entries with
// j <= i, pushing the rest to at most kMaskingValue — the mask SDPA applies
// itself with is_causal=True.
#pragma once

#include "tensor/tensor_egraph.h"

namespace sator::rules {

// The largest value that masks an entry of the scores: float16's lowest,
// what transformers' SDPA masks add (-inf and float32's lowest mask too).
// An entry it masks gets exp(s - 65504 - rowmax): exactly 0 in float32 and
// wider types (below e^-104) unless a masked score exceeds its row's largest
// kept score by more than ~65,400 — scores far outside any softmax's working
// range (float16 cannot hold them at all); then the masked form is not
// causal attention either, but a softmax that ignores the mask.
constexpr double kMaskingValue = -65504.0;

enum class MaskKind : uint8_t {
  Other,   // anything else: passed to SDPA as it is
  Zero,    // adds 0 everywhere: no mask
  Causal,  // the causal mask of an L x L score matrix, L its last dimension
};

// What `mask` (a floating tensor class of the e-graph) does to the scores.
MaskKind classify_mask(TensorEGraph& t, eg::Id mask);

// What masking the entries of `shape` where the boolean `cond` fails
// (kept_when_true) or holds does: the same kinds, read from the condition
// alone (masked_fill(x, cond, K) masks where cond holds).
MaskKind classify_mask_condition(TensorEGraph& t, eg::Id cond, const std::vector<SymExpr>& shape, bool kept_when_true);

}  // namespace sator::rules
