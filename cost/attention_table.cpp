#include "cost/attention_table.h"

#include <cmath>
#include <limits>
#include <string>

namespace sator::cost {

const char* attention_kernel_name(AttentionKernel k) {
  switch (k) {
    case AttentionKernel::Flash: return "flash";
    case AttentionKernel::Cudnn: return "cudnn";
    case AttentionKernel::Efficient: return "efficient";
    case AttentionKernel::Math: return "math";
    case AttentionKernel::Dispatched: return "dispatched";
    case AttentionKernel::Fastest: return "fastest";
  }
  return "?";
}

const char* attention_mask_name(AttentionMask m) {
  switch (m) {
    case AttentionMask::None: return "none";
    case AttentionMask::Causal: return "causal";
    case AttentionMask::Additive: return "additive";
    case AttentionMask::BiasGrad: return "bias_grad";
  }
  return "?";
}

const AttentionTable* attention_table(std::string_view device) {
  if (device == "h100") return &kAttentionTable_h100;
  if (device == "h200") return &kAttentionTable_h200;
  return nullptr;
}

namespace {

const char* dtype_key(DType t) {
  switch (t) {
    case DType::BFloat16: return "bf16";
    case DType::Float16: return "fp16";
    case DType::Float32: return "fp32";
    default: return nullptr;
  }
}

std::optional<size_t> kernel_index(const AttentionPoint& p, AttentionKernel k) {
  if (k != AttentionKernel::Dispatched && k != AttentionKernel::Fastest) return static_cast<size_t>(k);
  const std::string d = p.default_kernel;
  if (k == AttentionKernel::Dispatched)
    for (size_t i = 0; i < 4; ++i)
      if (d == attention_kernel_name(static_cast<AttentionKernel>(i))) return i;
  // Not recorded (training points): the dispatch's priority order on
  // Hopper, the fastest kernel that took the point.
  std::optional<size_t> best;
  for (size_t i = 0; i < 4; ++i)
    if (p.ms[i] >= 0 && (!best || p.ms[i] < p.ms[*best])) best = i;
  return best;
}

// The point of `phase` nearest the query among those of its dtype, mask and dropout.
const AttentionPoint* nearest(const AttentionTable& t, const char* dtype, const AttentionQuery& q, const char* phase,
                              bool dropout) {
  const AttentionPoint* best = nullptr;
  double best_d = std::numeric_limits<double>::infinity();
  const std::string mask = attention_mask_name(q.mask);
  for (const AttentionPoint& p : t.points) {
    if (std::string(p.dtype) != dtype || mask != p.mask || std::string(p.phase) != phase || (p.dropout > 0) != dropout)
      continue;
    const double d = std::abs(std::log(q.l / p.seq)) + std::abs(std::log(q.e / p.head_dim));
    if (d < best_d) best = &p, best_d = d;
  }
  return best;
}

std::optional<double> point_seconds(const AttentionPoint& p, AttentionKernel k) {
  const auto i = kernel_index(p, k);
  if (!i || p.ms[*i] < 0) return std::nullopt;
  return p.ms[*i] * 1e-3;
}

}  // namespace

std::optional<double> attention_seconds(const AttentionTable& table, const AttentionQuery& q) {
  const char* dtype = dtype_key(q.dtype);
  if (!dtype) return std::nullopt;
  // Inference runs no dropout; a training forward's time is its no-grad
  // forward's (the log-sum-exp it keeps costs a row's write).
  const AttentionPoint* fwd = nearest(table, dtype, q, "fwd", false);
  if (q.mask == AttentionMask::BiasGrad) {
    AttentionQuery plain = q;
    plain.mask = AttentionMask::Additive;
    fwd = nearest(table, dtype, plain, "fwd", false);
  }
  if (!fwd) return std::nullopt;
  const auto f = point_seconds(*fwd, q.kernel);
  if (!f) return std::nullopt;
  const double work = q.batch_heads * q.l * q.s * q.e;
  const auto scaled = [&](double seconds, const AttentionPoint& p) {
    return seconds * work / (static_cast<double>(p.batch_heads) * p.seq * p.seq * p.head_dim);
  };
  if (!q.backward) return scaled(*f, *fwd);
  const AttentionPoint* both = nearest(table, dtype, q, "fwd_bwd", q.dropout);
  if (!both) return std::nullopt;
  const auto fb = point_seconds(*both, q.kernel);
  if (!fb) return std::nullopt;
  return scaled(std::max(*fb - *f, *f), *both);
}

}  // namespace sator::cost
