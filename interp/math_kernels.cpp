#include "interp/math_kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "interp/layout_kernels.h"

namespace sator::interp {

Tensor64 broadcast_to(const Tensor64& t, const Shape& shape) {
  if (t.shape == shape) return t;
  return expand(t, shape);
}

Tensor64 map(const Tensor64& t, const std::function<double(double)>& fn, DType result) {
  Tensor64 out = t;
  out.dtype = result;
  for (double& x : out.data) x = fn(x);
  return out;
}

Tensor64 zip(const Tensor64& a, const Tensor64& b, const std::function<double(double, double)>& fn,
             DType result) {
  const Shape shape = broadcast_shapes(a.shape, b.shape);
  std::optional<Tensor64> grown_a, grown_b;  // only operands that broadcast are copied
  const Tensor64& x = a.shape == shape ? a : grown_a.emplace(expand(a, shape));
  const Tensor64& y = b.shape == shape ? b : grown_b.emplace(expand(b, shape));
  Tensor64 out = Tensor64::filled(shape, 0.0, result);
  for (size_t i = 0; i < out.data.size(); ++i) out.data[i] = fn(x.data[i], y.data[i]);
  return out;
}

Tensor64 where(const Tensor64& cond, const Tensor64& a, const Tensor64& b, DType result) {
  const Shape shape = broadcast_shapes(cond.shape, broadcast_shapes(a.shape, b.shape));
  std::optional<Tensor64> gc, ga, gb;
  const Tensor64& c = cond.shape == shape ? cond : gc.emplace(expand(cond, shape));
  const Tensor64& x = a.shape == shape ? a : ga.emplace(expand(a, shape));
  const Tensor64& y = b.shape == shape ? b : gb.emplace(expand(b, shape));
  Tensor64 out = Tensor64::filled(shape, 0.0, result);
  for (size_t i = 0; i < out.data.size(); ++i) out.data[i] = c.data[i] != 0.0 ? x.data[i] : y.data[i];
  return out;
}

Tensor64 reduce(const Tensor64& t, std::vector<int64_t> dims, bool keepdim, double init,
                const std::function<double(double, double)>& fn) {
  std::vector<bool> reduced(t.rank(), dims.empty());
  // A rank-0 tensor's dim 0 (or -1) is the scalar itself: reducing it over
  // its one element gives it back (PyTorch wraps dims of scalars as rank 1).
  if (t.rank() > 0)
    for (int64_t d : dims) reduced[wrap_dim(d, t.rank())] = true;
  Shape kept_shape = t.shape;  // the result with keepdim
  for (size_t d = 0; d < t.rank(); ++d)
    if (reduced[d]) kept_shape[d] = 1;
  Tensor64 out = Tensor64::filled(kept_shape, init, t.dtype);
  size_t flat = 0;
  for_each_index(t.shape, [&](const Shape& index) {
    Shape dst = index;
    for (size_t d = 0; d < t.rank(); ++d)
      if (reduced[d]) dst[d] = 0;
    double& acc = out.at(dst);
    acc = fn(acc, t.data[flat++]);
  });
  if (!keepdim) {
    Shape shape;
    for (size_t d = 0; d < t.rank(); ++d)
      if (!reduced[d]) shape.push_back(t.shape[d]);
    out.shape = shape;
  }
  return out;
}

Tensor64 sum(const Tensor64& t, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce(t, dims, keepdim, 0.0, [](double a, double b) { return a + b; });
}

Tensor64 amax(const Tensor64& t, const std::vector<int64_t>& dims, bool keepdim) {
  return reduce(t, dims, keepdim, -std::numeric_limits<double>::infinity(), [](double a, double b) {
    return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : std::max(a, b);
  });
}

Tensor64 mean(const Tensor64& t, const std::vector<int64_t>& dims, bool keepdim) {
  Tensor64 s = sum(t, dims, keepdim);
  const double count = static_cast<double>(t.numel()) / std::max<double>(static_cast<double>(s.numel()), 1.0);
  for (double& x : s.data) x /= count;
  return s;
}

Tensor64 softmax(const Tensor64& t, int64_t dim) {
  const Tensor64 m = amax(t, {dim}, true);
  // A row of -inf stays NaN, as in PyTorch.
  const Tensor64 e = zip(t, m, [](double x, double mx) { return std::exp(x - mx); }, t.dtype);
  const Tensor64 s = sum(e, {dim}, true);
  return zip(e, s, [](double x, double total) { return x / total; }, t.dtype);
}

Tensor64 safe_softmax(const Tensor64& t, int64_t dim) {
  const Tensor64 p = softmax(t, dim);
  const Tensor64 all_masked = reduce(map(t, [](double x) { return std::isinf(x) && x < 0 ? 1.0 : 0.0; }, t.dtype),
                                     {dim}, true, 1.0, [](double a, double b) { return std::min(a, b); });
  return zip(p, all_masked, [](double x, double masked) { return masked != 0.0 ? 0.0 : x; }, t.dtype);
}

Tensor64 sum_to_shape(const Tensor64& t, const Shape& shape) {
  if (shape.size() > t.rank()) throw InterpError("sum_to_shape: target has more dims");
  const size_t lead = t.rank() - shape.size();
  std::vector<int64_t> dims;
  for (size_t d = 0; d < t.rank(); ++d)
    if (d < lead || (shape[d - lead] == 1 && t.shape[d] != 1)) dims.push_back(static_cast<int64_t>(d));
  if (dims.empty()) return reshape(t, shape);
  return reshape(sum(t, dims, true), shape);
}

}  // namespace sator::interp
