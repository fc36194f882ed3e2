// Binds a node's arguments to its op's schema and gives shape functions typed
// access to them. Anything that does not fit the schema throws ShapeError.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/op_table.h"
#include "ir/shape_prover.h"

namespace sator {

struct ShapeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Thrown by a shape function that cannot know the result from its inputs
// (e.g. an element of an opaque op's unrecorded tuple): the node is opaque.
struct OpaqueResult {};

// What a shape function infers for a node.
struct InferredSlot {
  enum class Kind : uint8_t { None, Tensor, Scalar } kind = Kind::None;
  std::vector<SymExpr> shape;
  DType dtype = DType::Float32;
  SymExpr scalar;
};

struct Inferred {
  Node::Result result = Node::Result::Tensor;
  std::vector<InferredSlot> slots;  // Tensor: exactly one; Tuple: one per element
  SymExpr symint;                   // SymInt

  static Inferred tensor(std::vector<SymExpr> shape, DType dtype);
  static Inferred sym(SymExpr value);
  static Inferred tuple(std::vector<InferredSlot> slots);
};
InferredSlot tensor_slot(std::vector<SymExpr> shape, DType dtype);

class InferContext {
 public:
  InferContext(const Graph& g, const Node& n, const OpInfo& op, ShapeProver& prover);

  const Graph& graph() const { return g_; }
  const Node& node() const { return n_; }
  ShapeProver& prover() { return prover_; }

  const Value& arg(std::string_view name) const;  // the bound value (default filled in)
  bool is_none(std::string_view name) const { return arg(name).is_none(); }

  // A Tensor parameter bound to a node.
  const TensorType& tensor(std::string_view name) const;
  // A Tensor parameter bound to a Python number (a "wrapped number").
  bool is_number(std::string_view name) const;
  DType number_dtype(std::string_view name) const;  // Bool, Int64 or Float64
  std::vector<const TensorType*> tensor_list(std::string_view name) const;  // nullptr for None elements

  int64_t int_arg(std::string_view name) const;
  double float_arg(std::string_view name) const;
  bool bool_arg(std::string_view name) const;
  SymExpr sym_arg(std::string_view name) const;  // SymInt: an int, a {"sym"} or a symint node
  std::vector<int64_t> int_list(std::string_view name) const;
  std::vector<SymExpr> sym_list(std::string_view name) const;
  std::vector<bool> bool_list(std::string_view name) const;
  std::optional<DType> dtype_arg(std::string_view name) const;

  // Wraps a dimension index into [0, rank) as PyTorch does; throws if out of range.
  size_t wrap_dim(int64_t dim, size_t rank) const;
  // The scalar value of a Scalar/number argument's dtype class.
  DType scalar_dtype(const Value& v) const;

  [[noreturn]] void fail(const std::string& message) const;

  // Symbolic integer carried by a value: ints, {"sym"}, symint-producing nodes.
  SymExpr to_sym(const Value& v, std::string_view what) const;

 private:
  void bind();
  void check_type(const ParamSpec& p, const Value& v) const;
  size_t index_of(std::string_view name) const;

  const Graph& g_;
  const Node& n_;
  const OpInfo& op_;
  ShapeProver& prover_;
  std::vector<Value> bound_;  // one per schema parameter
};

// Parses a default written in a schema ("False", "-1", "[]", "None", "0.0").
Value parse_default(const ParamSpec& p);

}  // namespace sator
