// Pointwise maps, reductions and softmax of the reference interpreter, in
// float64 with torch's broadcasting.
#pragma once

#include <functional>

#include "interp/tensor64.h"

namespace sator::interp {

// The sum of `t` over the dims along which `shape` was broadcast to t's
// shape (leading dims, and dims of size 1): the gradient of a broadcast.
Tensor64 sum_to_shape(const Tensor64& t, const Shape& shape);
Tensor64 map(const Tensor64& t, const std::function<double(double)>& fn, DType result);
// Both operands broadcast to a common shape.
Tensor64 zip(const Tensor64& a, const Tensor64& b, const std::function<double(double, double)>& fn,
             DType result);
Tensor64 where(const Tensor64& cond, const Tensor64& a, const Tensor64& b, DType result);
Tensor64 broadcast_to(const Tensor64& t, const Shape& shape);

// Reduces the listed dims (all dims when `dims` is empty) with fn, starting
// from `init`; keepdim keeps them as size 1.
Tensor64 reduce(const Tensor64& t, std::vector<int64_t> dims, bool keepdim, double init,
                const std::function<double(double, double)>& fn);
Tensor64 sum(const Tensor64& t, const std::vector<int64_t>& dims, bool keepdim);
Tensor64 amax(const Tensor64& t, const std::vector<int64_t>& dims, bool keepdim);
Tensor64 mean(const Tensor64& t, const std::vector<int64_t>& dims, bool keepdim);
// exp(x - max) / sum(exp(x - max)) along dim, the textbook definition.
Tensor64 softmax(const Tensor64& t, int64_t dim);
// softmax, with a row that is all -inf giving 0 rather than NaN: aten's
// _safe_softmax, and what scaled_dot_product_attention computes since
// PyTorch 2.5 (its math path calls _safe_softmax; the fused kernels agree).
Tensor64 safe_softmax(const Tensor64& t, int64_t dim);

}  // namespace sator::interp
