#include "interp/scatter_kernels.h"

#include <algorithm>

#include "interp/conv_kernels.h"
#include "interp/layout_kernels.h"
#include "interp/math_kernels.h"

namespace sator::interp {

namespace {
EvalValue result(const OpArgs& a, Tensor64 t) { return EvalValue::of_tensor(cast_to(std::move(t), a.result_dtype())); }
}  // namespace

EvalValue constant_pad_nd_op(const OpArgs& a) {
  // pad = [before, after] pairs from the last dim backwards; negative crops.
  const Tensor64& self = a.tensor("self");
  const Shape pad = a.sizes("pad");
  if (pad.size() % 2 != 0 || pad.size() / 2 > self.rank()) throw InterpError("constant_pad_nd: bad pad list");
  Shape shape = self.shape;
  std::vector<int64_t> before(self.rank(), 0);
  for (size_t k = 0; k < pad.size() / 2; ++k) {
    const size_t d = self.rank() - 1 - k;
    before[d] = pad[2 * k];
    shape[d] += pad[2 * k] + pad[2 * k + 1];
    if (shape[d] < 0) throw InterpError("constant_pad_nd: a dim padded below 0");
  }
  Tensor64 out = Tensor64::filled(shape, a.scalar("value"), self.dtype);
  size_t flat = 0;
  for_each_index(shape, [&](const Shape& i) {
    Shape src = i;
    bool inside = true;
    for (size_t d = 0; d < src.size(); ++d) {
      src[d] -= before[d];
      inside = inside && src[d] >= 0 && src[d] < self.shape[d];
    }
    if (inside) out.data[flat] = self.at(src);
    ++flat;
  });
  return result(a, std::move(out));
}

EvalValue slice_scatter_op(const OpArgs& a) {
  const Tensor64 &self = a.tensor("self"), &src = a.tensor("src");
  const size_t d = wrap_dim(a.integer("dim"), self.rank());
  const int64_t size = self.shape[d];
  auto clamp = [&](int64_t i) { return std::clamp(i < 0 ? i + size : i, int64_t{0}, size); };
  const int64_t start = a.is_none("start") ? 0 : clamp(a.integer("start"));
  const int64_t step = a.integer("step");
  if (step < 1) throw InterpError("slice_scatter: step must be positive");
  Tensor64 out = self;
  for_each_index(src.shape, [&](const Shape& i) {
    Shape dst = i;
    dst[d] = start + i[d] * step;
    if (dst[d] >= size) throw InterpError("slice_scatter: src does not fit the slice");
    out.at(dst) = src.at(i);
  });
  return result(a, std::move(out));
}

EvalValue index_put_op(const OpArgs& a) {
  // out = self; out[idx0[i], idx1[i], ..., rest] (+)= values[i, rest], the
  // index tensors broadcast together, on self's leading dims.
  const Tensor64& self = a.tensor("self");
  const auto indices = a.optional_tensor_list("indices");
  const bool accumulate = a.flag("accumulate");
  if (indices.size() > self.rank()) throw InterpError("index_put: more index tensors than dims");
  Shape ishape;
  for (const auto& idx : indices) {
    if (!idx) throw InterpError("index_put with None entries is not supported");
    ishape = broadcast_shapes(ishape, idx->shape);
  }
  std::vector<Tensor64> idx;
  for (const auto& i : indices) idx.push_back(broadcast_to(*i, ishape));
  Shape vshape = ishape;
  vshape.insert(vshape.end(), self.shape.begin() + static_cast<std::ptrdiff_t>(indices.size()), self.shape.end());
  const Tensor64 values = broadcast_to(a.tensor("values"), vshape);
  Tensor64 out = self;
  for_each_index(vshape, [&](const Shape& i) {
    const Shape lead(i.begin(), i.begin() + static_cast<std::ptrdiff_t>(ishape.size()));
    Shape dst;
    for (size_t d = 0; d < idx.size(); ++d) {
      auto v = static_cast<int64_t>(idx[d].at(lead));
      if (v < 0) v += self.shape[d];
      if (v < 0 || v >= self.shape[d]) throw InterpError("index_put: index out of range");
      dst.push_back(v);
    }
    dst.insert(dst.end(), i.begin() + static_cast<std::ptrdiff_t>(ishape.size()), i.end());
    out.at(dst) = accumulate ? out.at(dst) + values.at(i) : values.at(i);
  });
  return result(a, std::move(out));
}

EvalValue scatter_value_op(const OpArgs& a) {
  const Tensor64 &self = a.tensor("self"), &index = a.tensor("index");
  const size_t d = wrap_dim(a.integer("dim"), self.rank());
  const double value = a.scalar("value");
  Tensor64 out = self;
  for_each_index(index.shape, [&](const Shape& i) {
    Shape dst = i;
    dst[d] = static_cast<int64_t>(index.at(i));
    if (dst[d] < 0) dst[d] += self.shape[d];
    if (dst[d] < 0 || dst[d] >= self.shape[d]) throw InterpError("scatter: index out of range");
    out.at(dst) = value;
  });
  return result(a, std::move(out));
}

EvalValue select_scatter_op(const OpArgs& a) {
  const Tensor64 &self = a.tensor("self"), &src = a.tensor("src");
  const size_t d = wrap_dim(a.integer("dim"), self.rank());
  int64_t index = a.integer("index");
  if (index < 0) index += self.shape[d];
  if (index < 0 || index >= self.shape[d]) throw InterpError("select_scatter: index out of range");
  Tensor64 out = self;
  for_each_index(src.shape, [&](const Shape& i) {
    Shape dst = i;
    dst.insert(dst.begin() + static_cast<std::ptrdiff_t>(d), index);
    out.at(dst) = src.at(i);
  });
  return result(a, std::move(out));
}

namespace {
ConvParams conv_params(const OpArgs& a) {
  if (a.flag("transposed")) throw InterpError("transposed convolution is not supported");
  return {a.sizes("stride"), a.sizes("padding"), a.sizes("dilation"), a.integer("groups")};
}
}  // namespace

EvalValue convolution_op(const OpArgs& a) {
  return result(a, convolution(a.tensor("input"), a.tensor("weight"), a.optional_tensor("bias"), conv_params(a)));
}

EvalValue convolution_backward_op(const OpArgs& a) {
  const std::vector<bool> mask = a.bools("output_mask");
  const Tensor64 &x = a.tensor("input"), &w = a.tensor("weight");
  ConvGrads g = convolution_backward(a.tensor("grad_output"), x, w, conv_params(a));
  auto item = [&](size_t i, Tensor64 t, DType dtype) {
    return i < mask.size() && mask[i] ? EvalValue::of_tensor(cast_to(std::move(t), dtype)) : EvalValue{};
  };
  return EvalValue::of_tuple({item(0, std::move(g.input), x.dtype), item(1, std::move(g.weight), w.dtype),
                              item(2, std::move(g.bias), w.dtype)});
}

}  // namespace sator::interp
