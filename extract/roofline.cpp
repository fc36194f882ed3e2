#include "extract/roofline.h"

#include <algorithm>
#include <array>

namespace sator::extract {


const Device* find_device(std::string_view name) {
  // H200 SXM. Peaks: 790 TFLOP/s bf16 and 4.3 TB/s measured on the
  // project's H200 (design.md), TF32 half of bf16, fp64 67 TFLOP/s
  // (NVIDIA's datasheet ratios). What ops achieve at corpus shapes in
  // PyTorch was measured (python/calibrate_costs.py, docs/cost-model.md):
  // large bf16/fp16 matmuls 350-380 TFLOP/s, fp32 (TF32) 124, elementwise
  // kernels about 2.3 TB/s; the rates below are those achieved rates.
  static const std::array<Device, 1> devices = {
      // Eager floors: measured per op (eager_floors.cpp), else per kind.
      Device{"h200", 360e12, 125e12, 60e12, 2.3e12, 5e-6, 5e-6, 14e-6, 25e-6, 60e-6, h200_eager_floor_s}};
  for (const Device& d : devices)
    if (d.name == name) return &d;
  return nullptr;
}

int64_t Operand::numel() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= std::max<int64_t>(s, 0);
  return n;
}

double Operand::bytes() const { return static_cast<double>(numel()) * static_cast<double>(dtype_bytes(dtype)); }

const char* cost_kind_name(CostKind k) {
  switch (k) {
    case CostKind::Free: return "free";
    case CostKind::Matmul: return "matmul";
    case CostKind::Attention: return "attention";
    case CostKind::Convolution: return "convolution";
    case CostKind::Copy: return "copy";
    case CostKind::Memory: return "memory";
  }
  return "?";
}

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Ops that never launch a kernel: graph plumbing, and layout ops that PyTorch
// serves as views of their input's storage.
bool is_free(std::string_view op) {
  static const std::array<std::string_view, 19> free_ops = {
      "placeholder", "get_attr", "output", "getitem", "aten.sym_size.int", "aten.view.default",
      "aten._unsafe_view.default", "aten.reshape.default", "aten.permute.default", "aten.transpose.int",
      "aten.t.default", "aten.expand.default", "aten.unsqueeze.default", "aten.squeeze.dim", "aten.alias.default",
      "aten.slice.Tensor", "aten.select.int", "aten.detach.default", "aten.lift_fresh_copy.default"};
  return starts_with(op, "_operator.") || std::find(free_ops.begin(), free_ops.end(), op) != free_ops.end();
}

bool is_matmul(std::string_view op) {
  return op == "aten.mm.default" || op == "aten.bmm.default" || op == "aten.matmul.default" ||
         op == "aten.addmm.default" || op == "aten.baddbmm.default" || op == "aten.linear.default";
}

double peak(const Device& d, DType t) {
  if (t == DType::BFloat16 || t == DType::Float16) return d.matmul_flops_16bit;
  if (t == DType::Float64) return d.matmul_flops_fp64;
  return d.matmul_flops_fp32;
}

double moved(const std::vector<Operand>& xs) {
  double b = 0;
  for (const Operand& x : xs) b += x.bytes();
  return b;
}

}  // namespace

namespace {
// Host-side plumbing that eager PyTorch does not dispatch as an ATen op.
bool is_plumbing(std::string_view op) {
  return op == "placeholder" || op == "get_attr" || op == "output" || op == "getitem" || starts_with(op, "_operator.") ||
         op == "aten.sym_size.int";
}
}  // namespace

OpCost roofline_cost(const Device& d, std::string_view op, const std::vector<Operand>& in, const std::vector<Operand>& out) {
  OpCost c;
  const double measured = d.eager_floor_s ? d.eager_floor_s(op) : -1.0;
  if (is_free(op)) {
    c.eager_seconds = is_plumbing(op) ? 0.0 : (measured >= 0 ? measured : d.eager_view_dispatch_s);
    return c;
  }
  c.bytes = moved(in) + moved(out);
  const DType t = in.empty() ? (out.empty() ? DType::Float32 : out[0].dtype) : in[0].dtype;
  if (is_matmul(op) && !out.empty() && !in.empty()) {
    // 2·K multiply-adds per output element; K is the reduced dim: the last of
    // the first matrix operand (addmm/baddbmm: the second input).
    c.kind = CostKind::Matmul;
    const Operand& a = (op == "aten.addmm.default" || op == "aten.baddbmm.default") && in.size() > 1 ? in[1] : in[0];
    const int64_t k = a.shape.empty() ? 1 : a.shape.back();
    c.flops = 2.0 * static_cast<double>(out[0].numel()) * static_cast<double>(k);
  } else if (op.find("scaled_dot_product") != std::string_view::npos && op.find("backward") == std::string_view::npos &&
             in.size() >= 3 && in[0].shape.size() >= 2) {
    // Two matmuls (q kᵀ, p v) without the L×S scores in memory.
    c.kind = CostKind::Attention;
    const Operand &q = in[0], &k = in[1], &v = in[2];
    const double l = static_cast<double>(q.shape[q.shape.size() - 2]), e = static_cast<double>(q.shape.back());
    const double s = static_cast<double>(k.shape[k.shape.size() - 2]), ev = static_cast<double>(v.shape.back());
    const double batch = static_cast<double>(q.numel()) / (l * e);
    c.flops = 2.0 * batch * l * s * (e + ev);
  } else if (op.find("scaled_dot_product") != std::string_view::npos && in.size() >= 4) {
    // Backward: recomputes the scores and runs four more matmuls.
    c.kind = CostKind::Attention;
    const Operand &q = in[1], &k = in[2];
    const double l = static_cast<double>(q.shape[q.shape.size() - 2]), e = static_cast<double>(q.shape.back());
    const double s = static_cast<double>(k.shape[k.shape.size() - 2]);
    c.flops = 2.0 * (static_cast<double>(q.numel()) / (l * e)) * l * s * e * 5.0;
  } else if (op == "aten.convolution.default" && in.size() >= 2 && !out.empty()) {
    c.kind = CostKind::Convolution;
    const Operand& w = in[1];  // [O, C/groups, k...]
    const double per_output = static_cast<double>(w.numel()) / static_cast<double>(std::max<int64_t>(w.shape[0], 1));
    c.flops = 2.0 * static_cast<double>(out[0].numel()) * per_output;
  } else if (op == "aten.clone.default" || op == "aten.contiguous.default") {
    c.kind = CostKind::Copy;
  } else {
    c.kind = CostKind::Memory;  // pointwise, reductions, softmax, creation, indexing
  }
  const double compute = c.flops > 0 ? c.flops / peak(d, t) : 0.0;
  const double kernel = std::max(compute, c.bytes / d.bandwidth);
  c.seconds = kernel + d.launch_s;
  const double dispatch = c.kind == CostKind::Matmul || c.kind == CostKind::Convolution ? d.eager_matmul_dispatch_s
                          : c.kind == CostKind::Attention                               ? d.eager_attention_dispatch_s
                                                                                        : d.eager_kernel_dispatch_s;
  const double floor = measured >= 0 ? measured : dispatch;
  c.eager_seconds = std::max(kernel, floor);
  return c;
}

}  // namespace sator::extract
