// Pointwise ops: broadcasting and torch's type promotion (result_type).
#include "ir/shape_fns.h"

namespace sator::shape_fns {

std::vector<SymExpr> broadcast(InferContext& c, const std::vector<SymExpr>& a, const std::vector<SymExpr>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<SymExpr> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const SymExpr* x = i < rank - a.size() ? nullptr : &a[i - (rank - a.size())];
    const SymExpr* y = i < rank - b.size() ? nullptr : &b[i - (rank - b.size())];
    if (!x || *x == SymExpr(1)) out[i] = y ? *y : *x;
    else if (!y || *y == SymExpr(1)) out[i] = *x;
    else if (c.prover().equal(*x, *y) == Truth::False)
      c.fail("shapes " + shape_text(a) + " and " + shape_text(b) + " cannot be broadcast together");
    else out[i] = *x;
  }
  return out;
}

namespace {

// Shapes and the promoted dtype of a pointwise op's operands (tensors or numbers).
struct Operands {
  std::vector<SymExpr> shape;
  ResultTypeState types;
};

Operands gather_operands(InferContext& c, std::initializer_list<const char*> names) {
  Operands ops;
  bool first = true;
  for (const char* name : names) {
    const Value& v = c.arg(name);
    if (v.is_node()) {
      const TensorType& t = c.tensor(name);
      ops.shape = first ? t.shape : broadcast(c, ops.shape, t.shape);
      first = false;
      ops.types.add_tensor(t.dtype, t.shape.empty());
    } else {
      ops.types.add_scalar(c.scalar_dtype(v));
    }
  }
  if (first) c.fail("a pointwise op needs at least one tensor operand");
  return ops;
}

DType result(InferContext& c, const Operands& ops) {
  auto t = ops.types.result();
  if (!t) c.fail("cannot determine the result dtype");
  return *t;
}

DType to_float(DType t) { return is_integral(t, /*include_bool=*/true) ? DType::Float32 : t; }

}  // namespace

Inferred binary_arith(InferContext& c) {
  Operands ops = gather_operands(c, {"self", "other"});
  return Inferred::tensor(std::move(ops.shape), result(c, ops));
}

Inferred true_divide(InferContext& c) {
  Operands ops = gather_operands(c, {"self", "other"});
  return Inferred::tensor(std::move(ops.shape), to_float(result(c, ops)));
}

Inferred comparison(InferContext& c) {
  Operands ops = gather_operands(c, {"self", "other"});
  return Inferred::tensor(std::move(ops.shape), DType::Bool);
}

Inferred bitwise(InferContext& c) {
  Operands ops = gather_operands(c, {"self", "other"});
  DType t = result(c, ops);
  if (!is_integral(t, /*include_bool=*/true)) c.fail("bitwise ops need integral or bool operands");
  return Inferred::tensor(std::move(ops.shape), t);
}

Inferred unary_float(InferContext& c) {
  const TensorType& self = c.tensor("self");
  return Inferred::tensor(self.shape, to_float(self.dtype));
}

Inferred unary_same(InferContext& c) {
  const TensorType& self = c.tensor("self");
  return Inferred::tensor(self.shape, self.dtype);
}

Inferred logical_not(InferContext& c) {
  const TensorType& self = c.tensor("self");
  return Inferred::tensor(self.shape, DType::Bool);
}

Inferred pow_scalar(InferContext& c) {
  Operands ops = gather_operands(c, {"self", "exponent"});
  return Inferred::tensor(std::move(ops.shape), result(c, ops));
}

Inferred where(InferContext& c) {
  Operands values = gather_operands(c, {"self", "other"});
  std::vector<SymExpr> shape = values.shape;
  if (c.arg("condition").is_node()) shape = broadcast(c, c.tensor("condition").shape, shape);
  return Inferred::tensor(std::move(shape), result(c, values));
}

Inferred fma(InferContext& c) {
  Operands ops = gather_operands(c, {"a", "b", "c"});
  return Inferred::tensor(std::move(ops.shape), result(c, ops));
}

Inferred convert_element_type(InferContext& c) {
  const TensorType& a = c.tensor("a");
  return Inferred::tensor(a.shape, *c.dtype_arg("dtype"));
}

}  // namespace sator::shape_fns
