// The graph's own dtypes in the reference interpreter (issue 42). By default
// it computes every value in float64 ("the real-number reading"); rounded,
// each op's result is rounded to its dtype as the hardware stores it:
// round-to-nearest-even for float32, bfloat16 and float16 (bfloat16 from the
// float32 a kernel computes in), wrap-around for the integer types, 0/1 for
// bool. An op still computes in float64 before its result is rounded: a
// 16-bit matmul or sum accumulates in more than the float32 PyTorch uses,
// which differs from the hardware by far less than one 16-bit rounding.
#pragma once

#include "interp/tensor64.h"

namespace sator::interp {

// x as a value of dtype t holds it (float64 and the float8 and complex
// types: unchanged).
double round_to_dtype(double x, DType t);

// Every element rounded to t, and t recorded as the tensor's dtype.
void round_tensor(Tensor64& t, DType dtype);

// The distance between x and the next value of dtype t away from zero (one
// unit in the last place at x's magnitude); 0 for a type without rounding.
double ulp_at(double x, DType t);

}  // namespace sator::interp
