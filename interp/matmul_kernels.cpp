#include "interp/matmul_kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "interp/layout_kernels.h"
#include "interp/math_kernels.h"

namespace sator::interp {

namespace {
// Columns and inner indices per tile of the product: a 256 x 256 tile of b
// (512 kB) stays in cache while every row of a passes over it.
constexpr int64_t kTile = 256;

// out[i, j] += sum over p of a[i, p] * b[p, j] for each of `batches` matrices
// (a [n, k], b [k, m], out [n, m], row-major). Each sum runs over p = 0, 1,
// ... in that order whatever the tiling (the p tiles go in order, each
// element's sum never split): the result is the same to the last bit as the
// plain triple loop's, only the traffic is less (rows of a large b were
// read once per row of a). Four rows of a at a time share each row of b's
// tile as it is loaded.
void product_into(const double* a, const double* b, double* out, int64_t batches, int64_t n, int64_t k, int64_t m) {
  for (int64_t bi = 0; bi < batches; ++bi) {
    const double* ab = a + bi * n * k;
    const double* bb = b + bi * k * m;
    double* ob = out + bi * n * m;
    for (int64_t j0 = 0; j0 < m; j0 += kTile)
      for (int64_t p0 = 0; p0 < k; p0 += kTile) {
        const int64_t j1 = std::min(m, j0 + kTile), p1 = std::min(k, p0 + kTile);
        int64_t i = 0;
        for (; i + 4 <= n; i += 4) {
          double* __restrict r0 = ob + i * m;
          double* __restrict r1 = r0 + m;
          double* __restrict r2 = r1 + m;
          double* __restrict r3 = r2 + m;
          for (int64_t p = p0; p < p1; ++p) {
            const double x0 = ab[i * k + p], x1 = ab[(i + 1) * k + p], x2 = ab[(i + 2) * k + p],
                         x3 = ab[(i + 3) * k + p];
            const double* __restrict brow = bb + p * m;
            for (int64_t j = j0; j < j1; ++j) {
              const double y = brow[j];
              r0[j] += x0 * y;
              r1[j] += x1 * y;
              r2[j] += x2 * y;
              r3[j] += x3 * y;
            }
          }
        }
        for (; i < n; ++i) {
          double* __restrict row = ob + i * m;
          for (int64_t p = p0; p < p1; ++p) {
            const double x = ab[i * k + p];
            const double* __restrict brow = bb + p * m;
            for (int64_t j = j0; j < j1; ++j) row[j] += x * brow[j];
          }
        }
      }
  }
}

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
  product_into(a.data.data(), b.data.data(), out.data.data(), batches, n, k, m);
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
  // x [rows, in] times w's transpose [in, outs]: each sum over in = 0, 1, ...
  // in order, as a dot product of x's row with w's row would take it.
  std::vector<double> wt(static_cast<size_t>(in * outs));
  for (int64_t o = 0; o < outs; ++o)
    for (int64_t i = 0; i < in; ++i) wt[static_cast<size_t>(i * outs + o)] = w.data[static_cast<size_t>(o * in + i)];
  product_into(x.data.data(), wt.data(), out.data.data(), 1, rows, in, outs);
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

}  // namespace sator::interp
