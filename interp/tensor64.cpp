#include "interp/tensor64.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace sator::interp {

namespace {
std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}
}  // namespace

int64_t numel_of(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw InterpError("negative size in shape " + shape_str(shape));
    n *= d;
  }
  return n;
}

void for_each_index(const Shape& shape, const std::function<void(const Shape&)>& fn) {
  if (numel_of(shape) == 0) return;
  Shape index(shape.size(), 0);
  while (true) {
    fn(index);
    size_t d = shape.size();
    while (d > 0) {  // odometer increment, last dim fastest
      --d;
      if (++index[d] < shape[d]) break;
      index[d] = 0;
      if (d == 0) return;
    }
    if (shape.empty()) return;
  }
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw InterpError("shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

size_t wrap_dim(int64_t dim, size_t rank) {
  const int64_t r = std::max<int64_t>(static_cast<int64_t>(rank), 1);  // a 0-d tensor takes dim 0 / -1
  if (dim < -r || dim >= r)
    throw InterpError("dim " + std::to_string(dim) + " out of range for rank " + std::to_string(rank));
  return static_cast<size_t>(dim < 0 ? dim + r : dim);
}

Tensor64 Tensor64::filled(Shape shape, double value, DType dtype) {
  Tensor64 t;
  t.data.assign(static_cast<size_t>(numel_of(shape)), value);
  t.shape = std::move(shape);
  t.dtype = dtype;
  return t;
}

Tensor64 Tensor64::scalar(double value, DType dtype) { return filled({}, value, dtype); }

Tensor64 Tensor64::arange(Shape shape, DType dtype) {
  Tensor64 t = filled(std::move(shape), 0.0, dtype);
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<double>(i);
  return t;
}

int64_t Tensor64::offset(const Shape& index) const {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

double max_relative_error(const Tensor64& a, const Tensor64& b, double floor) {
  if (a.shape != b.shape) return std::numeric_limits<double>::infinity();
  // Elements far below the tensor's magnitude are measured against a
  // millionth of it: a sum that cancels to nearly 0 loses relative accuracy
  // under any reordering, and that is not a difference between two graphs.
  double largest = 0.0;
  for (double y : b.data)
    if (std::isfinite(y)) largest = std::max(largest, std::abs(y));
  floor = std::max(floor, 1e-6 * largest);
  double worst = 0.0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    const double x = a.data[i], y = b.data[i];
    if (std::isnan(x) || std::isnan(y) || std::isinf(x) || std::isinf(y)) {
      const bool same = (std::isnan(x) && std::isnan(y)) || x == y;
      if (!same) return std::numeric_limits<double>::infinity();
      continue;
    }
    worst = std::max(worst, std::abs(x - y) / std::max(std::abs(y), floor));
  }
  return worst;
}

}  // namespace sator::interp
