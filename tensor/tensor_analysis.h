// The tensor e-class analysis: every class carries what its value is — a
// tensor's shape and dtype, a tuple's element types, or a symbolic integer.
//
// Nodes copied from a graph bring their recorded type (supplied before the
// add); nodes built by rules get theirs from the op's shape function, run on
// the children's types. Merging two classes whose types are provably
// different is a soundness bug in a rule, and throws.
#pragma once

#include <optional>
#include <stdexcept>

#include "egraph/analysis.h"
#include "egraph/egraph.h"
#include "ir/shape_prover.h"
#include "tensor/tensor_lang.h"

namespace sator {

struct TensorData {
  Node::Result result = Node::Result::None;
  TensorType type;                  // Tensor (strides left empty)
  std::vector<OutputSlot> outputs;  // Tuple
  SymExpr symint;                   // SymInt
  std::optional<double> constant;   // Tensor: every element is this number
};

struct UnsoundMerge : std::logic_error {
  using std::logic_error::logic_error;
};

class TensorAnalysis : public eg::TypedAnalysis<TensorData> {
 public:
  TensorAnalysis(TensorLanguage& lang, ShapeProver& prover) : lang_(lang), prover_(prover) {}

  // The type of the node about to be added (if it makes a new class).
  void supply(TensorData d) { supplied_ = std::move(d); }
  void clear_supplied() { supplied_.reset(); }
  TensorData make_data(const eg::EGraph& g, eg::Id node) override;
  eg::DidMerge merge_data(TensorData& into, TensorData from) override;

  // The shape of a tensor class, or nullptr.
  // The number every element of a tensor class holds, if known.
  std::optional<double> constant(const eg::EGraph& g, eg::Id cls) const { return data(g.find(cls)).constant; }
  // The fill value of a creation op (scalar_tensor, full) in the class, as
  // written: also where the dtype does not hold it exactly (`constant` then
  // knows nothing).
  std::optional<double> fill_as_written(const eg::EGraph& g, eg::Id cls) const;
  const std::vector<SymExpr>* shape(const eg::EGraph& g, eg::Id cls) const {
    const TensorData& d = data(g.find(cls));
    return d.result == Node::Result::Tensor ? &d.type.shape : nullptr;
  }
  ShapeProver& prover() { return prover_; }

 private:
  TensorData infer(const eg::EGraph& g, eg::Id node);
  std::optional<double> fold_constant(const eg::EGraph& g, eg::Id node, const TensorData& d) const;

  TensorLanguage& lang_;
  ShapeProver& prover_;
  std::optional<TensorData> supplied_;
};

// A node's recorded type as analysis data.
TensorData recorded_type(const Node& n);

}  // namespace sator
