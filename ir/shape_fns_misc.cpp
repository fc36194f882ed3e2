// Creation ops, randomness, embedding, symbolic-int arithmetic and getitem.
#include "ir/shape_fns.h"

namespace sator::shape_fns {

namespace {

std::vector<SymExpr> size_list(InferContext& c, const char* name) {
  std::vector<SymExpr> size = c.sym_list(name);
  for (const SymExpr& d : size)
    if (auto k = d.as_constant(); k && *k < 0) c.fail("negative size " + std::to_string(*k));
  return size;
}

}  // namespace

Inferred full(InferContext& c) {
  DType dtype = DType::Float32;
  if (auto t = c.dtype_arg("dtype")) dtype = *t;
  else if (c.arg("fill_value").kind == Value::Kind::Bool) dtype = DType::Bool;
  else if (c.arg("fill_value").kind != Value::Kind::Float) dtype = DType::Int64;
  return Inferred::tensor(size_list(c, "size"), dtype);
}

Inferred scalar_tensor(InferContext& c) { return Inferred::tensor({}, c.dtype_arg("dtype").value_or(DType::Float32)); }

Inferred iota(InferContext& c) { return Inferred::tensor({c.sym_arg("length")}, *c.dtype_arg("dtype")); }

Inferred rand(InferContext& c) {
  return Inferred::tensor(size_list(c, "size"), c.dtype_arg("dtype").value_or(DType::Float32));
}

Inferred inductor_random(InferContext& c) { return Inferred::tensor(size_list(c, "size"), DType::Float32); }

Inferred inductor_seeds(InferContext& c) {
  if (c.int_arg("count") < 0) c.fail("negative seed count");
  return Inferred::tensor({c.int_arg("count")}, DType::Int64);
}

Inferred inductor_lookup_seed(InferContext&) { return Inferred::tensor({}, DType::Int64); }

Inferred embedding(InferContext& c) {
  const TensorType& weight = c.tensor("weight");
  const TensorType& indices = c.tensor("indices");
  if (weight.shape.size() != 2) c.fail("embedding weight must have rank 2");
  if (!is_integral(indices.dtype, false)) c.fail("embedding indices must be integral");
  std::vector<SymExpr> out = indices.shape;
  out.push_back(weight.shape[1]);
  return Inferred::tensor(std::move(out), weight.dtype);
}

Inferred sym_mul(InferContext& c) { return Inferred::sym(c.to_sym(c.arg("a"), "a") * c.to_sym(c.arg("b"), "b")); }
Inferred sym_add(InferContext& c) { return Inferred::sym(c.to_sym(c.arg("a"), "a") + c.to_sym(c.arg("b"), "b")); }
Inferred sym_sub(InferContext& c) { return Inferred::sym(c.to_sym(c.arg("a"), "a") - c.to_sym(c.arg("b"), "b")); }
Inferred sym_neg(InferContext& c) { return Inferred::sym(-c.to_sym(c.arg("a"), "a")); }

Inferred sym_floordiv(InferContext& c) {
  SymExpr b = c.to_sym(c.arg("b"), "b");
  if (b == SymExpr(0)) c.fail("division by zero");
  return Inferred::sym(SymExpr::floordiv(c.to_sym(c.arg("a"), "a"), b));
}

Inferred sym_size(InferContext& c) {
  const TensorType& self = c.tensor("self");
  if (self.shape.empty()) c.fail("sym_size of a 0-dim tensor");
  return Inferred::sym(self.shape[c.wrap_dim(c.int_arg("dim"), self.shape.size())]);
}

// Element `index` of a tuple-producing node, as that node recorded it.
Inferred getitem(InferContext& c) {
  const Value& a = c.arg("a");
  if (!a.is_node()) c.fail("getitem of something that is not a node");
  const Node& producer = c.graph().nodes[a.node];
  if (producer.result == Node::Result::None) throw OpaqueResult{};  // an opaque op that recorded nothing
  if (producer.result != Node::Result::Tuple) c.fail("getitem of node '" + producer.name + "', which is not a tuple");
  const int64_t i = c.int_arg("index");
  if (i < 0 || static_cast<size_t>(i) >= producer.outputs.size())
    c.fail("getitem index " + std::to_string(i) + " out of range for '" + producer.name + "'");
  const OutputSlot& slot = producer.outputs[static_cast<size_t>(i)];
  switch (slot.kind) {
    case OutputSlot::Kind::Tensor: return Inferred::tensor(slot.tensor.shape, slot.tensor.dtype);
    case OutputSlot::Kind::Scalar: return Inferred::sym(c.to_sym(slot.scalar, "the tuple element"));
    case OutputSlot::Kind::None: break;
  }
  c.fail("getitem reads element " + std::to_string(i) + " of '" + producer.name + "', which is None");
}

}  // namespace sator::shape_fns
