#include <catch2/catch.hpp>

#include "ir/dtype.h"

using namespace sator;

TEST_CASE("promote_types follows torch's table", "[dtype]") {
  CHECK(promote_types(DType::Float16, DType::BFloat16) == DType::Float32);
  CHECK(promote_types(DType::UInt8, DType::Int8) == DType::Int16);
  CHECK(promote_types(DType::Int32, DType::Float16) == DType::Float16);
  CHECK(promote_types(DType::Bool, DType::Int64) == DType::Int64);
  CHECK(promote_types(DType::Float32, DType::Float64) == DType::Float64);
  CHECK(promote_types(DType::Complex64, DType::Float64) == DType::Complex128);
}

TEST_CASE("result_type: scalars and zero-dim tensors only raise the category", "[dtype]") {
  ResultTypeState bf16_times_float;
  bf16_times_float.add_tensor(DType::BFloat16, false);
  bf16_times_float.add_scalar(DType::Float64);
  CHECK(bf16_times_float.result() == DType::BFloat16);

  ResultTypeState int_times_float;
  int_times_float.add_tensor(DType::Int64, false);
  int_times_float.add_scalar(DType::Float64);
  CHECK(int_times_float.result() == DType::Float32);  // the default dtype

  ResultTypeState f32_plus_f64_scalar_tensor;
  f32_plus_f64_scalar_tensor.add_tensor(DType::Float32, false);
  f32_plus_f64_scalar_tensor.add_tensor(DType::Float64, true);
  CHECK(f32_plus_f64_scalar_tensor.result() == DType::Float32);

  ResultTypeState zero_dims_only;
  zero_dims_only.add_tensor(DType::Float64, true);
  zero_dims_only.add_scalar(DType::Int64);
  CHECK(zero_dims_only.result() == DType::Float64);

  ResultTypeState bools;
  bools.add_tensor(DType::Bool, false);
  bools.add_scalar(DType::Int64);
  CHECK(bools.result() == DType::Int64);
}

TEST_CASE("dtype names round-trip", "[dtype]") {
  for (const char* n : {"bool", "int64", "bfloat16", "float32", "float64", "float8_e4m3fn"}) {
    auto t = parse_dtype(n);
    REQUIRE(t);
    CHECK(dtype_name(*t) == n);
  }
  CHECK_FALSE(parse_dtype("torch.float32"));
  CHECK_FALSE(parse_dtype("float"));
}
