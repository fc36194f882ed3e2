#include "interp/op_args.h"

#include <cmath>

namespace sator::interp {

DType OpArgs::result_dtype() const { return node().tensor.dtype; }

const EvalValue& OpArgs::value_of(NodeId id) const { return values_.at(id); }

const Tensor64& OpArgs::tensor(std::string_view name) const {
  const Value& v = ctx_.arg(name);
  if (v.is_node()) {
    const EvalValue& e = value_of(v.node);
    if (e.kind == EvalValue::Kind::Number) return scratch_.emplace_back(Tensor64::scalar(e.number));
    if (e.kind != EvalValue::Kind::Tensor) throw InterpError(std::string(name) + " is not a tensor");
    return e.tensor;
  }
  // A Python number in a Tensor slot ("wrapped number").
  return scratch_.emplace_back(Tensor64::scalar(number_of(v), ctx_.number_dtype(name)));
}

std::optional<Tensor64> OpArgs::optional_tensor(std::string_view name) const {
  if (ctx_.is_none(name)) return std::nullopt;
  return tensor(name);
}

std::vector<std::optional<Tensor64>> OpArgs::optional_tensor_list(std::string_view name) const {
  std::vector<std::optional<Tensor64>> out;
  for (const Value& v : ctx_.arg(name).list) {
    if (v.is_none()) {
      out.emplace_back();
      continue;
    }
    const EvalValue& e = value_of(v.node);
    if (e.kind != EvalValue::Kind::Tensor) throw InterpError(std::string(name) + " holds a non-tensor");
    out.emplace_back(e.tensor);
  }
  return out;
}

std::vector<Tensor64> OpArgs::tensor_list(std::string_view name) const {
  std::vector<Tensor64> out;
  for (auto& t : optional_tensor_list(name)) {
    if (!t) throw InterpError(std::string(name) + " holds None");
    out.push_back(std::move(*t));
  }
  return out;
}

int64_t OpArgs::integer(std::string_view name) const { return concrete_(ctx_.sym_arg(name)); }

Shape OpArgs::sizes(std::string_view name) const {
  Shape out;
  for (const SymExpr& e : ctx_.sym_list(name)) out.push_back(concrete_(e));
  return out;
}

double OpArgs::number_of(const Value& v) const {
  switch (v.kind) {
    case Value::Kind::Int: return static_cast<double>(v.i);
    case Value::Kind::Float: return v.f;
    case Value::Kind::Bool: return v.b ? 1.0 : 0.0;
    case Value::Kind::Sym: return static_cast<double>(concrete_(v.sym));
    case Value::Kind::Node: {
      const EvalValue& e = value_of(v.node);
      if (e.kind == EvalValue::Kind::Number) return e.number;
      if (e.kind == EvalValue::Kind::Tensor && e.tensor.numel() == 1) return e.tensor.data[0];
      throw InterpError("a scalar argument is not a number");
    }
    default: throw InterpError("a scalar argument is not a number");
  }
}

double OpArgs::scalar(std::string_view name) const { return number_of(ctx_.arg(name)); }

Tensor64 cast_to(Tensor64 t, DType dtype) {
  t.dtype = dtype;
  if (dtype == DType::Bool) {
    for (double& x : t.data) x = x != 0.0 ? 1.0 : 0.0;
  } else if (is_integral(dtype, false)) {
    for (double& x : t.data) x = std::trunc(x);
  }
  return t;
}

}  // namespace sator::interp
