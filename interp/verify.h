// `sator optimize --verify`: the input graph and its optimization run on the
// same random inputs in the reference interpreter, outputs compared.
//
// Then both run at their own dtypes (each op's result rounded to its dtype,
// interp/rounding.h) and are measured against the input's float64 values:
// the output passes if it is no more than VerifyOptions::dtype_factor times
// as far from them as the input is.
//
// Symbolic sizes take small values within their ranges, so that whole models
// run in seconds; a graph whose tensors at those sizes would still hold more
// than `max_elements` numbers in all (a large static graph) or take more
// than `max_products` multiply-adds, or that holds an op the reference has
// no kernel for, is compared a changed region at a time
// (interp/verify_regions.h); a region that is itself too large, or holds
// such an op, is skipped, saying so.
// Random ops draw from streams named after their nodes, which optimization
// keeps, so both sides draw the same numbers; attention whose dropout was
// fused into SDPA (--fuse-dropout) draws differently and is skipped, saying so.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "interp/graph_eval.h"

namespace sator::interp {

struct VerifyOptions {
  int64_t max_elements = 500'000'000;  // elements of all the graph's tensors, at the chosen sizes
  // Multiply-adds of its products (interp/verify_work.h): 5e10 is about 20 s
  // of this machine's two cores (the input's and the output's evaluations
  // side by side, each twice: float64, then at the dtypes).
  double max_products = 5e10;
  // A region-by-region comparison starts no region after this many seconds:
  // those left are not compared (the verification is skipped, saying so).
  double max_region_seconds = 300;
  uint64_t seed = 1;
  // Whole models in float64 with reordered sums (a scale moved across a
  // matmul, SDPA's own softmax) agree to about 1e-9 (measured: docs/interp.md);
  // a wrong rewrite differs at order 1e-2 or more.
  double tolerance = 1e-7;
  // At the graphs' own dtypes (every result rounded as the hardware rounds
  // it): the output may be at most this many times as far from the input's
  // real-number (float64) values as the input itself is at its dtypes (or
  // the zoo's tolerance for the graph's narrowest float dtype: 1e-3 float32,
  // 3e-2 16-bit), plus `tolerance`. A fused kernel that accumulates in
  // float32 is nearer; a 16-bit sum of float32 values is further (issue 42).
  double dtype_factor = 2.0;
  // The same for a region of a graph compared region by region: a region's
  // root is often an intermediate whose sums cancel (a gradient before it is
  // reduced), where two equally exact forms land 2-3x apart (opt.train.g2's
  // attention gradient add_8: 1.17e-3 against the input's 5.3e-4 in
  // float32); a rounding the input does not do is caught where it is gross
  // (docs/interp.md, "Region by region").
  double region_dtype_factor = 4.0;
  // Differences at most this large are rounding noise whatever the outputs'
  // own size (with a millionth of the largest output, compare.h). A region's
  // leaves are random in [-1, 1), so a region is given 1e-6 of that unit
  // scale: its root may be a value that is zero in exact arithmetic (a key
  // bias's gradient, 5e-14 in float64), which a whole graph measures
  // against its other, larger outputs.
  double noise = 1e-12;
  double region_noise = 1e-6;
  // That tolerance for the narrowest float dtype; negative: the input
  // graph's own (a region of a graph is held to the whole graph's, not to
  // the dtypes it happens to hold).
  double dtype_floor = -1;
  // Called before each region of a region-by-region comparison (k of n, the
  // node it computes): progress for a run that can take minutes.
  std::function<void(size_t k, size_t n, const std::string& node)> on_region;
};

struct VerifyResult {
  enum class Status : uint8_t { Passed, Failed, Skipped } status = Status::Skipped;
  double max_error = 0.0;   // float64: output against input, relative
  // At the graphs' dtypes, each against the input's float64 values: the
  // input's own rounding error and the output's (-1: not measured).
  double dtype_error_in = -1.0, dtype_error_out = -1.0;
  std::string detail;      // why skipped or failed; empty when passed
  SymbolValues symbols;    // the values the symbols took
  int64_t elements = 0;    // elements of all the graph's tensors at those values (region by region: the largest region's)
  bool random_ops = false; // the graph draws random numbers (compared on identical streams)
  double seconds = 0.0;
  // Compared region by region (interp/verify_regions.h), the whole graph
  // being too large or holding an op the reference cannot run: the changed
  // regions, and how many of them were compared (the rest are why the
  // verification was skipped).
  bool by_regions = false;
  size_t regions = 0, regions_compared = 0;
};
const char* verify_status_name(VerifyResult::Status s);

// The whole graphs compared where the reference can run them, else region
// by region (interp/verify_regions.h).
VerifyResult verify_optimized(const Graph& input, const Graph& output, const VerifyOptions& options = {});

// What an output may be off at g's narrowest floating dtype whatever the
// input's own error: 3e-2 with a 16-bit float in it, 1e-3 float32, else 0.
double verify_dtype_floor(const Graph& g);

// The whole graphs compared, or skipped (saying why) where the reference
// cannot run them.
VerifyResult verify_whole_graph(const Graph& input, const Graph& output, const VerifyOptions& options = {});

}  // namespace sator::interp
