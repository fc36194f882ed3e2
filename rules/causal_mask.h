// Recognising the causal triangle in an additive attention mask.
//
// Masks are built from iotas: the column index along the last axis, the row
// index along the one before, compared and turned into 0 / -inf (or a huge
// negative) by `where`. This follows a class through those ops keeping each
// value as an affine form a·j + b·i + c of the column j and row i (a boolean
// keeps the comparison with 0), and says whether the mask keeps exactly the
// entries with j <= i and pushes the rest to at most -1e30 — the mask SDPA
// applies itself with is_causal=True.
#pragma once

#include "ir/tensor_egraph.h"

namespace sator::rules {

// True when `mask` (a tensor class of the e-graph) is the causal mask of an
// L x L score matrix, L being the mask's last dimension.
bool is_causal_mask(TensorEGraph& t, eg::Id mask);

}  // namespace sator::rules
