// Matrix products and attention of the reference interpreter: the textbook
// sums in float64, in a fixed order.
#pragma once

#include <functional>
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

struct SdpaOptions {
  std::optional<Tensor64> attn_mask;  // bool (true = attend) or additive, broadcast to [.., L, S]
  bool is_causal = false;             // keep j <= i (top-left aligned, as torch)
  std::optional<double> scale;        // default 1 / sqrt(E)
  bool enable_gqa = false;            // k/v heads repeated to q's head count
  // Dropout: probabilities kept where a uniform draw of their shape exceeds
  // dropout_p, scaled by 1 / (1 - dropout_p) (the form AOTAutograd decomposes
  // it into, so the two can be compared on the same draws).
  double dropout_p = 0.0;
  std::function<Tensor64(const Shape&)> uniform;
};
// softmax(q kᵀ · scale + mask) v, exactly torch's documented reference.
Tensor64 sdpa(const Tensor64& q, const Tensor64& k, const Tensor64& v, const SdpaOptions& options);

}  // namespace sator::interp
