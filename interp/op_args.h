// A node's arguments as the interpreter's kernels see them: bound to the op's
// schema (InferContext), with tensors and symbolic sizes made concrete.
#pragma once

#include <deque>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "interp/graph_eval.h"
#include "ir/infer_context.h"

namespace sator::interp {

// Uniform [0, 1) numbers of a shape, from the run's random source.
using UniformDraw = std::function<Tensor64(const Shape&)>;

class OpArgs {
 public:
  OpArgs(InferContext& ctx, const std::vector<EvalValue>& values,
         const std::function<int64_t(const SymExpr&)>& concrete, const UniformDraw* uniform = nullptr)
      : ctx_(ctx), values_(values), concrete_(concrete), uniform_(uniform) {}

  const Node& node() const { return ctx_.node(); }
  DType result_dtype() const;  // the node's (single) tensor result
  bool is_none(std::string_view name) const { return ctx_.is_none(name); }

  // A node's tensor (by reference: weights are not copied), or a Python
  // number as a 0-d tensor (kept alive by this OpArgs).
  const Tensor64& tensor(std::string_view name) const;
  std::optional<Tensor64> optional_tensor(std::string_view name) const;
  std::vector<Tensor64> tensor_list(std::string_view name) const;
  std::vector<std::optional<Tensor64>> optional_tensor_list(std::string_view name) const;
  int64_t integer(std::string_view name) const;  // int or SymInt
  Shape sizes(std::string_view name) const;      // int[] or SymInt[]
  double scalar(std::string_view name) const;    // Scalar, float, bool, int
  bool flag(std::string_view name) const { return ctx_.bool_arg(name); }
  std::vector<bool> bools(std::string_view name) const { return ctx_.bool_list(name); }
  std::optional<DType> dtype(std::string_view name) const { return ctx_.dtype_arg(name); }
  // The run's random draws; nullptr when random ops are refused.
  const UniformDraw* uniform() const { return uniform_; }

 private:
  double number_of(const Value& v) const;
  const EvalValue& value_of(NodeId id) const;

  InferContext& ctx_;
  const std::vector<EvalValue>& values_;
  const std::function<int64_t(const SymExpr&)>& concrete_;
  const UniformDraw* uniform_;
  mutable std::deque<Tensor64> scratch_;  // numbers made tensors (a deque: references stay valid)
};

// Kernels by op name; nullptr for an op the interpreter does not know.
using OpKernel = EvalValue (*)(const OpArgs&);
OpKernel find_kernel(std::string_view op);

// Rounds values to what `dtype` can hold: bools to 0/1, integers toward zero;
// floating types keep float64 (the reference does not model rounding).
Tensor64 cast_to(Tensor64 t, DType dtype);

}  // namespace sator::interp
