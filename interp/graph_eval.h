// Evaluates a whole sator.graph in the reference interpreter: every node in
// order, arguments bound through the op table's schemas, symbolic sizes
// replaced by chosen values. Random ops are refused by name.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "interp/tensor64.h"
#include "ir/graph.h"

namespace sator::interp {

// What a node evaluates to.
struct EvalValue {
  enum class Kind : uint8_t { None, Tensor, Number, Tuple } kind = Kind::None;
  Tensor64 tensor;
  double number = 0.0;  // symints and scalar results
  std::vector<EvalValue> items;

  static EvalValue of_tensor(Tensor64 t) { EvalValue v; v.kind = Kind::Tensor; v.tensor = std::move(t); return v; }
  static EvalValue of_number(double x) { EvalValue v; v.kind = Kind::Number; v.number = x; return v; }
  static EvalValue of_tuple(std::vector<EvalValue> items) {
    EvalValue v; v.kind = Kind::Tuple; v.items = std::move(items); return v;
  }
};

// The concrete value of every symbol: given ones, else the symbol's hint.
using SymbolValues = std::map<std::string, int64_t>;

// Random ops (`aten.rand`, attention's dropout): refused by default. With
// ByNodeName each random node draws from a stream seeded by `seed` and its
// name, so a graph and its optimization (which keeps node names) draw the
// same numbers. With ByDrawOrder the k-th draw of the run uses stream k:
// check-rules' coupling of a rule's two sides (explicit dropout on the left,
// SDPA's own on the right), which shows them equal in distribution.
struct EvalOptions {
  enum class Random : uint8_t { Refuse, ByNodeName, ByDrawOrder } random = Random::Refuse;
  uint64_t seed = 0;
  // Real: every value in float64 (the real-number reading). Dtype: every
  // input and every op's result rounded to its dtype (interp/rounding.h).
  enum class Precision : uint8_t { Real, Dtype } precision = Precision::Real;
};

// Runs `g` on one tensor per tensor placeholder (in placeholder order; symint
// placeholders take their symbol's value) and returns the output node's values.
// Throws InterpError naming the node for anything it cannot evaluate.
std::vector<EvalValue> evaluate_graph(const Graph& g, const std::vector<Tensor64>& inputs,
                                      const SymbolValues& symbols = {}, const EvalOptions& options = {});

// The concrete shape and dtype of each tensor placeholder, for making inputs.
struct InputSpec {
  std::string name;
  Shape shape;
  DType dtype;
};
std::vector<InputSpec> input_specs(const Graph& g, const SymbolValues& symbols = {});

}  // namespace sator::interp
