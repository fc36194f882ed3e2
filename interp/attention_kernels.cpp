#include "interp/attention_kernels.h"

#include <cmath>
#include <functional>
#include <limits>

#include "interp/layout_kernels.h"
#include "interp/math_kernels.h"
#include "interp/matmul_kernels.h"

namespace sator::interp {

Tensor64 sdpa(const Tensor64& q, const Tensor64& k, const Tensor64& v, const SdpaOptions& options) {
  if (q.rank() < 2 || k.rank() != q.rank() || v.rank() != q.rank())
    throw InterpError("scaled_dot_product_attention: q, k, v must have one rank >= 2");
  Tensor64 key = k, value = v;
  if (options.enable_gqa && q.rank() >= 3) {
    // Repeat each key/value head q_heads / kv_heads times (repeat_interleave on dim -3).
    const size_t hd = q.rank() - 3;
    const int64_t qh = q.shape[hd], kh = k.shape[hd];
    if (kh == 0 || qh % kh != 0) throw InterpError("scaled_dot_product_attention: heads do not divide");
    auto repeat = [&](const Tensor64& t) {
      Tensor64 u = unsqueeze(t, static_cast<int64_t>(hd) + 1);
      Shape grown = u.shape;
      grown[hd + 1] = qh / kh;
      Shape merged = t.shape;
      merged[hd] = qh;
      return reshape(expand(u, grown), merged);
    };
    key = repeat(k);
    value = repeat(v);
  }
  Tensor64 probs = safe_softmax(attention_scores(q, key, options), -1);
  if (options.dropout_p != 0.0) {
    if (!options.uniform && !options.replay) throw InterpError("attention with dropout is random: no random draws were allowed");
    const double p = options.dropout_p;
    const Tensor64 u = options.replay ? *options.replay : options.uniform(probs.shape);
    options.drawn = u;
    // x * keep * scale, as torch's dropout computes it (a NaN stays NaN when dropped).
    probs = zip(probs, u, [p](double x, double r) { return x * (r > p ? 1.0 : 0.0) / (1.0 - p); }, probs.dtype);
  }
  return matmul(probs, value);
}

namespace {
double scale_of(const Tensor64& q, const SdpaOptions& options) {
  return options.scale ? *options.scale : 1.0 / std::sqrt(static_cast<double>(q.shape.back()));
}
}  // namespace

Tensor64 attention_scores(const Tensor64& q, const Tensor64& key, const SdpaOptions& options) {
  const double scale = scale_of(q, options);
  Tensor64 scores = matmul(q, transpose(key, -2, -1));
  for (double& x : scores.data) x *= scale;
  const int64_t L = scores.shape[scores.rank() - 2], S = scores.shape.back();
  if (options.is_causal) {
    Tensor64 bias = Tensor64::filled({L, S}, 0.0);
    for (int64_t i = 0; i < L; ++i)
      for (int64_t j = i + 1; j < S; ++j) bias.at({i, j}) = -std::numeric_limits<double>::infinity();
    scores = zip(scores, bias, [](double s, double b) { return s + b; }, scores.dtype);
  }
  if (options.attn_mask) {
    const Tensor64& mask = *options.attn_mask;
    scores = mask.dtype == DType::Bool
                 ? zip(scores, mask, [](double s, double keep) {
                     return keep != 0.0 ? s : -std::numeric_limits<double>::infinity();
                   }, scores.dtype)
                 : zip(scores, mask, [](double s, double b) { return s + b; }, scores.dtype);
  }
  return scores;
}


Tensor64 logsumexp_last(const Tensor64& scores) {
  const Tensor64 m = amax(scores, {-1}, true);
  const Tensor64 e = zip(scores, m, [](double s, double mx) { return std::isinf(mx) ? 0.0 : std::exp(s - mx); }, scores.dtype);
  const Tensor64 total = sum(e, {-1}, true);
  return zip(total, m, [](double t, double mx) { return std::isinf(mx) ? mx : mx + std::log(t); }, scores.dtype);
}

SdpaGrads sdpa_backward(const Tensor64& dout, const Tensor64& q, const Tensor64& k, const Tensor64& v,
                        const SdpaOptions& options) {
  if (options.dropout_p != 0.0 && !options.replay)
    throw InterpError("attention backward with dropout: the forward's dropout mask is not replayed");
  if (options.enable_gqa) throw InterpError("attention backward with grouped-query heads is not supported");
  const double scale = scale_of(q, options);
  const Tensor64 p = safe_softmax(attention_scores(q, k, options), -1);
  SdpaGrads g;
  Tensor64 dp;
  if (options.dropout_p != 0.0) {
    // The forward used pd = p·keep/(1-p'): dv from pd, dp through the same mask.
    const double drop = options.dropout_p;
    const auto keep = [drop](double x, double r) { return x * (r > drop ? 1.0 : 0.0) / (1.0 - drop); };
    g.dv = matmul(transpose(zip(p, *options.replay, keep, p.dtype), -2, -1), dout);
    dp = zip(matmul(dout, transpose(v, -2, -1)), *options.replay, keep, p.dtype);
  } else {
    g.dv = matmul(transpose(p, -2, -1), dout);
    dp = matmul(dout, transpose(v, -2, -1));
  }
  const Tensor64 row = sum(zip(dp, p, std::multiplies<double>(), p.dtype), {-1}, true);
  g.dscores = zip(p, zip(dp, row, std::minus<double>(), p.dtype), std::multiplies<double>(), p.dtype);
  g.dq = map(matmul(g.dscores, k), [scale](double x) { return x * scale; }, q.dtype);
  g.dk = map(matmul(transpose(g.dscores, -2, -1), q), [scale](double x) { return x * scale; }, k.dtype);
  return g;
}

}  // namespace sator::interp
