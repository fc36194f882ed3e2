// The in-memory form of one sator.graph document (graph-format.md).
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/dtype.h"
#include "ir/sym_expr.h"
#include "ir/value.h"

namespace sator {

struct Symbol {
  std::string name;
  int64_t hint = 0;
  std::optional<int64_t> min, max;  // nullopt: unbounded
  bool operator==(const Symbol&) const = default;
};

struct TensorType {
  std::vector<SymExpr> shape;
  std::vector<SymExpr> stride;  // empty when not recorded (inferred types)
  DType dtype = DType::Float32;
  bool operator==(const TensorType&) const = default;
};

// One element of a tuple-producing node's `outputs`: a tensor, a scalar
// (`{"scalar": 1024}`, e.g. max_q of cudnn attention), or nothing (`null`).
struct OutputSlot {
  enum class Kind : uint8_t { None, Tensor, Scalar } kind = Kind::None;
  TensorType tensor;
  Value scalar;
  bool operator==(const OutputSlot&) const = default;
};

enum class Role : uint8_t { None, Primal, Tangent, Input };

struct Graph;
std::string_view role_name(Role r);

struct Node {
  // What the node produces, by which of `shape` / `outputs` / `symint` it has.
  enum class Result : uint8_t { None, Tensor, Tuple, SymInt };

  std::string name;
  std::string op;
  Role role = Role::None;
  bool has_args = false;  // `args` present (absent on placeholders)
  std::vector<Value> args;
  std::vector<std::pair<std::string, Value>> kwargs;  // in file order
  Result result = Result::None;
  TensorType tensor;                // Result::Tensor
  std::vector<OutputSlot> outputs;  // Result::Tuple
  SymExpr symint;                   // Result::SymInt
  std::optional<std::string> target;  // get_attr
  std::optional<Value> value;         // get_attr: the constant (Value::none() for null)
  // `sator.chunked` only: the subgraph run once per chunk (one element). Its
  // `symbols` are its own (the chunk's row count); it also sees the outer
  // graph's symbols.
  std::vector<Graph> body;

  const Value* kwarg(std::string_view key) const;
  bool operator==(const Node&) const = default;
};

struct Graph {
  std::string name;
  std::string source_json = "{}";  // the `source` object, kept verbatim (compact JSON)
  std::vector<Symbol> symbols;
  std::vector<Node> nodes;  // topological order

  const Symbol* find_symbol(std::string_view name) const;
  std::optional<NodeId> find_node(std::string_view name) const;
  bool operator==(const Graph&) const = default;
};

// The type of a node's single tensor result, or of element `index` of a tuple.
const TensorType* tensor_of(const Graph& g, NodeId id, std::optional<size_t> index = std::nullopt);

// A device argument for new creation ops: the first one the graph's nodes
// have (creation ops default to the CPU without one).
std::optional<Value> graph_device(const Graph& g);

// Row-major contiguous strides of a shape.
std::vector<SymExpr> contiguous_strides(const std::vector<SymExpr>& shape);

// The strides `view` gives a tensor of `shape` and `stride` reshaped to
// `new_shape` without a copy, or nullopt where no view can (PyTorch's
// computeStride: each run of dims merged or split must be contiguous within
// itself). At known sizes; `reshape` copies exactly where this is nullopt.
std::optional<std::vector<int64_t>> view_strides(const std::vector<int64_t>& shape, const std::vector<int64_t>& stride,
                                                 const std::vector<int64_t>& new_shape);

// A size of `g` at its symbols' hints (1 where a symbol has none).
int64_t at_hints(const Graph& g, const SymExpr& e);

// The strides clone gives a tensor of `g` (torch's preserve_format): dense,
// its dims in the order of their strides (at the symbols' hints).
std::vector<SymExpr> clone_strides(const Graph& g, const TensorType& t);

// Shapes and sizes as text, e.g. "[s52, 12*s27, 768]".
std::string shape_text(const std::vector<SymExpr>& shape);

}  // namespace sator
