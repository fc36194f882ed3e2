#include "ir/dtype.h"

#include <array>

namespace sator {
namespace {

struct DTypeRow {
  DType type;
  std::string_view name;
  int bytes;
};

constexpr std::array<DTypeRow, 14> kDTypes = {{
    {DType::Bool, "bool", 1},           {DType::UInt8, "uint8", 1},
    {DType::Int8, "int8", 1},           {DType::Int16, "int16", 2},
    {DType::Int32, "int32", 4},         {DType::Int64, "int64", 8},
    {DType::Float16, "float16", 2},     {DType::BFloat16, "bfloat16", 2},
    {DType::Float32, "float32", 4},     {DType::Float64, "float64", 8},
    {DType::Complex64, "complex64", 8}, {DType::Complex128, "complex128", 16},
    {DType::Float8E4M3, "float8_e4m3fn", 1}, {DType::Float8E5M2, "float8_e5m2", 1},
}};

// Rank inside a category, for promotion by "the wider one wins".
int int_rank(DType t) {
  switch (t) {
    case DType::Int8: return 1;
    case DType::Int16: return 2;
    case DType::Int32: return 3;
    case DType::Int64: return 4;
    default: return 0;
  }
}

int float_rank(DType t) {
  switch (t) {
    case DType::Float8E4M3: case DType::Float8E5M2: return 0;
    case DType::Float16: case DType::BFloat16: return 1;
    case DType::Float32: return 2;
    case DType::Float64: return 3;
    default: return -1;
  }
}

// torch's combine_categories: a lower-priority group only raises the result's
// category (bool < integral < floating < complex), never its width.
std::optional<DType> combine_categories(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (is_complex(*higher)) return higher;
  if (is_complex(*lower)) {
    if (is_floating(*higher)) return *higher == DType::Float64 ? DType::Complex128 : DType::Complex64;
    return lower;
  }
  if (is_floating(*higher)) return higher;
  if (*higher == DType::Bool || is_floating(*lower)) return promote_types(*higher, *lower);
  return higher;
}

}  // namespace

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& row : kDTypes)
    if (row.name == name) return row.type;
  return std::nullopt;
}

std::string_view dtype_name(DType t) { return kDTypes[static_cast<size_t>(t)].name; }
int dtype_bytes(DType t) { return kDTypes[static_cast<size_t>(t)].bytes; }

bool is_floating(DType t) { return float_rank(t) >= 0; }
bool is_complex(DType t) { return t == DType::Complex64 || t == DType::Complex128; }
bool is_integral(DType t, bool include_bool) {
  return t == DType::UInt8 || int_rank(t) > 0 || (include_bool && t == DType::Bool);
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  if (is_complex(a) || is_complex(b)) {
    const bool wide = a == DType::Complex128 || b == DType::Complex128 || a == DType::Float64 || b == DType::Float64;
    return wide ? DType::Complex128 : DType::Complex64;
  }
  if (is_floating(a) && is_floating(b)) {
    // Same-width floats of different formats (f16 vs bf16, the two float8s) meet one step up.
    if (float_rank(a) == float_rank(b)) return float_rank(a) == 0 ? DType::Float16 : DType::Float32;
    return float_rank(a) > float_rank(b) ? a : b;
  }
  if (is_floating(a)) return a;
  if (is_floating(b)) return b;
  // Both integral. uint8 with a signed type needs the next signed width up.
  if (a == DType::UInt8 || b == DType::UInt8) {
    DType other = a == DType::UInt8 ? b : a;
    return other == DType::Int8 ? DType::Int16 : other;
  }
  return int_rank(a) > int_rank(b) ? a : b;
}

void ResultTypeState::add_tensor(DType t, bool zero_dim) {
  auto& slot = zero_dim ? zero_dim_ : dim_;
  slot = slot ? promote_types(*slot, t) : t;
}

void ResultTypeState::add_scalar(DType t) {
  if (t == DType::Float64) t = DType::Float32;  // Python floats take the default dtype
  if (t == DType::Complex128) t = DType::Complex64;
  wrapped_ = wrapped_ ? promote_types(*wrapped_, t) : t;
}

std::optional<DType> ResultTypeState::result() const {
  return combine_categories(dim_, combine_categories(zero_dim_, wrapped_));
}

bool represents_exactly(DType narrow, DType wide) {
  switch (narrow) {
    case DType::BFloat16:
    case DType::Float16: return wide == DType::Float32 || wide == DType::Float64;
    case DType::Float32: return wide == DType::Float64;
    default: return false;
  }
}

}  // namespace sator
