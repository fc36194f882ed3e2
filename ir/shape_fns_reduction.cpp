// Reductions, scans and gathers.
#include <algorithm>

#include "ir/shape_fns.h"

namespace sator::shape_fns {

namespace {

// The shape after reducing `dims` (empty: every dimension).
std::vector<SymExpr> reduce_shape(InferContext& c, const std::vector<SymExpr>& shape, std::vector<int64_t> dims,
                                  bool keepdim) {
  std::vector<bool> reduced(shape.size(), dims.empty());
  for (int64_t d : dims) {
    size_t w = c.wrap_dim(d, shape.size());
    if (shape.empty()) continue;
    if (reduced[w]) c.fail("dimension " + std::to_string(d) + " appears twice in the reduction");
    reduced[w] = true;
  }
  std::vector<SymExpr> out;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (!reduced[i]) out.push_back(shape[i]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

std::vector<int64_t> optional_dims(InferContext& c, const char* name) {
  return c.is_none(name) ? std::vector<int64_t>{} : c.int_list(name);
}

// sum/cumsum accumulate integers in int64 unless told otherwise.
DType accumulate_dtype(InferContext& c, DType input) {
  if (auto t = c.dtype_arg("dtype")) return *t;
  return is_integral(input, /*include_bool=*/true) ? DType::Int64 : input;
}

}  // namespace

Inferred amax(InferContext& c) {
  const TensorType& self = c.tensor("self");
  return Inferred::tensor(reduce_shape(c, self.shape, c.int_list("dim"), c.bool_arg("keepdim")), self.dtype);
}

Inferred sum(InferContext& c) {
  const TensorType& self = c.tensor("self");
  return Inferred::tensor({}, accumulate_dtype(c, self.dtype));
}

Inferred sum_dim(InferContext& c) {
  const TensorType& self = c.tensor("self");
  return Inferred::tensor(reduce_shape(c, self.shape, optional_dims(c, "dim"), c.bool_arg("keepdim")),
                          accumulate_dtype(c, self.dtype));
}

Inferred mean(InferContext& c) {
  const TensorType& self = c.tensor("self");
  return Inferred::tensor({}, c.dtype_arg("dtype").value_or(self.dtype));
}

Inferred mean_dim(InferContext& c) {
  const TensorType& self = c.tensor("self");
  return Inferred::tensor(reduce_shape(c, self.shape, optional_dims(c, "dim"), c.bool_arg("keepdim")),
                          c.dtype_arg("dtype").value_or(self.dtype));
}

Inferred var_mean(InferContext& c) {
  const TensorType& self = c.tensor("self");
  std::vector<SymExpr> shape = reduce_shape(c, self.shape, optional_dims(c, "dim"), c.bool_arg("keepdim"));
  const DType var_dtype = self.dtype == DType::Complex64    ? DType::Float32
                          : self.dtype == DType::Complex128 ? DType::Float64
                                                            : self.dtype;
  return Inferred::tuple({tensor_slot(shape, var_dtype), tensor_slot(shape, self.dtype)});
}

Inferred softmax(InferContext& c) {
  const TensorType& self = c.tensor("self");
  c.wrap_dim(c.int_arg("dim"), self.shape.size());
  const bool half_to_float = c.bool_arg("half_to_float");
  // PyTorch's CUDA kernel and its decomposition (what Inductor lowers) take
  // half_to_float only for float16: bfloat16 raises "conversion is supported
  // for Half type only".
  if (half_to_float && self.dtype != DType::Float16)
    c.fail("_softmax: half_to_float needs a float16 input (PyTorch supports it for Half only)");
  return Inferred::tensor(self.shape, half_to_float ? DType::Float32 : self.dtype);
}

Inferred safe_softmax(InferContext& c) {
  const TensorType& self = c.tensor("self");
  c.wrap_dim(c.int_arg("dim"), self.shape.size());
  return Inferred::tensor(self.shape, c.dtype_arg("dtype").value_or(self.dtype));
}

// any over one dim: bool (uint8 stays uint8, as in PyTorch).
Inferred any_dim(InferContext& c) {
  const TensorType& self = c.tensor("self");
  return Inferred::tensor(reduce_shape(c, self.shape, {c.int_arg("dim")}, c.bool_arg("keepdim")),
                          self.dtype == DType::UInt8 ? DType::UInt8 : DType::Bool);
}

Inferred cumsum(InferContext& c) {
  const TensorType& self = c.tensor("self");
  c.wrap_dim(c.int_arg("dim"), self.shape.size());
  return Inferred::tensor(self.shape, accumulate_dtype(c, self.dtype));
}

Inferred gather(InferContext& c) {
  const TensorType& self = c.tensor("self");
  const TensorType& index = c.tensor("index");
  c.wrap_dim(c.int_arg("dim"), self.shape.size());
  if (index.shape.size() != self.shape.size() && !index.shape.empty())
    c.fail("gather: index and input must have the same rank");
  return Inferred::tensor(index.shape, self.dtype);
}

// Advanced indexing with integer index tensors (PyTorch's index.Tensor meta).
Inferred index_tensor(InferContext& c) {
  const TensorType& self = c.tensor("self");
  std::vector<const TensorType*> indices = c.tensor_list("indices");
  if (indices.size() > self.shape.size()) c.fail("too many indices for a tensor of rank " + std::to_string(self.shape.size()));
  std::vector<SymExpr> broadcast_shape;
  bool any = false;
  int first = -1, last = -1;
  bool adjacent = true;
  for (size_t i = 0; i < indices.size(); ++i) {
    const TensorType* idx = indices[i];
    if (!idx) continue;
    if (idx->dtype == DType::Bool || idx->dtype == DType::UInt8)
      c.fail("boolean-mask indexing has a data-dependent shape");
    if (!is_integral(idx->dtype, false)) c.fail("index tensors must be integral");
    broadcast_shape = any ? broadcast(c, broadcast_shape, idx->shape) : idx->shape;
    any = true;
    if (last >= 0 && static_cast<int>(i) != last + 1) adjacent = false;
    if (first < 0) first = static_cast<int>(i);
    last = static_cast<int>(i);
  }
  if (!any) return Inferred::tensor(self.shape, self.dtype);
  std::vector<SymExpr> out;
  if (adjacent) {
    out.assign(self.shape.begin(), self.shape.begin() + first);
    out.insert(out.end(), broadcast_shape.begin(), broadcast_shape.end());
    out.insert(out.end(), self.shape.begin() + last + 1, self.shape.end());
  } else {
    out = broadcast_shape;
    for (size_t i = 0; i < self.shape.size(); ++i)
      if (i >= indices.size() || !indices[i]) out.push_back(self.shape[i]);
  }
  return Inferred::tensor(std::move(out), self.dtype);
}

}  // namespace sator::shape_fns
