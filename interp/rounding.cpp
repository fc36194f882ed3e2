#include "interp/rounding.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace sator::interp {

namespace {

// float32 to bfloat16, round to nearest even (what torch's conversion does).
double bfloat16_of(float f) {
  uint32_t u = 0;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7f800000u) == 0x7f800000u) return f;  // inf and NaN stay
  u += 0x7fffu + ((u >> 16) & 1u);
  u &= 0xffff0000u;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

double wrap(double x, int bits, bool is_signed) {
  if (!std::isfinite(x)) return 0;
  const double span = std::ldexp(1.0, bits);
  double v = std::fmod(std::trunc(x), span);
  if (v < 0) v += span;
  if (is_signed && v >= span / 2) v -= span;
  return v;
}

int mantissa_bits(DType t) {
  switch (t) {
    case DType::Float32: return 24;
    case DType::BFloat16: return 8;
    case DType::Float16: return 11;
    case DType::Float64: return 53;
    default: return 0;
  }
}

int least_exponent(DType t) {  // the smallest normal exponent (frexp's convention)
  switch (t) {
    case DType::Float32: return -125;
    case DType::BFloat16: return -125;
    case DType::Float16: return -13;
    case DType::Float64: return -1021;
    default: return 0;
  }
}

}  // namespace

double round_to_dtype(double x, DType t) {
  switch (t) {
    case DType::Float32: return static_cast<float>(x);
    case DType::BFloat16: return bfloat16_of(static_cast<float>(x));
    case DType::Float16: return static_cast<double>(static_cast<_Float16>(x));
    case DType::Bool: return x != 0.0 ? 1.0 : 0.0;
    case DType::UInt8: return wrap(x, 8, false);
    case DType::Int8: return wrap(x, 8, true);
    case DType::Int16: return wrap(x, 16, true);
    case DType::Int32: return wrap(x, 32, true);
    case DType::Int64: return std::isfinite(x) ? std::trunc(x) : 0;
    default: return x;
  }
}

void round_tensor(Tensor64& t, DType dtype) {
  t.dtype = dtype;
  if (dtype == DType::Float64) return;
  for (double& x : t.data) x = round_to_dtype(x, dtype);
}

double ulp_at(double x, DType t) {
  const int bits = mantissa_bits(t);
  if (bits == 0) return 0;
  int e = 0;
  std::frexp(std::abs(x), &e);
  if (x == 0 || e < least_exponent(t)) e = least_exponent(t);
  return std::ldexp(1.0, e - bits);
}

}  // namespace sator::interp
