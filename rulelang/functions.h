// The functions rule expressions call: readings of a match (shape, rank,
// dtype), layout arithmetic (permutation composition and inverse, inserting
// or removing a dim, products), comparisons decided by the shape prover, and
// logic. One table gives each its type (for the compiler) and its code.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "tensor/tensor_egraph.h"
#include "ir/value.h"
#include "rulelang/compiled_rule.h"

namespace sator::rulelang {

// A value while a rule runs: a tensor (an e-class) or anything else.
// Values are read where they live when they outlive the match (a node's
// attribute, a literal of the rule, a let's value) and held only when
// computed: a rule runs on every match in every iteration, and copying
// values cost more than matching.
struct RValue {
  eg::Id cls = eg::kNoId;  // a tensor when not kNoId
  // A tensor's shape read in place (what `shape` gives a comparison: most
  // conditions compare two shapes). Valid until the next node is added.
  const std::vector<SymExpr>* shape = nullptr;
  // A computed size list (remove, insert, list of sizes, ...): kept as sizes,
  // which the size functions read directly, rather than as a list Value.
  std::optional<std::vector<SymExpr>> sizes;
  const Value* ref = nullptr;
  // An int or a bool computed by a function (rank, size, a comparison),
  // held as a number: most conditions read only these, and making each a
  // Value cost more than the comparison.
  enum class Scalar : uint8_t { None, Int, Bool } scalar = Scalar::None;
  int64_t number = 0;
  // The value held; a size list or a scalar is made one only when a
  // function reads it as a Value (value() fills it).
  mutable std::optional<Value> own;

  const Value& value() const;
  bool truth() const { return scalar == Scalar::Bool ? number != 0 : value().b; }
  static RValue of_int(int64_t i) { RValue r; r.scalar = Scalar::Int; r.number = i; return r; }
  static RValue of_bool(bool b) { RValue r; r.scalar = Scalar::Bool; r.number = b; return r; }
  // The size list this holds (in place or computed), or null.
  const std::vector<SymExpr>* size_list() const { return sizes ? &*sizes : shape; }
  static RValue tensor(eg::Id c) { RValue r; r.cls = c; return r; }
  static RValue of(Value x) { RValue r; r.own = std::move(x); return r; }
  static RValue of_sizes(std::vector<SymExpr> s) { RValue r; r.sizes = std::move(s); return r; }
  static RValue at(const Value& x) { RValue r; r.ref = &x; return r; }
  // The same value, read where this one holds it.
  RValue view() const {
    RValue r;
    r.cls = cls;
    r.shape = size_list();
    r.ref = own ? &*own : ref;
    r.scalar = scalar;
    r.number = number;
    return r;
  }
  // The value, moved out where this one holds it.
  Value take() { return own ? std::move(*own) : value(); }
};

// A shape read in place made a value of its own (it outlives the match's
// node additions).
RValue materialize(RValue x);
// Whether two values are equal: tensors by class, sizes (and shapes read in
// place) as the shape prover decides — True or False only when proved —,
// the rest by value. `=` holds on True, `!=` on False.
Truth equality(TensorEGraph& t, const RValue& a, const RValue& b);

// Thrown when a function cannot give a value for this match (a dim out of
// range, a list that is not a permutation, a class without a shape): the
// match is declined, as a condition that does not hold.
struct Decline {};

struct Function {
  const char* name;
  std::vector<Type> params;  // with `variadic`, every argument has params[0]'s type
  Type result;
  bool variadic = false;
  const char* doc;
  RValue (*run)(TensorEGraph& t, std::span<const RValue* const> args);  // null: the interpreter's own (and, or)
};

const Function* find_function(std::string_view name);
const std::vector<Function>& all_functions();

// Sizes as a list Value, each an Int where it is a constant (the form the
// graph and the other rules write).
Value sizes_value(const std::vector<SymExpr>& s);
std::vector<SymExpr> to_sizes(const Value& v);  // throws Decline for a non-list or non-size element

}  // namespace sator::rulelang
