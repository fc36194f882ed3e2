#include "interp/conv_kernels.h"

#include <string>
#include <vector>

namespace sator::interp {

namespace {

// The geometry of one convolution, checked once: sizes, and for every
// output position and kernel position the input position (or -1 in the
// padding).
struct Geometry {
  int64_t n, c, o, cg, og, groups;
  Shape in, k, out;
  int64_t in_numel, k_numel, out_numel;
  std::vector<int64_t> source;  // [out position][kernel position] -> flat input position or -1

  Geometry(const Tensor64& x, const Tensor64& w, const ConvParams& p) {
    if (x.rank() < 3 || w.rank() != x.rank()) throw InterpError("convolution: input and weight must be [N, C, ...] and [O, C/g, ...]");
    const size_t sd = x.rank() - 2;
    if (p.stride.size() != sd || p.padding.size() != sd || p.dilation.size() != sd)
      throw InterpError("convolution: stride, padding and dilation need one entry per spatial dim");
    n = x.shape[0], c = x.shape[1], o = w.shape[0], groups = p.groups;
    if (groups < 1 || c % groups != 0 || o % groups != 0 || w.shape[1] != c / groups)
      throw InterpError("convolution: channels do not divide into the groups");
    cg = c / groups, og = o / groups;
    in = Shape(x.shape.begin() + 2, x.shape.end());
    k = Shape(w.shape.begin() + 2, w.shape.end());
    for (size_t d = 0; d < sd; ++d) {
      const int64_t span = p.dilation[d] * (k[d] - 1) + 1;
      const int64_t size = (in[d] + 2 * p.padding[d] - span) / p.stride[d] + 1;
      if (size < 1) throw InterpError("convolution: the kernel does not fit the input");
      out.push_back(size);
    }
    in_numel = numel_of(in), k_numel = numel_of(k), out_numel = numel_of(out);
    source.reserve(static_cast<size_t>(out_numel * k_numel));
    for_each_index(out, [&](const Shape& op) {
      for_each_index(k, [&](const Shape& kp) {
        int64_t flat = 0;
        for (size_t d = 0; d < sd; ++d) {
          const int64_t i = op[d] * p.stride[d] + kp[d] * p.dilation[d] - p.padding[d];
          if (i < 0 || i >= in[d]) {
            flat = -1;
            break;
          }
          flat = flat * in[d] + i;
        }
        source.push_back(flat);
      });
    });
  }
  size_t x_at(int64_t b, int64_t ch, int64_t pos) const { return static_cast<size_t>((b * c + ch) * in_numel + pos); }
  size_t w_at(int64_t oc, int64_t ci, int64_t kp) const { return static_cast<size_t>((oc * cg + ci) * k_numel + kp); }
  size_t out_at(int64_t b, int64_t oc, int64_t op) const { return static_cast<size_t>((b * o + oc) * out_numel + op); }
  Shape out_shape() const {
    Shape s = {n, o};
    s.insert(s.end(), out.begin(), out.end());
    return s;
  }
};

}  // namespace

Tensor64 convolution(const Tensor64& x, const Tensor64& w, const std::optional<Tensor64>& bias, const ConvParams& p) {
  const Geometry g(x, w, p);
  if (bias && (bias->rank() != 1 || bias->shape[0] != g.o)) throw InterpError("convolution: bias must be [O]");
  Tensor64 out = Tensor64::filled(g.out_shape(), 0.0, x.dtype);
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t oc = 0; oc < g.o; ++oc) {
      const int64_t first = (oc / g.og) * g.cg;  // the group's first input channel
      for (int64_t op = 0; op < g.out_numel; ++op) {
        double acc = bias ? bias->data[static_cast<size_t>(oc)] : 0.0;
        const int64_t* src = g.source.data() + op * g.k_numel;
        for (int64_t ci = 0; ci < g.cg; ++ci)
          for (int64_t kp = 0; kp < g.k_numel; ++kp)
            if (src[kp] >= 0) acc += x.data[g.x_at(b, first + ci, src[kp])] * w.data[g.w_at(oc, ci, kp)];
        out.data[g.out_at(b, oc, op)] = acc;
      }
    }
  return out;
}

ConvGrads convolution_backward(const Tensor64& dout, const Tensor64& x, const Tensor64& w, const ConvParams& p) {
  const Geometry g(x, w, p);
  if (dout.shape != g.out_shape()) throw InterpError("convolution_backward: grad_output has the wrong shape");
  ConvGrads r{Tensor64::filled(x.shape, 0.0, x.dtype), Tensor64::filled(w.shape, 0.0, w.dtype),
              Tensor64::filled({g.o}, 0.0, dout.dtype)};
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t oc = 0; oc < g.o; ++oc) {
      const int64_t first = (oc / g.og) * g.cg;
      for (int64_t op = 0; op < g.out_numel; ++op) {
        const double go = dout.data[g.out_at(b, oc, op)];
        r.bias.data[static_cast<size_t>(oc)] += go;
        const int64_t* src = g.source.data() + op * g.k_numel;
        for (int64_t ci = 0; ci < g.cg; ++ci)
          for (int64_t kp = 0; kp < g.k_numel; ++kp) {
            if (src[kp] < 0) continue;
            r.input.data[g.x_at(b, first + ci, src[kp])] += go * w.data[g.w_at(oc, ci, kp)];
            r.weight.data[g.w_at(oc, ci, kp)] += go * x.data[g.x_at(b, first + ci, src[kp])];
          }
      }
    }
  return r;
}

}  // namespace sator::interp
