// The roofline cost model: an op's time on a named device is
//   max(flops / peak rate for its dtype, bytes moved / memory bandwidth)
//   + one kernel launch,
// with layout ops that need no copy free, and fused attention reading q, k,
// v and writing its output without materialising the scores. The constants
// and where each comes from are in docs/cost-model.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/dtype.h"

namespace sator::extract {

struct Device {
  std::string name;
  double matmul_flops_16bit;  // bf16 / fp16 tensor cores, FLOP/s
  double matmul_flops_fp32;   // fp32 matmuls run at the TF32 rate
  double matmul_flops_fp64;
  double bandwidth;           // bytes/s
  double launch_s;            // per kernel, compiled (what extraction minimises)
  // Eager PyTorch: the host's dispatch per op overlaps the GPU's work, so an
  // op takes max(dispatch, kernel); a view op costs its dispatch alone.
  double eager_view_dispatch_s;
  double eager_kernel_dispatch_s;     // pointwise, reductions, copies
  double eager_matmul_dispatch_s;     // cuBLAS calls
  double eager_attention_dispatch_s;  // SDPA's backend selection and kernels
  // Measured per-op floors, seconds, or a negative number for an op the
  // table does not have (the per-kind floors above apply); may be null.
  double (*eager_floor_s)(std::string_view op) = nullptr;
};

// The H200's measured table (eager_floors.cpp); -1 for an op it lacks.
double h200_eager_floor_s(std::string_view op);
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
  double flops = 0, bytes = 0;
  double seconds = 0;        // compiled: max(compute, memory) + launch; layout views free
  double eager_seconds = 0;  // eager: max(dispatch, max(compute, memory)); views their dispatch
};

// The cost of one op given its tensor operands (inputs in argument order,
// outputs in result order; non-tensor arguments left out).
OpCost roofline_cost(const Device& d, std::string_view op, const std::vector<Operand>& inputs,
                     const std::vector<Operand>& outputs);

}  // namespace sator::extract
