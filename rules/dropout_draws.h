// Whether an extraction mixes two sources of dropout draws.
//
// A fused attention kernel with dropout draws its keep-mask itself (Philox,
// inside the kernel); the decomposed graph draws it with `aten.rand`. The
// rules put the kernel's outputs in the same classes as the decomposed
// forms, which is exact only when the graph uses one source: if an
// extraction takes the kernel for some outputs (O, dQ) and the decomposed
// form for others (dK, dV), the two halves drop different entries. A cost
// model that counts shared subgraphs once per use can pick such a mix.
#pragma once

#include "ir/graph.h"

namespace sator::rules {

// True when `output` has fused dropout attention kernels that `input` did
// not, and still draws as many of the replaced `aten.rand` masks as would
// be left over had every kernel replaced its own (each replaces one).
bool mixes_dropout_draws(const Graph& input, const Graph& output);

}  // namespace sator::rules
