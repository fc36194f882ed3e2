// An encoded argument value of the sator.graph format (graph-format.md,
// "Encoded values"): scalars, node references, symbolic integers, lists,
// dtypes, devices, enums, strings, and opaque dicts/reprs kept for round trips.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/sym_expr.h"

namespace sator {

using NodeId = uint32_t;

// A constant tensor's elements as the format nests them (a get_attr's
// `value`), packed: 8 bytes an element where a list of Values costs ~150.
// Row-major, `dims` the nesting; every leaf of one kind, as torch's tolist()
// writes a tensor (ints, floats or bools).
struct PackedNumbers {
  enum class Leaf : uint8_t { Int, Float, Bool };
  Leaf leaf = Leaf::Float;
  std::vector<int64_t> dims;
  std::vector<int64_t> ints;    // Int and Bool (0 / 1) leaves
  std::vector<double> floats;   // Float leaves

  size_t size() const { return leaf == Leaf::Float ? floats.size() : ints.size(); }
  double number(size_t k) const { return leaf == Leaf::Float ? floats[k] : static_cast<double>(ints[k]); }
  bool operator==(const PackedNumbers& o) const;
};

struct Value {
  enum class Kind : uint8_t { None, Bool, Int, Float, Str, Node, Sym, List, DType, Device, Enum, Dict, Repr, Numbers };

  Kind kind = Kind::None;
  bool b = false;
  int64_t i = 0;
  double f = 0.0;                  // Float, including inf and nan
  NodeId node = 0;                 // Node
  sator::DType dtype = sator::DType::Float32;  // DType
  std::string s;                   // Str, Device, Enum, Repr; Dict: its JSON text
  SymExpr sym;                     // Sym
  std::vector<Value> list;         // List
  std::shared_ptr<const PackedNumbers> numbers;  // Numbers: nested lists of numbers, packed

  static Value none() { return {}; }
  static Value of_bool(bool v) { Value x; x.kind = Kind::Bool; x.b = v; return x; }
  static Value of_int(int64_t v) { Value x; x.kind = Kind::Int; x.i = v; return x; }
  static Value of_float(double v) { Value x; x.kind = Kind::Float; x.f = v; return x; }
  static Value of_node(NodeId n) { Value x; x.kind = Kind::Node; x.node = n; return x; }
  static Value of_sym(SymExpr e) { Value x; x.kind = Kind::Sym; x.sym = std::move(e); return x; }
  static Value of_list(std::vector<Value> v) { Value x; x.kind = Kind::List; x.list = std::move(v); return x; }
  static Value of_dtype(sator::DType t) { Value x; x.kind = Kind::DType; x.dtype = t; return x; }
  static Value of_text(Kind k, std::string text) { Value x; x.kind = k; x.s = std::move(text); return x; }
  static Value of_numbers(std::shared_ptr<const PackedNumbers> p) { Value x; x.kind = Kind::Numbers; x.numbers = std::move(p); return x; }

  bool is_none() const { return kind == Kind::None; }
  bool is_node() const { return kind == Kind::Node; }
  bool is_list() const { return kind == Kind::List; }

  // Structural equality; NaN equals NaN so that round trips compare equal.
  bool operator==(const Value& o) const;

  // Calls fn(NodeId) for every node reference inside, depth first.
  template <class Fn>
  void for_each_node(Fn&& fn) const {
    if (kind == Kind::Node) fn(node);
    for (const Value& v : list) v.for_each_node(fn);
  }
};

}  // namespace sator
