// Layout ops of the reference interpreter, each defined by the index map it
// applies (which input element each output element reads), as PyTorch
// documents it. Results are fresh contiguous tensors: aliasing is not modelled,
// only values.
#pragma once

#include "interp/tensor64.h"

namespace sator::interp {

// view / reshape / _unsafe_view: same elements in row-major order; one size
// may be -1 (inferred).
Tensor64 reshape(const Tensor64& t, Shape sizes);
Tensor64 permute(const Tensor64& t, const std::vector<int64_t>& dims);
Tensor64 transpose(const Tensor64& t, int64_t dim0, int64_t dim1);
// expand: -1 keeps a size; new leading dims allowed; only size-1 dims grow.
Tensor64 expand(const Tensor64& t, Shape sizes);
Tensor64 unsqueeze(const Tensor64& t, int64_t dim);
Tensor64 squeeze_dim(const Tensor64& t, int64_t dim);  // no-op unless the size is 1
// slice.Tensor: start/end clamped to [0, size] as PyTorch does; step >= 1.
Tensor64 slice(const Tensor64& t, int64_t dim, int64_t start, int64_t end, int64_t step);
Tensor64 select(const Tensor64& t, int64_t dim, int64_t index);
Tensor64 cat(const std::vector<Tensor64>& parts, int64_t dim);

}  // namespace sator::interp
