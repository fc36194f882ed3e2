// Attention kernels' measured times: the cost model's word on which SDPA
// kernel (flash, cuDNN, efficient, math) is fastest for a call, in each
// phase. The tables are measured on the GPU machine by
// python/gpu/attention_calibrate.py over a grid of dtype, head dim,
// sequence length, mask kind, dropout and phase, and compiled in by
// python/attention_table.py (extract/attention_table_DEVICE.cpp).
//
// A call between grid points takes the nearest point (sequence length and
// head dim on a log scale) of its dtype, mask kind and dropout, scaled by
// its work: batch·heads·L·S·E over the point's.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string_view>

#include "ir/dtype.h"

namespace sator::cost {

struct AttentionPoint {
  const char* dtype;  // "bf16", "fp16", "fp32"
  int head_dim, seq, batch_heads;
  const char* mask;   // "none", "causal", "additive" (a bias, no gradient), "bias_grad"
  double dropout;
  const char* phase;  // "fwd" (no grad) or "fwd_bwd"
  std::array<double, 4> ms;  // flash, cudnn, efficient, math; < 0 where the kernel refused the point
  const char* default_kernel;  // what PyTorch's dispatch picked ("" where not recorded)
};

struct AttentionTable {
  const char* device;
  std::span<const AttentionPoint> points;
};

// Dispatched: the kernel PyTorch's dispatch picked at the point (the
// fastest that took it where not recorded); Fastest: the fastest that took it.
enum class AttentionKernel : uint8_t { Flash, Cudnn, Efficient, Math, Dispatched, Fastest };
enum class AttentionMask : uint8_t { None, Causal, Additive, BiasGrad };
const char* attention_kernel_name(AttentionKernel k);
const char* attention_mask_name(AttentionMask m);

// One attention call, as the table reads it.
struct AttentionQuery {
  AttentionKernel kernel = AttentionKernel::Dispatched;
  bool backward = false;  // the backward kernel alone (fwd_bwd less fwd)
  DType dtype = DType::BFloat16;
  AttentionMask mask = AttentionMask::None;
  bool dropout = false;
  double batch_heads = 1, l = 1, s = 1, e = 1;
};

// The table measured on `device` ("h100", "h200"), or nullptr. Each GPU
// has its own: they rank the kernels differently at the small training
// points (bf16 L = 512: cuDNN first on the H100, flash on the H200).
const AttentionTable* attention_table(std::string_view device);

// The kernel's time in seconds for the query, or nothing where the table
// has no point of its dtype and mask or the kernel refused the nearest one.
// Dispatched: the kernel PyTorch's dispatch picked at that point.
std::optional<double> attention_seconds(const AttentionTable& table, const AttentionQuery& q);

extern const AttentionTable kAttentionTable_h100;
extern const AttentionTable kAttentionTable_h200;

}  // namespace sator::cost
