// Index proofs for layout rules: both sides of a rewrite read, for every
// output index, the same element of the same input (through one-tensor
// elementwise ops, which must be the same on both sides). Each layout op's
// index map is written as Z3 integer terms over symbolic output indices:
// permute and transpose reorder, slice and select shift, expand pins
// broadcast dims to 0, unsqueeze and squeeze insert and drop, and view
// linearizes row-major and de-linearizes, which needs division and modulo by
// symbolic sizes (nonlinear: Z3 may answer unknown there, and check-rules
// then proves the same at the concrete sizes of its trials).
#pragma once

#include <string>

#include "ir/graph.h"

namespace sator::check {

struct IndexProof {
  enum class Status : uint8_t { Proved, Refuted, Unknown, NotIndexMap } status = Status::NotIndexMap;
  std::string detail;  // Refuted: the counterexample; Unknown / NotIndexMap: why
};

// `lhs` and `rhs` each have one output; their symbols are the same.
IndexProof prove_same_indices(const Graph& lhs, const Graph& rhs, unsigned timeout_ms = 2000);

}  // namespace sator::check
