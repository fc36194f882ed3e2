// The attention kernels' measured table in the cost model: the compiled
// table is the committed measurement (tests/data/attention_kernels_{h100,h200}.json,
// python/gpu/attention_calibrate.py), and the model ranks the kernels as the
// GPU did at every grid point where two measured times differ by more than 5%.
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cost/attention_table.h"
#include "cost/roofline.h"

using namespace sator;
using namespace sator::cost;

namespace {

const char* forward_op(const std::string& kernel) {
  if (kernel == "flash") return "aten._scaled_dot_product_flash_attention.default";
  if (kernel == "cudnn") return "aten._scaled_dot_product_cudnn_attention.default";
  return "aten._scaled_dot_product_efficient_attention.default";
}

const char* backward_op(const std::string& kernel) {
  if (kernel == "flash") return "aten._scaled_dot_product_flash_attention_backward.default";
  if (kernel == "cudnn") return "aten._scaled_dot_product_cudnn_attention_backward.default";
  return "aten._scaled_dot_product_efficient_attention_backward.default";
}

DType dtype_of(const std::string& s) { return s == "bf16" ? DType::BFloat16 : s == "fp16" ? DType::Float16 : DType::Float32; }

// The model's time for one kernel at a grid point: the forward, and in
// training the forward and the backward kernels.
double model_seconds(const Device& d, const nlohmann::json& p, const std::string& kernel) {
  const DType t = dtype_of(p["dtype"]);
  const int64_t b = p["batch"], h = p["heads"], l = p["seq"], e = p["head_dim"];
  const Operand x{{b, h, l, e}, t}, lse{{b, h, l}, DType::Float32}, seed{{}, DType::Int64};
  const std::string mask = p["mask"];
  const bool biased = mask == "additive" || mask == "bias_grad";
  const OpFlags flags{.causal = mask == "causal", .dropout = p["dropout"].get<double>() > 0, .bias_grad = mask == "bias_grad"};
  std::vector<Operand> fwd_in = {x, x, x};
  if (biased) fwd_in.push_back(Operand{{b, mask == "additive" ? 1 : h, l, l}, t});
  double s = roofline_cost(d, forward_op(kernel), fwd_in, {x, lse}, flags).gpu_seconds;
  if (p["phase"] == "fwd") return s;
  std::vector<Operand> bwd_in = {x, x, x, x, x, lse, seed, seed};
  if (biased) bwd_in.push_back(fwd_in.back());
  return s + roofline_cost(d, backward_op(kernel), bwd_in, {x, x, x}, flags).gpu_seconds;
}

}  // namespace

namespace {

nlohmann::json measured(const std::string& device) {
  std::ifstream in(std::string(SATOR_TESTS_DIR) + "/data/attention_kernels_" + device + ".json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("attention kernel table: each GPU's compiled table is its measurement", "[cost][attention]") {
  for (const std::string device : {"h100", "h200"}) {
    INFO(device);
    const nlohmann::json data = measured(device);
    CHECK(data["device"] == device);
    const AttentionTable& table = *attention_table(device);
    CHECK(std::string(table.device) == device);
    REQUIRE(data["points"].size() == table.points.size());
    for (size_t i = 0; i < table.points.size(); ++i) {
      const auto& p = data["points"][i];
      const AttentionPoint& c = table.points[i];
      INFO(p.dump());
      CHECK(std::string(c.mask) == p["mask"].get<std::string>());
      CHECK(c.seq == p["seq"].get<int>());
      for (size_t k = 0; k < 4; ++k) {
        const std::string name = attention_kernel_name(static_cast<AttentionKernel>(k));
        CHECK(c.ms[k] == (p["ms"].contains(name) ? p["ms"][name].get<double>() : -1.0));
      }
    }
  }
}

// The cost model has the H200's device (the H100 has only its table): the
// model prices each kernel by the H200's measurement, and so ranks them as
// the H200 did.
TEST_CASE("attention kernel table: the model ranks the kernels as the GPU measured them", "[cost][attention]") {
  const nlohmann::json data = measured("h200");
  const Device& d = *find_device("h200");
  const std::vector<std::string> kernels = {"flash", "cudnn", "efficient"};
  size_t compared = 0;
  for (const auto& p : data["points"]) {
    for (size_t a = 0; a < kernels.size(); ++a)
      for (size_t b = a + 1; b < kernels.size(); ++b) {
        if (!p["ms"].contains(kernels[a]) || !p["ms"].contains(kernels[b])) continue;
        const double ta = p["ms"][kernels[a]], tb = p["ms"][kernels[b]];
        if (std::max(ta, tb) < 1.05 * std::min(ta, tb)) continue;
        INFO(p.dump() << " " << kernels[a] << " vs " << kernels[b]);
        CHECK((model_seconds(d, p, kernels[a]) < model_seconds(d, p, kernels[b])) == (ta < tb));
        ++compared;
      }
  }
  CHECK(compared >= 100);
}

TEST_CASE("attention kernel table: between grid points, the nearest point scaled by the work", "[cost][attention]") {
  const AttentionTable& table = *attention_table("h100");
  AttentionQuery q;
  q.kernel = AttentionKernel::Cudnn;
  q.batch_heads = 128, q.l = q.s = 1024, q.e = 64;
  const double at_point = *attention_seconds(table, q);
  q.batch_heads = 256;  // twice the heads: twice the time
  CHECK(*attention_seconds(table, q) == Approx(2 * at_point));
  q.batch_heads = 128;
  q.mask = AttentionMask::Causal;
  CHECK(*attention_seconds(table, q) < at_point);
  // Flash takes no bias: no time for it.
  q.kernel = AttentionKernel::Flash;
  q.mask = AttentionMask::Additive;
  CHECK_FALSE(attention_seconds(table, q).has_value());
  // Float64 was not measured.
  q.kernel = AttentionKernel::Efficient;
  q.dtype = DType::Float64;
  CHECK_FALSE(attention_seconds(table, q).has_value());
  CHECK(attention_table("a100") == nullptr);
}

// Only the efficient kernel returns a bias's gradient, so at a bias_grad
// point it is also the fastest: priced against itself, its backward would
// take the rate calibrated on cuDNN's. It is priced against the fastest
// kernel given the bias without its gradient, as measured.
TEST_CASE("attention kernel table: the backward asked for the bias's gradient is priced against the one that is not",
          "[cost][attention]") {
  const nlohmann::json data = measured("h200");
  const Device& d = *find_device("h200");
  size_t compared = 0, slower = 0;
  for (const auto& p : data["points"]) {
    if (p["mask"] != "bias_grad" || p["dtype"] == "fp32") continue;
    // The same point with the bias, no gradient: its fastest kernel.
    for (const auto& a : data["points"]) {
      if (a["mask"] != "additive" || a["phase"] != "fwd_bwd" || a["dtype"] != p["dtype"] || a["seq"] != p["seq"] ||
          a["head_dim"] != p["head_dim"] || a["dropout"] != p["dropout"] || !a["ms"].contains("cudnn"))
        continue;
      INFO(p.dump() << "\nagainst " << a.dump());
      const double measured_ratio = p["ms"]["efficient"].get<double>() / a["ms"]["cudnn"].get<double>();
      const double model_ratio = model_seconds(d, p, "efficient") / model_seconds(d, a, "cudnn");
      // Within a tenth (the kernel-min terms are the model's own).
      CHECK(model_ratio == Approx(measured_ratio).epsilon(0.1));
      ++compared;
      slower += measured_ratio > 1.5;  // what the test is about: a much slower kernel
    }
  }
  CHECK(compared >= 6);
  CHECK(slower >= 3);
}
