#include "tensor/tensor_analysis.h"

#include <algorithm>
#include <cmath>

#include "ir/infer_context.h"
#include "ir/op_table.h"

namespace sator {

TensorData recorded_type(const Node& n) {
  TensorData d;
  d.result = n.result;
  d.type.shape = n.tensor.shape;
  d.type.dtype = n.tensor.dtype;
  d.outputs = n.outputs;
  d.symint = n.symint;
  return d;
}

TensorData TensorAnalysis::make_data(const eg::EGraph& g, eg::Id node) {
  TensorData d;
  if (supplied_) {
    d = std::move(*supplied_);
    supplied_.reset();
  } else {
    d = infer(g, node);
  }
  if (d.result == Node::Result::Tensor) d.constant = fold_constant(g, node, d);
  return d;
}

namespace {

std::optional<double> number(const Value& v) {
  if (v.kind == Value::Kind::Int) return static_cast<double>(v.i);
  if (v.kind == Value::Kind::Float) return v.f;
  if (v.kind == Value::Kind::Bool) return v.b ? 1.0 : 0.0;
  return std::nullopt;
}

// Whether a finite v is a binary float of `bits` significant bits whose
// exponent fits [min_exp, max_exp] (frexp's convention: v = m·2^e, m in [0.5, 1)),
// subnormals included.
bool fits_float(double v, int bits, int min_exp, int max_exp) {
  if (v == 0) return true;
  int e = 0;
  std::frexp(v, &e);
  if (e > max_exp) return false;
  const int usable = bits - std::max(0, min_exp - e);  // fewer bits below the normal range
  if (usable <= 0) return false;
  const double scaled = std::ldexp(v, usable - e);
  return scaled == std::trunc(scaled);
}

// A float64 value that the dtype holds exactly (so folding loses nothing).
bool exact_in(double v, DType t) {
  switch (t) {
    case DType::Float64: return true;
    case DType::Float32: return static_cast<double>(static_cast<float>(v)) == v;
    case DType::BFloat16: return std::isfinite(v) && fits_float(v, 8, -125, 128);
    case DType::Float16: return std::isfinite(v) && fits_float(v, 11, -13, 16);
    case DType::Int64: case DType::Int32: return v == static_cast<double>(static_cast<int64_t>(v)) && std::abs(v) < 2147483648.0;
    case DType::Bool: return v == 0 || v == 1;
    default: return false;
  }
}

}  // namespace

namespace {

// The number a creation op fills its tensor with, as written (before the
// dtype rounds it).
std::optional<double> created_value(const std::string& op, const NodeAttrs& a) {
  if (op == "aten.scalar_tensor.default" && !a.args.empty()) return number(a.args[0]);
  if (op == "aten.full.default" && a.args.size() > 1) return number(a.args[1]);
  return std::nullopt;
}

}  // namespace

std::optional<double> TensorAnalysis::fill_as_written(const eg::EGraph& g, eg::Id cls) const {
  for (eg::Id n : g.class_nodes(g.find(cls)))
    if (const auto v = created_value(lang_.op_name(g.op(n)), lang_.attrs(g.attr(n))); v && std::isfinite(*v)) return v;
  return std::nullopt;
}

// Constant tensors (every element one number) are known through creation
// ops, constants, layout ops and arithmetic on constants.
std::optional<double> TensorAnalysis::fold_constant(const eg::EGraph& g, eg::Id node, const TensorData& d) const {
  const std::string& op = lang_.op_name(g.op(node));
  const NodeAttrs& a = lang_.attrs(g.attr(node));
  auto child = [&](size_t i) -> std::optional<double> {
    if (i >= g.children(node).size()) return std::nullopt;
    return data(g.find(g.children(node)[i])).constant;
  };
  // The value of argument `i`: a number, or the constant of the tensor in that slot.
  auto operand = [&](size_t i) -> std::optional<double> {
    if (i >= a.args.size()) return std::nullopt;
    if (a.args[i].kind == Value::Kind::Node) return child(a.args[i].node);
    return number(a.args[i]);
  };
  std::optional<double> v;
  if (const auto created = created_value(op, a)) v = created;
  else if (op == "get_attr" && a.value) v = number(*a.value);
  else if (op_has(op, OpFact::PicksElements) || op == "prims.convert_element_type.default")
    v = operand(0);  // layout ops, copies and gathers of a tensor of one value hold that value (a cast rounds it)
  else if (op == "aten.mul.Tensor" || op == "aten.mul.Scalar" || op == "aten.add.Tensor" || op == "aten.sub.Tensor" ||
           op == "aten.div.Tensor" || op == "aten.div.Scalar") {
    const auto x = operand(0), y = operand(1);
    if (x && y && a.kwargs.empty()) {
      if (op[5] == 'm') v = *x * *y;
      else if (op[5] == 'a') v = *x + *y;
      else if (op[5] == 's') v = *x - *y;
      else if (*y != 0) v = *x / *y;
    }
  }
  if (v && !std::isfinite(*v) && !std::isinf(*v)) v.reset();  // no NaN constants
  if (v && !exact_in(*v, d.type.dtype) && !(std::isinf(*v) && is_floating(d.type.dtype))) v.reset();
  return v;
}

// Runs the op's shape function on a two-level graph: one placeholder per
// child, holding the child class's type, then the node itself.
TensorData TensorAnalysis::infer(const eg::EGraph& g, eg::Id node) {
  const std::string& op = lang_.op_name(g.op(node));
  const OpInfo* info = find_op(op);
  if (!info || !info->shape_fn) throw std::logic_error("a rule built an opaque node (" + op + ")");
  Graph tmp;
  for (eg::Id child : g.children(node)) {
    const TensorData& d = data(g.find(child));
    Node p;
    p.name = "c" + std::to_string(tmp.nodes.size());
    p.op = "placeholder";
    p.result = d.result;
    p.tensor.shape = d.type.shape;
    p.tensor.dtype = d.type.dtype;
    p.outputs = d.outputs;
    p.symint = d.symint;
    tmp.nodes.push_back(std::move(p));
  }
  const NodeAttrs& a = lang_.attrs(g.attr(node));
  Node n;
  n.name = "n";
  n.op = op;
  n.args = a.args;  // child slots are the placeholders' indices
  n.kwargs = a.kwargs;
  tmp.nodes.push_back(std::move(n));
  InferContext ctx(tmp, tmp.nodes.back(), *info, prover_);
  const Inferred inf = info->shape_fn(ctx);
  TensorData d;
  d.result = inf.result;
  d.symint = inf.symint;
  if (inf.result == Node::Result::Tensor) {
    d.type.shape = inf.slots[0].shape;
    d.type.dtype = inf.slots[0].dtype;
  } else if (inf.result == Node::Result::Tuple) {
    for (const InferredSlot& s : inf.slots) {
      OutputSlot o;
      o.kind = static_cast<OutputSlot::Kind>(static_cast<int>(s.kind));
      o.tensor.shape = s.shape;
      o.tensor.dtype = s.dtype;
      if (s.kind == InferredSlot::Kind::Scalar) o.scalar = Value::of_sym(s.scalar);
      d.outputs.push_back(std::move(o));
    }
  }
  return d;
}

eg::DidMerge TensorAnalysis::merge_data(TensorData& into, TensorData from) {
  auto differ = [&]() -> std::string {
    if (into.result != from.result) return "one is a tensor and the other is not";
    if (into.result == Node::Result::Tensor) {
      if (into.type.dtype != from.type.dtype) return "dtypes differ";
      if (into.type.shape.size() != from.type.shape.size()) return "ranks differ";
      for (size_t i = 0; i < into.type.shape.size(); ++i)
        if (prover_.equal(into.type.shape[i], from.type.shape[i]) == Truth::False)
          return "shapes " + shape_text(into.type.shape) + " and " + shape_text(from.type.shape) + " differ";
    }
    if (into.result == Node::Result::SymInt && prover_.equal(into.symint, from.symint) == Truth::False)
      return "values differ";
    if (into.constant && from.constant && *into.constant != *from.constant &&
        !(std::isnan(*into.constant) && std::isnan(*from.constant)))
      return "constant values differ";
    return {};
  };
  if (std::string why = differ(); !why.empty()) throw UnsoundMerge("a rule merged two classes whose " + why);
  // A constant learnt from the other side is new to this class's parents.
  if (!into.constant && from.constant) {
    into.constant = from.constant;
    return {true, false};
  }
  if (into.constant && !from.constant) return {false, true};
  return {false, false};
}

}  // namespace sator
