// A dense float64 tensor for the reference interpreter: row-major and always
// contiguous, every element a double whatever dtype it stands for (bools are
// 0/1, integers exact up to 2^53). Written for obviousness, not speed: the
// interpreter is the yardstick rules and optimized graphs are measured by.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

#include "ir/dtype.h"

namespace sator::interp {

using Shape = std::vector<int64_t>;

// An op the interpreter cannot evaluate with these arguments (bad sizes,
// out-of-range dims): the message says what.
struct InterpError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

int64_t numel_of(const Shape& shape);

// Calls fn(index) for every multi-index of `shape`, in row-major order (the
// order of Tensor64::data).
void for_each_index(const Shape& shape, const std::function<void(const Shape&)>& fn);

// torch's broadcasting of two shapes; throws InterpError if they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b);

// Wraps a possibly negative dim into [0, rank) as PyTorch does.
size_t wrap_dim(int64_t dim, size_t rank);

struct Tensor64 {
  Shape shape;
  std::vector<double> data;  // numel_of(shape) elements, row-major
  DType dtype = DType::Float64;

  static Tensor64 filled(Shape shape, double value, DType dtype = DType::Float64);
  static Tensor64 scalar(double value, DType dtype = DType::Float64);
  // Elements 0, 1, 2, ... (tests use it to see where each element went).
  static Tensor64 arange(Shape shape, DType dtype = DType::Float64);

  size_t rank() const { return shape.size(); }
  int64_t numel() const { return static_cast<int64_t>(data.size()); }
  // The flat position of a multi-index (which must be in range).
  int64_t offset(const Shape& index) const;
  double at(const Shape& index) const { return data[static_cast<size_t>(offset(index))]; }
  double& at(const Shape& index) { return data[static_cast<size_t>(offset(index))]; }
};

// The largest |a - b| / max(|b|, floor, 1e-6 * max |b|) over all elements
// (both of one shape; NaN and infinities must match exactly, else +inf):
// relative per element, except that elements a millionth of the tensor's
// largest magnitude or less are measured against that millionth.
double max_relative_error(const Tensor64& a, const Tensor64& b, double floor = 1e-12);

}  // namespace sator::interp
