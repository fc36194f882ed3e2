// The reference interpreter at the graph's own dtypes (interp/rounding.h,
// issue 42): each op's result rounded as the hardware stores it.
#include <catch2/catch.hpp>

#include <cmath>

#include "interp/compare.h"
#include "interp/graph_eval.h"
#include "interp/rounding.h"
#include "interp/verify.h"
#include "ir/graph_builder.h"

using namespace sator;
using namespace sator::interp;

TEST_CASE("rounding to a dtype: nearest even, wrap-around, 0/1", "[interp][dtype]") {
  // bfloat16 keeps 8 bits of mantissa: 1 + 2^-8 is halfway between 1 and
  // 1 + 2^-7 and goes to the even one (1); a little more goes up.
  CHECK(round_to_dtype(1.0 + std::ldexp(1.0, -8), DType::BFloat16) == 1.0);
  CHECK(round_to_dtype(1.0 + 3 * std::ldexp(1.0, -8), DType::BFloat16) == 1.0 + std::ldexp(1.0, -6));
  CHECK(round_to_dtype(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -20), DType::BFloat16) == 1.0 + std::ldexp(1.0, -7));
  // float16: 11 bits, 65504 the largest finite value.
  CHECK(round_to_dtype(1.0 + std::ldexp(1.0, -11), DType::Float16) == 1.0);
  CHECK(round_to_dtype(0.1, DType::Float16) == Approx(0.0999755859375).epsilon(0));
  CHECK(std::isinf(round_to_dtype(70000.0, DType::Float16)));
  CHECK(round_to_dtype(0.1, DType::Float32) == static_cast<double>(0.1f));
  CHECK(round_to_dtype(0.1, DType::Float64) == 0.1);
  // Integers wrap; bool is 0 or 1.
  CHECK(round_to_dtype(300.7, DType::UInt8) == 44);
  CHECK(round_to_dtype(130, DType::Int8) == -126);
  CHECK(round_to_dtype(-2.5, DType::Int32) == -2);
  CHECK(round_to_dtype(0.25, DType::Bool) == 1);
  // A unit in the last place.
  CHECK(ulp_at(1.0, DType::BFloat16) == std::ldexp(1.0, -7));
  CHECK(ulp_at(1.0, DType::Float32) == std::ldexp(1.0, -23));
  CHECK(ulp_at(3.0, DType::Float16) == std::ldexp(1.0, -9));
}

TEST_CASE("a graph at its dtypes: a round trip through bfloat16 is not the identity", "[interp][dtype]") {
  GraphBuilder b("round trip");
  const NodeId x = b.input({64});
  const NodeId down = b.op("prims.convert_element_type.default", {GraphBuilder::ref(x), Value::of_dtype(DType::BFloat16)});
  const NodeId up = b.op("prims.convert_element_type.default", {GraphBuilder::ref(down), Value::of_dtype(DType::Float32)});
  const Graph trip = b.finish({up});
  GraphBuilder c("identity");
  const Graph same = c.finish({c.input({64})});
  // The real-number reading: equal. At the dtypes: a bfloat16 rounding apart.
  CHECK(compare_graphs(trip, same, {}, 7).max_error == 0);
  EvalOptions rounded;
  rounded.precision = EvalOptions::Precision::Dtype;
  const GraphComparison at = compare_graphs(trip, same, {}, 7, rounded);
  CHECK(at.max_ulp > 1000);    // float32 units: 2^16 per bfloat16 unit at most
  CHECK(at.max_ulp <= 32768);  // half a bfloat16 unit at most
  CHECK(at.max_error > 1e-4);
  // A graph against itself: exact at its dtypes too.
  CHECK(compare_graphs(trip, trip, {}, 7, rounded).max_ulp == 0);
}

TEST_CASE("verify at the dtypes: an output that rounds where the input did not fails", "[interp][dtype][verify]") {
  // sum(x * w) in float32, against the same sum over operands rounded to
  // bfloat16: equal in float64 (the casts are the identity there), 2^-9-ish
  // apart at the dtypes, where the input is within float32's 2^-24.
  const auto product = [](bool through_bf16) {
    GraphBuilder b(through_bf16 ? "through bf16" : "float32");
    NodeId x = b.input({8, 64}), w = b.input({8, 64});
    if (through_bf16) {
      const auto round = [&](NodeId t) {
        const NodeId down = b.op("prims.convert_element_type.default", {GraphBuilder::ref(t), Value::of_dtype(DType::BFloat16)});
        return b.op("prims.convert_element_type.default", {GraphBuilder::ref(down), Value::of_dtype(DType::Float32)});
      };
      x = round(x);
      w = round(w);
    }
    const NodeId p = b.op("aten.mul.Tensor", {GraphBuilder::ref(x), GraphBuilder::ref(w)});
    return b.finish({b.op("aten.sum.dim_IntList", {GraphBuilder::ref(p), GraphBuilder::ints({-1}), Value::of_bool(false)})});
  };
  const Graph exact = product(false), rounded = product(true);
  const VerifyResult worse = verify_optimized(exact, rounded);
  CHECK(worse.max_error < 1e-12);  // the float64 reading cannot tell them apart
  CHECK(worse.status == VerifyResult::Status::Failed);
  CHECK(worse.detail.find("at the graphs' dtypes") != std::string::npos);
  CHECK(worse.dtype_error_out > 100 * worse.dtype_error_in);
  // The other way round the output is nearer the real numbers than the
  // input (as a fused kernel accumulating in float32 is): it passes.
  const VerifyResult better = verify_optimized(rounded, exact);
  CHECK(better.status == VerifyResult::Status::Passed);
  CHECK(better.dtype_error_out < better.dtype_error_in);
  CHECK(verify_optimized(exact, exact).status == VerifyResult::Status::Passed);
}
