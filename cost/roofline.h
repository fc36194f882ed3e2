// The roofline cost model. An op's GPU time on a named device is
//   a fixed per-kernel time + max(flops / achieved rate, bytes / bandwidth),
// with layout ops that need no copy free on the GPU, and fused attention
// reading q, k, v and writing its output without materialising the scores.
// Compiled code (what extraction minimises) adds a launch per kernel; eager
// PyTorch adds the host's dispatch of each op, which overlaps the GPU's work
// (graph_cost.h runs that pipeline over a whole graph). The constants, and
// where each comes from, are in docs/cost-model.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/dtype.h"
#include "ir/value.h"

namespace sator::cost {

struct Device {
  std::string name;
  // Achieved GPU rates, FLOP/s and bytes/s.
  double matmul_flops_16bit;            // bf16 / fp16 tensor cores
  double matmul_flops_fp32;             // fp32 matmuls run at the TF32 rate
  double matmul_flops_fp64;
  double matmul_unaligned_flops_16bit;  // a matrix dim not a multiple of 16 bytes
  double matmul_unaligned_flops_fp32;
  double attention_flops_16bit;         // fused attention kernels called by name (cuDNN, efficient)
  double attention_flops_fp32;
  // scaled_dot_product_attention, which picks its backend: 16-bit without a
  // bias (flash) and with one (the efficient kernel).
  double sdpa_flops_16bit;
  double sdpa_bias_flops_16bit;
  double bandwidth;
  // Fixed GPU time per kernel, whatever its size.
  double kernel_min_memory_s;
  double kernel_min_matmul_s;
  double kernel_min_attention_s;
  double launch_s;  // host launch per kernel in compiled code
  // Eager host dispatch per op: measured per op (nullptr or a negative
  // result: not in the table), else by kind.
  double (*eager_host_s)(std::string_view op) = nullptr;
  double eager_host_view_s = 0, eager_host_kernel_s = 0, eager_host_matmul_s = 0, eager_host_attention_s = 0;
  double eager_host_plumbing_s = 0;  // getitem, get_attr: Python only
  // Extra host time of each dispatched op inside a whole run over the same op
  // called alone (cold caches, the caller's own work).
  double eager_in_sequence_s = 0;
};

// The H200's measured host-dispatch table (eager_host_h200.cpp); -1 for an op
// it lacks.
double h200_eager_host_s(std::string_view op);
// Known devices by name ("h200"); nullptr for an unknown name.
const Device* find_device(std::string_view name);

struct Operand {
  std::vector<int64_t> shape;
  DType dtype = DType::Float32;
  int64_t numel() const;
  double bytes() const;
};

enum class CostKind : uint8_t { Free, Matmul, Attention, Convolution, Copy, Memory };
const char* cost_kind_name(CostKind k);

struct OpCost {
  CostKind kind = CostKind::Free;
  DType dtype = DType::Float32;  // of the first tensor input: sets the matmul rate
  bool dispatched = false;       // an ATen op eager PyTorch dispatches (not plumbing)
  double flops = 0, bytes = 0;
  double gpu_seconds = 0;    // the kernels alone; 0 for views
  double seconds = 0;        // compiled: gpu + launch; views free
  double host_seconds = 0;   // eager: the host's dispatch of the op alone
  double eager_seconds = 0;  // eager, the op alone and repeated: max(host, gpu)
  // A sator.chunked node is that many dispatch-then-run steps: the GPU starts
  // on the first part while the host dispatches the rest.
  int64_t pipelined_parts = 1;
};

// What an attention op's arguments say beyond its operands' shapes.
struct OpFlags {
  bool causal = false;     // is_causal: the kernels skip the blocks above the diagonal
  bool dropout = false;    // dropout_p > 0
  bool bias_grad = false;  // the efficient backward asked for the bias's gradient
};

// The cost of one op given its tensor operands (inputs in argument order,
// outputs in result order; non-tensor arguments left out). Attention
// kernels are priced from the device's measured table
// (cost/attention_table.h) where it has their point.
OpCost roofline_cost(const Device& d, std::string_view op, const std::vector<Operand>& inputs,
                     const std::vector<Operand>& outputs, OpFlags flags = {});

// An op's flags, from its arguments as bound to its schema (ATen positional
// order, then keywords); all false for an op that is not attention.
OpFlags op_flags(std::string_view op, const std::vector<Value>& args,
                 const std::vector<std::pair<std::string, Value>>& kwargs);

}  // namespace sator::cost
