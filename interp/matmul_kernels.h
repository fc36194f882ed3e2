// Matrix products and attention of the reference interpreter: the textbook
// sums in float64, in a fixed order.
#pragma once

#include <optional>

#include "interp/tensor64.h"

namespace sator::interp {

Tensor64 mm(const Tensor64& a, const Tensor64& b);    // [n, k] x [k, m]
Tensor64 bmm(const Tensor64& a, const Tensor64& b);   // [b, n, k] x [b, k, m]
// x [..., in] times W [out, in] transposed, without copying W transposed:
// out[..., o] = sum over i of x[..., i] * W[o, i], i ascending (nn.Linear).
Tensor64 linear_product(const Tensor64& x, const Tensor64& w);
// torch.matmul: 1-D operands promoted and the added dim removed, batch dims broadcast.
Tensor64 matmul(const Tensor64& a, const Tensor64& b);

}  // namespace sator::interp
