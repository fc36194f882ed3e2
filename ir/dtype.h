// Tensor element types, by their torch names, and torch's type promotion.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sator {

enum class DType : uint8_t {
  Bool, UInt8, Int8, Int16, Int32, Int64,
  Float16, BFloat16, Float32, Float64,
  Complex64, Complex128,
  Float8E4M3, Float8E5M2,
};

std::optional<DType> parse_dtype(std::string_view name);  // "float32" (no "torch.")
std::string_view dtype_name(DType t);
int dtype_bytes(DType t);
bool is_floating(DType t);  // includes the float8 types
bool is_integral(DType t, bool include_bool);
bool is_complex(DType t);
// Whether every value of `narrow` is a value of `wide` (a cast there and
// back is the identity): the 16-bit floats in float32 and float64, float32
// in float64.
bool represents_exactly(DType narrow, DType wide);

// torch.promote_types for two dtypes.
DType promote_types(DType a, DType b);

// The operands of a pointwise op, in the three priority groups torch's
// result_type uses: tensors with dims, zero-dim tensors, Python scalars.
class ResultTypeState {
 public:
  void add_tensor(DType t, bool zero_dim);
  void add_scalar(DType t);  // a Python scalar: bool, int64 or float64 (float -> default float32)
  std::optional<DType> result() const;

 private:
  std::optional<DType> dim_, zero_dim_, wrapped_;
};

}  // namespace sator
