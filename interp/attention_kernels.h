// Attention in the reference interpreter: scaled dot-product attention as
// PyTorch documents it, and its gradients (the backward ops of the fused
// kernels recompute the probabilities, as the kernels themselves do).
#pragma once

#include <functional>
#include <optional>

#include "interp/tensor64.h"

namespace sator::interp {

struct SdpaOptions {
  std::optional<Tensor64> attn_mask;  // bool (true = attend) or additive, broadcast to [.., L, S]
  bool is_causal = false;             // keep j <= i (top-left aligned, as torch)
  std::optional<double> scale;        // default 1 / sqrt(E)
  bool enable_gqa = false;            // k/v heads repeated to q's head count
  // Dropout: probabilities kept where a uniform draw of their shape exceeds
  // dropout_p, scaled by 1 / (1 - dropout_p) (the form AOTAutograd decomposes
  // it into, so the two can be compared on the same draws).
  double dropout_p = 0.0;
  std::function<Tensor64(const Shape&)> uniform;
  // The forward's draws replayed (a fused kernel's backward reuses its
  // forward's mask), and where the forward leaves the draws it made.
  std::optional<Tensor64> replay;
  mutable std::optional<Tensor64> drawn;
};
// softmax(q kᵀ · scale + mask) v, exactly torch's documented reference.
Tensor64 sdpa(const Tensor64& q, const Tensor64& k, const Tensor64& v, const SdpaOptions& options);

// The scores softmax is taken over: q kᵀ · scale, the causal triangle and the
// mask applied (k already repeated for GQA).
Tensor64 attention_scores(const Tensor64& q, const Tensor64& k, const SdpaOptions& options);

// log Σ exp over the last dim, keepdim (the fused kernels' logsumexp).
Tensor64 logsumexp_last(const Tensor64& scores);

struct SdpaGrads {
  Tensor64 dq, dk, dv;
  Tensor64 dscores;  // the gradient of the additive mask, before broadcasting back
};
// Gradients of sdpa(q, k, v) for the output gradient `dout`: with P the
// softmax of the scores, dv = Pᵀ dout, dP = dout vᵀ, dS = P ⊙ (dP − Σ_j dP ⊙ P),
// dq = scale · dS k, dk = scale · dSᵀ q. No dropout (its mask is not replayed)
// and no GQA.
SdpaGrads sdpa_backward(const Tensor64& dout, const Tensor64& q, const Tensor64& k, const Tensor64& v,
                        const SdpaOptions& options);

}  // namespace sator::interp
