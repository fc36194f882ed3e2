#include "interp/layout_kernels.h"

#include <algorithm>
#include <string>

namespace sator::interp {

namespace {
// The tensor of `shape` whose element at index i is t.data[offset + sum(i[k] *
// stride[k])]: every layout op that is a strided view of its input (permute,
// expand, slice, select), copied out with an odometer over the output.
Tensor64 strided_copy(const Tensor64& t, Shape shape, const std::vector<int64_t>& stride, int64_t offset) {
  Tensor64 out = Tensor64::filled(std::move(shape), 0.0, t.dtype);
  if (out.data.empty()) return out;
  const size_t rank = out.shape.size();
  if (rank == 0) {
    out.data[0] = t.data[static_cast<size_t>(offset)];
    return out;
  }
  std::vector<int64_t> index(rank, 0);
  const int64_t inner = out.shape[rank - 1], inner_stride = stride[rank - 1];
  int64_t base = offset;
  for (size_t flat = 0; flat < out.data.size();) {
    for (int64_t i = 0; i < inner; ++i) out.data[flat++] = t.data[static_cast<size_t>(base + i * inner_stride)];
    size_t d = rank - 1;  // advance the outer dims, last fastest
    while (d-- > 0) {
      base += stride[d];
      if (++index[d] < out.shape[d]) break;
      base -= stride[d] * out.shape[d];
      index[d] = 0;
    }
  }
  return out;
}

std::vector<int64_t> row_major_strides(const Shape& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t run = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = run;
    run *= shape[i];
  }
  return s;
}
}  // namespace

Tensor64 reshape(const Tensor64& t, Shape sizes) {
  int64_t known = 1, inferred = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (inferred >= 0) throw InterpError("reshape: more than one -1");
      inferred = static_cast<int64_t>(i);
    } else {
      known *= sizes[i];
    }
  }
  if (inferred >= 0) {
    if (known == 0 || t.numel() % known != 0) throw InterpError("reshape: cannot infer the -1 size");
    sizes[static_cast<size_t>(inferred)] = t.numel() / known;
  }
  if (numel_of(sizes) != t.numel())
    throw InterpError("reshape: " + std::to_string(t.numel()) + " elements into " +
                      std::to_string(numel_of(sizes)));
  Tensor64 out = t;
  out.shape = std::move(sizes);
  return out;
}

Tensor64 permute(const Tensor64& t, const std::vector<int64_t>& dims) {
  if (dims.size() != t.rank()) throw InterpError("permute: wrong number of dims");
  std::vector<size_t> perm(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    perm[i] = wrap_dim(dims[i], t.rank());
    if (seen[perm[i]]) throw InterpError("permute: repeated dim");
    seen[perm[i]] = true;
  }
  Shape shape(dims.size());
  for (size_t i = 0; i < perm.size(); ++i) shape[i] = t.shape[perm[i]];
  // Output dim i is input dim perm[i].
  const std::vector<int64_t> in_stride = row_major_strides(t.shape);
  std::vector<int64_t> stride(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) stride[i] = in_stride[perm[i]];
  return strided_copy(t, shape, stride, 0);
}

Tensor64 transpose(const Tensor64& t, int64_t dim0, int64_t dim1) {
  std::vector<int64_t> dims(t.rank());
  for (size_t i = 0; i < dims.size(); ++i) dims[i] = static_cast<int64_t>(i);
  if (t.rank() == 0) return t;
  std::swap(dims[wrap_dim(dim0, t.rank())], dims[wrap_dim(dim1, t.rank())]);
  return permute(t, dims);
}

Tensor64 expand(const Tensor64& t, Shape sizes) {
  if (sizes.size() < t.rank()) throw InterpError("expand: fewer sizes than dims");
  const size_t lead = sizes.size() - t.rank();
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i < lead) {
      if (sizes[i] < 0) throw InterpError("expand: -1 for a new leading dim");
      continue;
    }
    const int64_t have = t.shape[i - lead];
    if (sizes[i] == -1) sizes[i] = have;
    if (have != 1 && have != sizes[i]) throw InterpError("expand: size " + std::to_string(have) +
                                                         " cannot grow to " + std::to_string(sizes[i]));
  }
  // Broadcast dims (new leading ones, and size 1 grown) read the same element.
  const std::vector<int64_t> in_stride = row_major_strides(t.shape);
  std::vector<int64_t> stride(sizes.size(), 0);
  for (size_t d = 0; d < t.rank(); ++d) stride[d + lead] = t.shape[d] == 1 ? 0 : in_stride[d];
  return strided_copy(t, sizes, stride, 0);
}

Tensor64 unsqueeze(const Tensor64& t, int64_t dim) {
  Shape shape = t.shape;
  shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(wrap_dim(dim, t.rank() + 1)), 1);
  return reshape(t, shape);
}

Tensor64 squeeze_dim(const Tensor64& t, int64_t dim) {
  if (t.rank() == 0) return t;
  const size_t d = wrap_dim(dim, t.rank());
  if (t.shape[d] != 1) return t;
  Shape shape = t.shape;
  shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(d));
  return reshape(t, shape);
}

Tensor64 slice(const Tensor64& t, int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (step < 1) throw InterpError("slice: step must be positive");
  const size_t d = wrap_dim(dim, t.rank());
  const int64_t size = t.shape[d];
  auto clamp = [&](int64_t i) { return std::clamp(i < 0 ? i + size : i, int64_t{0}, size); };
  start = clamp(start);
  end = std::max(clamp(end), start);
  Shape shape = t.shape;
  shape[d] = (end - start + step - 1) / step;
  std::vector<int64_t> stride = row_major_strides(t.shape);
  const int64_t offset = start * stride[d];
  stride[d] *= step;
  return strided_copy(t, shape, stride, offset);
}

Tensor64 select(const Tensor64& t, int64_t dim, int64_t index) {
  const size_t d = wrap_dim(dim, t.rank());
  const int64_t size = t.shape[d];
  if (index < -size || index >= size) throw InterpError("select: index out of range");
  if (index < 0) index += size;
  Shape shape = t.shape;
  shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(d));
  std::vector<int64_t> stride = row_major_strides(t.shape);
  const int64_t offset = index * stride[d];
  stride.erase(stride.begin() + static_cast<std::ptrdiff_t>(d));
  return strided_copy(t, shape, stride, offset);
}

Tensor64 cat(const std::vector<Tensor64>& parts, int64_t dim) {
  if (parts.empty()) throw InterpError("cat: no tensors");
  const size_t d = wrap_dim(dim, parts[0].rank());
  Shape shape = parts[0].shape;
  shape[d] = 0;
  for (const Tensor64& p : parts) {
    if (p.rank() != shape.size()) throw InterpError("cat: ranks differ");
    for (size_t i = 0; i < shape.size(); ++i)
      if (i != d && p.shape[i] != shape[i]) throw InterpError("cat: sizes differ off the cat dim");
    shape[d] += p.shape[d];
  }
  Tensor64 out = Tensor64::filled(shape, 0.0, parts[0].dtype);
  size_t flat = 0;
  for_each_index(shape, [&](const Shape& index) {
    // Walk past the parts that lie before this position along `d`.
    Shape src = index;
    size_t k = 0;
    while (src[d] >= parts[k].shape[d]) src[d] -= parts[k++].shape[d];
    out.data[flat++] = parts[k].at(src);
  });
  return out;
}

}  // namespace sator::interp
