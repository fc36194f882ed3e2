#include "interp/matmul_kernels.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "interp/layout_kernels.h"
#include "interp/math_kernels.h"

namespace sator::interp {

namespace {
// Batched product of a [..., n, k] and b [..., k, m] whose batch dims are equal.
Tensor64 batched_product(const Tensor64& a, const Tensor64& b) {
  const size_t r = a.rank();
  const int64_t n = a.shape[r - 2], k = a.shape[r - 1], m = b.shape[r - 1];
  if (b.shape[r - 2] != k)
    throw InterpError("matmul: inner sizes " + std::to_string(k) + " and " + std::to_string(b.shape[r - 2]));
  Shape shape = a.shape;
  shape[r - 1] = m;
  Tensor64 out = Tensor64::filled(shape, 0.0, a.dtype);
  const int64_t batches = numel_of(Shape(a.shape.begin(), a.shape.end() - 2));
  // Each out[i, j] sums a[i, p] * b[p, j] for p = 0, 1, ... in that order;
  // the loops run p outside j so that b is read along its rows.
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t i = 0; i < n; ++i) {
      double* row = out.data.data() + (bi * n + i) * m;
      for (int64_t p = 0; p < k; ++p) {
        const double x = a.data[static_cast<size_t>((bi * n + i) * k + p)];
        const double* brow = b.data.data() + (bi * k + p) * m;
        for (int64_t j = 0; j < m; ++j) row[j] += x * brow[j];
      }
    }
  return out;
}
}  // namespace

Tensor64 linear_product(const Tensor64& x, const Tensor64& w) {
  if (x.rank() == 0 || w.rank() != 2 || x.shape.back() != w.shape[1])
    throw InterpError("linear: input [..., in] and weight [out, in] do not fit");
  const int64_t in = w.shape[1], outs = w.shape[0], rows = x.numel() / std::max<int64_t>(in, 1);
  Shape shape = x.shape;
  shape.back() = outs;
  Tensor64 out = Tensor64::filled(shape, 0.0, x.dtype);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < outs; ++o) {
      double acc = 0.0;
      for (int64_t i = 0; i < in; ++i) acc += x.data[static_cast<size_t>(r * in + i)] * w.data[static_cast<size_t>(o * in + i)];
      out.data[static_cast<size_t>(r * outs + o)] = acc;
    }
  return out;
}

Tensor64 mm(const Tensor64& a, const Tensor64& b) {
  if (a.rank() != 2 || b.rank() != 2) throw InterpError("mm: operands must be 2-D");
  return batched_product(a, b);
}

Tensor64 bmm(const Tensor64& a, const Tensor64& b) {
  if (a.rank() != 3 || b.rank() != 3 || a.shape[0] != b.shape[0])
    throw InterpError("bmm: operands must be 3-D with one batch size");
  return batched_product(a, b);
}

Tensor64 matmul(const Tensor64& a, const Tensor64& b) {
  if (a.rank() == 0 || b.rank() == 0) throw InterpError("matmul: 0-d operand");
  std::optional<Tensor64> a2, b2, xg, yg;  // copies only where a shape changes
  const Tensor64& x = a.rank() == 1 ? a2.emplace(unsqueeze(a, 0)) : a;
  const Tensor64& y = b.rank() == 1 ? b2.emplace(unsqueeze(b, 1)) : b;
  // Broadcast the batch dims of both, then multiply matrix by matrix.
  const Shape xb(x.shape.begin(), x.shape.end() - 2), yb(y.shape.begin(), y.shape.end() - 2);
  const Shape batch = broadcast_shapes(xb, yb);
  Shape xs = batch, ys = batch;
  xs.insert(xs.end(), x.shape.end() - 2, x.shape.end());
  ys.insert(ys.end(), y.shape.end() - 2, y.shape.end());
  Tensor64 out = batched_product(x.shape == xs ? x : xg.emplace(expand(x, xs)), y.shape == ys ? y : yg.emplace(expand(y, ys)));
  if (a.rank() == 1) out = squeeze_dim(out, -2);
  if (b.rank() == 1) out = squeeze_dim(out, -1);
  return out;
}

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
  const int64_t embed = q.shape.back();
  const double scale = options.scale ? *options.scale : 1.0 / std::sqrt(static_cast<double>(embed));
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
  Tensor64 probs = softmax(scores, -1);
  if (options.dropout_p != 0.0) {
    if (!options.uniform) throw InterpError("attention with dropout is random: no random draws were allowed");
    const double p = options.dropout_p;
    const Tensor64 u = options.uniform(probs.shape);
    // x * keep * scale, as torch's dropout computes it (a NaN stays NaN when dropped).
    probs = zip(probs, u, [p](double x, double r) { return x * (r > p ? 1.0 : 0.0) / (1.0 - p); }, probs.dtype);
  }
  return matmul(probs, value);
}

}  // namespace sator::interp
