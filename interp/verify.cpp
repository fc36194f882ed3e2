#include "interp/verify.h"

#include <cstdio>

#include <algorithm>
#include <chrono>
#include <future>
#include <system_error>
#include <type_traits>
#include <utility>
#include <optional>

#include "interp/compare.h"
#include "interp/verify_regions.h"
#include "interp/verify_work.h"
#include "interp/op_args.h"
#include "ir/op_table.h"

namespace sator::interp {

const char* verify_status_name(VerifyResult::Status s) {
  switch (s) {
    case VerifyResult::Status::Passed: return "passed";
    case VerifyResult::Status::Failed: return "failed";
    case VerifyResult::Status::Skipped: return "skipped";
  }
  return "?";
}

namespace {

// The first op (of either graph) the interpreter has no kernel for, if any:
// Inductor's own random prims, for one, draw from Philox seeds it cannot replay.
std::optional<std::string> unknown_op(const Graph& g) {
  for (const Node& n : g.nodes) {
    const std::string& op = n.op;
    if (op == "placeholder" || op == "get_attr" || op == "output" || op == "getitem" || op == "aten.sym_size.int" ||
        op.rfind("_operator.", 0) == 0)
      continue;
    if (op == "sator.chunked") {
      if (auto inner = unknown_op(n.body.at(0))) return inner;
      continue;
    }
    if (!find_kernel(op)) return op;
  }
  return std::nullopt;
}

bool has_random_ops(const Graph& g) {
  for (const Node& n : g.nodes)
    if (const OpInfo* op = find_op(n.op); op && op->cls == OpClass::Random) return true;
  return false;
}

// Fused attention nodes that drop out (dropout_p not 0).
size_t sdpa_with_dropout(const Graph& g) {
  size_t count = 0;
  for (const Node& n : g.nodes)
  {
    // dropout_p: the fifth argument of SDPA, the sixth of the efficient kernel's forward.
    const size_t at = n.op == "aten.scaled_dot_product_attention.default"                ? 4
                      : n.op == "aten._scaled_dot_product_efficient_attention.default" ? 5
                                                                                       : 0;
    if (at && n.args.size() > at &&
        ((n.args[at].kind == Value::Kind::Float && n.args[at].f != 0.0) ||
         (n.args[at].kind == Value::Kind::Int && n.args[at].i != 0)))
      ++count;
  }
  return count;
}

// " (node NAME)" for the output at `index` of g's output list, or "".
std::string output_name(const Graph& g, size_t index) {
  for (const Node& n : g.nodes)
    if (n.op == "output" && !n.args.empty() && n.args[0].is_list() && index < n.args[0].list.size() &&
        n.args[0].list[index].is_node())
      return " (node " + g.nodes[n.args[0].list[index].node].name + ")";
  return "";
}

// The zoo's tolerances (python/gpu/zoo_models.py): a softmax gradient that
// nearly cancels has a relative error many times the input's under a
// reformulation as exact as FlashAttention's backward.
double dtype_floor(const Graph& g) {
  bool half = false, single = false;
  for (const Node& n : g.nodes) {
    if (n.result != Node::Result::Tensor) continue;
    half |= n.tensor.dtype == DType::BFloat16 || n.tensor.dtype == DType::Float16;
    single |= n.tensor.dtype == DType::Float32;
  }
  return half ? 3e-2 : single ? 1e-3 : 0.0;
}

// From this many elements the input's and the output's evaluations run side
// by side (seconds each: a 2-core machine halves a large graph's verify).
constexpr int64_t kEvaluationsBeside = 1'000'000;

// a() and b(), b on a second thread where `beside` and one can be started.
template <class A, class B>
std::pair<std::invoke_result_t<A>, std::invoke_result_t<B>> both(bool beside, A a, B b) {
  std::future<std::invoke_result_t<B>> second;
  if (beside) try {
      second = std::async(std::launch::async, b);
    } catch (const std::system_error&) {
      // no thread to be had: in turn, below
    }
  if (!second.valid()) second = std::async(std::launch::deferred, b);
  auto first = a();
  return {std::move(first), second.get()};
}

std::string format_number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

// The whole graphs compared; `by_regions` where they were not because of
// something a region-by-region comparison can get past (their size, an op
// the reference cannot run).
struct Whole {
  VerifyResult r;
  bool by_regions = false;
};

Whole verify_whole(const Graph& input, const Graph& output, const VerifyOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  Whole w;
  VerifyResult& r = w.r;
  r.symbols = small_symbols(input);
  r.elements = graph_elements(input, r.symbols);
  r.random_ops = has_random_ops(input);
  auto done = [&]() -> Whole {
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return w;
  };
  if (r.elements > o.max_elements) {
    w.by_regions = true;
    r.detail = "too large to verify in float64: its tensors hold " + std::to_string(r.elements) + " elements (limit " +
               std::to_string(o.max_elements) + ")" +
               (input.symbols.empty() ? "; a capture with dynamic shapes (.dyn) verifies at small sizes" : "");
    return done();
  }
  const double products = std::max(graph_products(input, r.symbols), graph_products(output, r.symbols));
  if (products > o.max_products) {
    w.by_regions = true;
    r.detail = "too much arithmetic to verify in float64: " + format_number(products) + " multiply-adds (limit " +
               format_number(o.max_products) + ")";
    return done();
  }
  for (const Graph* g : {&input, &output})
    if (const auto op = unknown_op(*g)) {
      w.by_regions = true;
      r.detail = "the reference interpreter cannot run " + *op + " (in " + (g == &input ? "the input" : "the output") +
                 "), so the graphs were not compared";
      return done();
    }
  if (sdpa_with_dropout(output) > sdpa_with_dropout(input)) {
    r.detail = "attention dropout was fused into SDPA (--fuse-dropout), which draws its own random numbers: "
               "equal in distribution only (check-rules proves that rule under a coupling of the draws)";
    return done();
  }
  EvalOptions eval;
  eval.random = EvalOptions::Random::ByNodeName;
  eval.seed = o.seed;
  try {
    const std::vector<Tensor64> inputs = random_inputs(input, r.symbols, o.seed);
    const bool beside = r.elements >= kEvaluationsBeside;
    auto [real, out_real] = both(
        beside, [&] { return evaluate_graph(input, inputs, r.symbols, eval); },
        [&] { return evaluate_graph(output, inputs, r.symbols, eval); });
    size_t worst = 0;
    r.max_error = max_output_error(out_real, real, &worst, o.noise);
    r.status = r.max_error <= o.tolerance ? VerifyResult::Status::Passed : VerifyResult::Status::Failed;
    if (r.status == VerifyResult::Status::Failed) {
      r.detail = "outputs differ: output #" + std::to_string(worst) + output_name(input, worst) +
                 " has relative error " + format_number(r.max_error) + " > " + format_number(o.tolerance);
      return done();
    }
    EvalOptions rounded = eval;
    rounded.precision = EvalOptions::Precision::Dtype;
    size_t worst_in = 0;
    const auto [in_rounded, out_rounded] = both(
        beside, [&] { return evaluate_graph(input, inputs, r.symbols, rounded); },
        [&] { return evaluate_graph(output, inputs, r.symbols, rounded); });
    r.dtype_error_in = max_output_error(in_rounded, real, &worst_in, o.noise);
    r.dtype_error_out = max_output_error(out_rounded, real, &worst, o.noise);
    const double floor = o.dtype_floor >= 0 ? o.dtype_floor : dtype_floor(input);
    if (!(r.dtype_error_out <= std::max(o.dtype_factor * r.dtype_error_in, floor) + o.tolerance)) {
      r.status = VerifyResult::Status::Failed;
      r.detail = "at the graphs' dtypes, output #" + std::to_string(worst) + output_name(input, worst) +
                 " is " + format_number(r.dtype_error_out) + " from the float64 values, more than " +
                 format_number(o.dtype_factor) + "x the input's own " + format_number(r.dtype_error_in) +
                 " and than the " + format_number(floor) +
                 " its narrowest float dtype allows (a rounding the input does not do)";
    }
  } catch (const InterpError& e) {
    r.status = VerifyResult::Status::Failed;
    r.detail = std::string("the interpreter could not run both graphs: ") + e.what();
  }
  return done();
}

}  // namespace

double verify_dtype_floor(const Graph& g) { return dtype_floor(g); }

VerifyResult verify_whole_graph(const Graph& input, const Graph& output, const VerifyOptions& o) {
  return verify_whole(input, output, o).r;
}

VerifyResult verify_optimized(const Graph& input, const Graph& output, const VerifyOptions& o) {
  const Whole whole = verify_whole(input, output, o);
  if (!whole.by_regions) return whole.r;
  VerifyResult r = verify_by_regions(input, output, o, whole.r.detail);
  r.seconds += whole.r.seconds;
  return r;
}

}  // namespace sator::interp
