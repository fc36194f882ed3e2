// Convolution (any number of spatial dims, stride, padding, dilation,
// groups; not transposed) and its backward, as textbook loops in float64.
#pragma once

#include <optional>

#include "interp/tensor64.h"

namespace sator::interp {

struct ConvParams {
  Shape stride, padding, dilation;  // one per spatial dim
  int64_t groups = 1;
};

// x [N, C, *in], w [O, C / groups, *k], bias [O]: out [N, O, *out] with
// out = (in + 2·padding − dilation·(k − 1) − 1) / stride + 1.
Tensor64 convolution(const Tensor64& x, const Tensor64& w, const std::optional<Tensor64>& bias, const ConvParams& p);

struct ConvGrads {
  Tensor64 input, weight, bias;
};
// Gradients for the output gradient `dout` (all three computed).
ConvGrads convolution_backward(const Tensor64& dout, const Tensor64& x, const Tensor64& w, const ConvParams& p);

}  // namespace sator::interp
