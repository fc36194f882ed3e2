// The interpreter's kernel for each op of the op table it evaluates: a thin
// binding of the op's schema arguments to the kernels of layout_kernels,
// math_kernels and matmul_kernels.
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>

#include "interp/attention_kernels.h"
#include "interp/layout_kernels.h"
#include "interp/matmul_kernels.h"
#include "interp/math_kernels.h"
#include "interp/op_args.h"
#include "interp/scatter_kernels.h"

namespace sator::interp {

namespace {

using K = EvalValue;
K T(Tensor64 t) { return K::of_tensor(std::move(t)); }
// The result in the node's dtype (integers truncated, bools 0/1).
K typed(const OpArgs& a, Tensor64 t) { return T(cast_to(std::move(t), a.result_dtype())); }

K unary(const OpArgs& a, double (*fn)(double)) {
  return typed(a, map(a.tensor("self"), fn, a.result_dtype()));
}
template <class Fn>
K binary(const OpArgs& a, std::string_view lhs, std::string_view rhs, Fn fn) {
  return typed(a, zip(a.tensor(lhs), a.tensor(rhs), fn, a.result_dtype()));
}
template <class Fn>
K compare(const OpArgs& a, Fn fn) {
  return binary(a, "self", "other", [fn](double x, double y) { return fn(x, y) ? 1.0 : 0.0; });
}

// add.Tensor / sub.Tensor: self ± alpha * other.
K add_scaled(const OpArgs& a, double sign) {
  const double alpha = sign * a.scalar("alpha");
  return binary(a, "self", "other", [alpha](double x, double y) { return x + alpha * y; });
}

std::vector<int64_t> dims_or_all(const OpArgs& a, std::string_view name) {
  return a.is_none(name) ? std::vector<int64_t>{} : a.sizes(name);
}

K var_mean(const OpArgs& a) {
  const Tensor64& x = a.tensor("self");
  const std::vector<int64_t> dims = dims_or_all(a, "dim");
  const bool keepdim = a.flag("keepdim");
  const double correction = a.is_none("correction") ? 1.0 : a.scalar("correction");
  const Tensor64 m = mean(x, dims, true);
  const Tensor64 sq = zip(x, m, [](double v, double mu) { return (v - mu) * (v - mu); }, x.dtype);
  Tensor64 var = sum(sq, dims, keepdim);
  const double count = static_cast<double>(x.numel()) / static_cast<double>(std::max<int64_t>(var.numel(), 1));
  for (double& v : var.data) v /= std::max(count - correction, 0.0);
  return K::of_tuple({T(var), T(mean(x, dims, keepdim))});
}

// The options every SDPA flavour shares; `mask` names its mask argument.
SdpaOptions sdpa_options(const OpArgs& a, std::string_view mask) {
  SdpaOptions o;
  o.attn_mask = a.optional_tensor(mask);
  o.is_causal = a.flag("is_causal");
  if (!a.is_none("scale")) o.scale = a.scalar("scale");
  o.dropout_p = a.scalar("dropout_p");
  if (o.dropout_p != 0.0 && a.uniform()) o.uniform = *a.uniform();
  return o;
}

K sdpa_op(const OpArgs& a) {
  SdpaOptions o = sdpa_options(a, "attn_mask");
  o.enable_gqa = a.flag("enable_gqa");
  return typed(a, sdpa(a.tensor("query"), a.tensor("key"), a.tensor("value"), o));
}

// A fused kernel's dropout draws, by the "seed" its forward returns, until
// its backward replays them (as the kernel regenerates its Philox mask).
// Per thread: `sator batch` evaluates graphs on several at once.
std::map<int64_t, Tensor64>& dropout_draws() {
  thread_local std::map<int64_t, Tensor64> draws;
  return draws;
}

// The fused kernels' forward: (output, logsumexp, seed, offset). With dropout
// the seed names the draws made, which the backward replays.
K sdpa_efficient_op(const OpArgs& a) {
  const SdpaOptions o = sdpa_options(a, "attn_bias");
  const Tensor64 &q = a.tensor("query"), &k = a.tensor("key");
  Tensor64 out = sdpa(q, k, a.tensor("value"), o);
  K seed{}, offset{};
  if (o.drawn) {
    thread_local int64_t next = 0;
    dropout_draws()[++next] = std::move(*o.drawn);
    seed = T(Tensor64::scalar(static_cast<double>(next), DType::Int64));
    offset = T(Tensor64::scalar(0.0, DType::Int64));
  }
  K lse{};
  if (a.flag("compute_log_sumexp")) {
    // [B, H, L] padded to a multiple of 32 rows, as the kernel stores it (padding +inf).
    Tensor64 rows = reshape(logsumexp_last(attention_scores(q, k, o)), {q.shape[0], q.shape[1], q.shape[2]});
    const int64_t L = q.shape[2], padded = (L + 31) / 32 * 32;
    Tensor64 stored = Tensor64::filled({q.shape[0], q.shape[1], padded}, std::numeric_limits<double>::infinity(), rows.dtype);
    for (int64_t bh = 0; bh < q.shape[0] * q.shape[1]; ++bh)
      for (int64_t i = 0; i < L; ++i)
        stored.data[static_cast<size_t>(bh * padded + i)] = rows.data[static_cast<size_t>(bh * L + i)];
    lse = T(std::move(stored));
  }
  return K::of_tuple({typed(a, std::move(out)), lse, seed, offset});
}

K sdpa_cudnn_op(const OpArgs& a) {
  const SdpaOptions o = sdpa_options(a, "attn_bias");
  const Tensor64 &q = a.tensor("query"), &k = a.tensor("key");
  Tensor64 out = sdpa(q, k, a.tensor("value"), o);
  K lse = a.flag("compute_log_sumexp") ? T(logsumexp_last(attention_scores(q, k, o))) : K{};
  return K::of_tuple({typed(a, std::move(out)), lse, K{}, K{}, K::of_number(static_cast<double>(q.shape[2])),
                      K::of_number(static_cast<double>(k.shape[2])), K{}, K{}, K{}});
}

// Backward of the fused kernels: (dq, dk, dv[, d_bias]).
K sdpa_backward_op(const OpArgs& a, const char* dout, const char* mask, bool bias_grad) {
  SdpaOptions o = sdpa_options(a, mask);
  if (o.dropout_p != 0.0) {
    const Tensor64& seed = a.tensor("philox_seed");
    const auto it = seed.data.empty() ? dropout_draws().end()
                                      : dropout_draws().find(static_cast<int64_t>(seed.data[0]));
    if (it == dropout_draws().end())
      throw InterpError("attention backward with dropout: no forward draws for its philox seed");
    o.replay = std::move(it->second);
    dropout_draws().erase(it);
    o.uniform = nullptr;
  }
  const Tensor64 &q = a.tensor("query"), &k = a.tensor("key"), &v = a.tensor("value");
  SdpaGrads g = sdpa_backward(a.tensor(dout), q, k, v, o);
  std::vector<K> items = {T(cast_to(std::move(g.dq), q.dtype)), T(cast_to(std::move(g.dk), k.dtype)),
                          T(cast_to(std::move(g.dv), v.dtype))};
  if (bias_grad) {
    if (o.attn_mask) {
      // Summed back over the dims the mask was broadcast along.
      const Tensor64& m = *o.attn_mask;
      items.push_back(T(cast_to(sum_to_shape(g.dscores, m.shape), m.dtype)));
    } else {
      items.push_back(K{});
    }
  }
  return K::of_tuple(std::move(items));
}

K index_tensor(const OpArgs& a) {
  // Advanced indexing with index tensors on leading dims (the corpus's form):
  // out[i..., rest...] = self[idx0[i...], idx1[i...], ..., rest...].
  const Tensor64& self = a.tensor("self");
  const auto indices = a.optional_tensor_list("indices");
  const size_t used = indices.size();  // leading dims indexed
  if (used > self.rank()) throw InterpError("more index tensors than dims");
  Shape ishape;
  for (const auto& idx : indices) {
    if (!idx) throw InterpError("index with None entries is not supported");
    ishape = broadcast_shapes(ishape, idx->shape);
  }
  std::vector<Tensor64> idx;
  for (const auto& i : indices) idx.push_back(broadcast_to(*i, ishape));
  Shape shape = ishape;
  shape.insert(shape.end(), self.shape.begin() + static_cast<std::ptrdiff_t>(used), self.shape.end());
  Tensor64 out = Tensor64::filled(shape, 0.0, self.dtype);
  size_t flat = 0;
  for_each_index(shape, [&](const Shape& i) {
    const Shape lead(i.begin(), i.begin() + static_cast<std::ptrdiff_t>(ishape.size()));
    Shape src;
    for (size_t d = 0; d < used; ++d) {
      auto v = static_cast<int64_t>(idx[d].at(lead));
      if (v < 0) v += self.shape[d];
      if (v < 0 || v >= self.shape[d]) throw InterpError("index out of range");
      src.push_back(v);
    }
    src.insert(src.end(), i.begin() + static_cast<std::ptrdiff_t>(ishape.size()), i.end());
    out.data[flat++] = self.at(src);
  });
  return T(out);
}

K gather_op(const OpArgs& a) {
  const Tensor64 &self = a.tensor("self"), &index = a.tensor("index");
  const size_t d = wrap_dim(a.integer("dim"), self.rank());
  Tensor64 out = Tensor64::filled(index.shape, 0.0, self.dtype);
  size_t flat = 0;
  for_each_index(index.shape, [&](const Shape& i) {
    Shape src = i;
    src[d] = static_cast<int64_t>(index.at(i));
    if (src[d] < 0 || src[d] >= self.shape[d]) throw InterpError("gather index out of range");
    out.data[flat++] = self.at(src);
  });
  return T(out);
}

K cumsum_op(const OpArgs& a) {
  Tensor64 x = a.tensor("self");
  const size_t d = wrap_dim(a.integer("dim"), x.rank());
  Tensor64 out = x;
  for_each_index(x.shape, [&](const Shape& i) {
    if (x.rank() == 0 || i[d] == 0) return;
    Shape prev = i;
    --prev[d];
    out.at(i) = out.at(prev) + x.at(i);
  });
  return typed(a, out);
}

K split_op(const OpArgs& a) {
  const Tensor64& x = a.tensor("self");
  const int64_t size = a.integer("split_size"), dim = a.integer("dim");
  const size_t d = wrap_dim(dim, x.rank());
  if (size <= 0) throw InterpError("split size must be positive");
  std::vector<K> parts;
  for (int64_t start = 0; start < std::max<int64_t>(x.shape[d], 1); start += size)
    parts.push_back(T(slice(x, dim, start, start + size, 1)));
  return K::of_tuple(std::move(parts));
}

double relu(double x) { return x > 0 ? x : 0.0; }
double rsqrt(double x) { return 1.0 / std::sqrt(x); }
double reciprocal(double x) { return 1.0 / x; }
double negate(double x) { return -x; }
double exp_(double x) { return std::exp(x); }
double erf_(double x) { return std::erf(x); }
double cos_(double x) { return std::cos(x); }
double sin_(double x) { return std::sin(x); }
double tanh_(double x) { return std::tanh(x); }
double log_(double x) { return std::log(x); }

const std::unordered_map<std::string_view, OpKernel>& kernels() {
  static const std::unordered_map<std::string_view, OpKernel> table = {
      // layout
      {"aten.view.default", [](const OpArgs& a) { return T(reshape(a.tensor("self"), a.sizes("size"))); }},
      {"aten._unsafe_view.default", [](const OpArgs& a) { return T(reshape(a.tensor("self"), a.sizes("size"))); }},
      {"aten.reshape.default", [](const OpArgs& a) { return T(reshape(a.tensor("self"), a.sizes("shape"))); }},
      {"aten.permute.default", [](const OpArgs& a) { return T(permute(a.tensor("self"), a.sizes("dims"))); }},
      {"aten.transpose.int", [](const OpArgs& a) {
         return T(transpose(a.tensor("self"), a.integer("dim0"), a.integer("dim1")));
       }},
      {"aten.t.default", [](const OpArgs& a) {
         const Tensor64& x = a.tensor("self");
         return T(x.rank() < 2 ? x : transpose(x, 0, 1));
       }},
      {"aten.expand.default", [](const OpArgs& a) { return T(expand(a.tensor("self"), a.sizes("size"))); }},
      {"aten.clone.default", [](const OpArgs& a) { return T(a.tensor("self")); }},
      {"aten.alias.default", [](const OpArgs& a) { return T(a.tensor("self")); }},
      {"aten.lift_fresh_copy.default", [](const OpArgs& a) { return T(a.tensor("self")); }},
      {"aten.unsqueeze.default", [](const OpArgs& a) { return T(unsqueeze(a.tensor("self"), a.integer("dim"))); }},
      {"aten.squeeze.dim", [](const OpArgs& a) { return T(squeeze_dim(a.tensor("self"), a.integer("dim"))); }},
      {"aten.slice.Tensor", [](const OpArgs& a) {
         const int64_t start = a.is_none("start") ? 0 : a.integer("start");
         const int64_t end = a.is_none("end") ? std::numeric_limits<int64_t>::max() : a.integer("end");
         return T(slice(a.tensor("self"), a.integer("dim"), start, end, a.integer("step")));
       }},
      {"aten.select.int", [](const OpArgs& a) {
         return T(select(a.tensor("self"), a.integer("dim"), a.integer("index")));
       }},
      {"aten.split.Tensor", split_op},
      {"aten.cat.default", [](const OpArgs& a) { return T(cat(a.tensor_list("tensors"), a.integer("dim"))); }},
      // pointwise
      {"aten.add.Tensor", [](const OpArgs& a) { return add_scaled(a, 1.0); }},
      {"aten.sub.Tensor", [](const OpArgs& a) { return add_scaled(a, -1.0); }},
      {"aten.mul.Tensor", [](const OpArgs& a) { return binary(a, "self", "other", std::multiplies<double>()); }},
      {"aten.mul.Scalar", [](const OpArgs& a) { return binary(a, "self", "other", std::multiplies<double>()); }},
      {"aten.div.Tensor", [](const OpArgs& a) { return binary(a, "self", "other", std::divides<double>()); }},
      {"aten.div.Scalar", [](const OpArgs& a) { return binary(a, "self", "other", std::divides<double>()); }},
      {"aten.eq.Scalar", [](const OpArgs& a) { return compare(a, std::equal_to<double>()); }},
      {"aten.eq.Tensor", [](const OpArgs& a) { return compare(a, std::equal_to<double>()); }},
      {"aten.ne.Scalar", [](const OpArgs& a) { return compare(a, std::not_equal_to<double>()); }},
      {"aten.ne.Tensor", [](const OpArgs& a) { return compare(a, std::not_equal_to<double>()); }},
      {"aten.gt.Scalar", [](const OpArgs& a) { return compare(a, std::greater<double>()); }},
      {"aten.gt.Tensor", [](const OpArgs& a) { return compare(a, std::greater<double>()); }},
      {"aten.ge.Scalar", [](const OpArgs& a) { return compare(a, std::greater_equal<double>()); }},
      {"aten.ge.Tensor", [](const OpArgs& a) { return compare(a, std::greater_equal<double>()); }},
      {"aten.lt.Scalar", [](const OpArgs& a) { return compare(a, std::less<double>()); }},
      {"aten.lt.Tensor", [](const OpArgs& a) { return compare(a, std::less<double>()); }},
      {"aten.le.Scalar", [](const OpArgs& a) { return compare(a, std::less_equal<double>()); }},
      {"aten.le.Tensor", [](const OpArgs& a) { return compare(a, std::less_equal<double>()); }},
      {"aten.logical_and.default", [](const OpArgs& a) {
         return compare(a, [](double x, double y) { return x != 0.0 && y != 0.0; });
       }},
      {"aten.bitwise_and.Tensor", [](const OpArgs& a) {
         return binary(a, "self", "other", [](double x, double y) {
           return static_cast<double>(static_cast<int64_t>(x) & static_cast<int64_t>(y));
         });
       }},
      // ~x: on booleans their negation, on integers the bit complement.
      {"aten.bitwise_not.default", [](const OpArgs& a) {
         const DType t = a.tensor("self").dtype;
         if (t == DType::Bool) return typed(a, map(a.tensor("self"), [](double x) { return x == 0.0 ? 1.0 : 0.0; }, t));
         return typed(a, map(a.tensor("self"), [](double x) { return static_cast<double>(~static_cast<int64_t>(x)); }, t));
       }},
      {"aten.logical_not.default", [](const OpArgs& a) {
         return typed(a, map(a.tensor("self"), [](double x) { return x == 0.0 ? 1.0 : 0.0; }, DType::Bool));
       }},
      {"aten.exp.default", [](const OpArgs& a) { return unary(a, exp_); }},
      {"aten.erf.default", [](const OpArgs& a) { return unary(a, erf_); }},
      {"aten.cos.default", [](const OpArgs& a) { return unary(a, cos_); }},
      {"aten.sin.default", [](const OpArgs& a) { return unary(a, sin_); }},
      {"aten.tanh.default", [](const OpArgs& a) { return unary(a, tanh_); }},
      {"aten.log.default", [](const OpArgs& a) { return unary(a, log_); }},
      {"aten.rsqrt.default", [](const OpArgs& a) { return unary(a, rsqrt); }},
      {"aten.reciprocal.default", [](const OpArgs& a) { return unary(a, reciprocal); }},
      {"aten.neg.default", [](const OpArgs& a) { return unary(a, negate); }},
      {"aten.relu.default", [](const OpArgs& a) { return unary(a, relu); }},
      {"aten.pow.Tensor_Scalar", [](const OpArgs& a) {
         const double e = a.scalar("exponent");
         return typed(a, map(a.tensor("self"), [e](double x) { return std::pow(x, e); }, a.result_dtype()));
       }},
      {"aten.where.self", [](const OpArgs& a) {
         return typed(a, where(a.tensor("condition"), a.tensor("self"), a.tensor("other"), a.result_dtype()));
       }},
      {"prims.fma.default", [](const OpArgs& a) {
         const Tensor64 p = zip(a.tensor("a"), a.tensor("b"), std::multiplies<double>(), a.result_dtype());
         return typed(a, zip(p, a.tensor("c"), std::plus<double>(), a.result_dtype()));
       }},
      {"prims.convert_element_type.default", [](const OpArgs& a) { return typed(a, a.tensor("a")); }},
      // reductions
      {"aten.amax.default", [](const OpArgs& a) {
         return T(amax(a.tensor("self"), a.sizes("dim"), a.flag("keepdim")));
       }},
      {"aten.sum.default", [](const OpArgs& a) { return typed(a, sum(a.tensor("self"), {}, false)); }},
      {"aten.sum.dim_IntList", [](const OpArgs& a) {
         return typed(a, sum(a.tensor("self"), dims_or_all(a, "dim"), a.flag("keepdim")));
       }},
      {"aten.mean.default", [](const OpArgs& a) { return typed(a, mean(a.tensor("self"), {}, false)); }},
      {"aten.mean.dim", [](const OpArgs& a) {
         return typed(a, mean(a.tensor("self"), dims_or_all(a, "dim"), a.flag("keepdim")));
       }},
      {"aten.var_mean.correction", var_mean},
      {"aten._softmax.default", [](const OpArgs& a) { return typed(a, softmax(a.tensor("self"), a.integer("dim"))); }},
      {"aten._safe_softmax.default", [](const OpArgs& a) {
         return typed(a, safe_softmax(a.tensor("self"), a.integer("dim")));
       }},
      {"aten.any.dim", [](const OpArgs& a) {
         const Tensor64 nonzero = map(a.tensor("self"), [](double x) { return x != 0.0 ? 1.0 : 0.0; }, DType::Bool);
         return typed(a, reduce(nonzero, {a.integer("dim")}, a.flag("keepdim"), 0.0,
                                [](double x, double y) { return std::max(x, y); }));
       }},
      {"aten.cumsum.default", cumsum_op},
      // matmul and attention
      {"aten.mm.default", [](const OpArgs& a) { return typed(a, mm(a.tensor("self"), a.tensor("mat2"))); }},
      {"aten.bmm.default", [](const OpArgs& a) { return typed(a, bmm(a.tensor("self"), a.tensor("mat2"))); }},
      {"aten.matmul.default", [](const OpArgs& a) { return typed(a, matmul(a.tensor("self"), a.tensor("other"))); }},
      {"aten.addmm.default", [](const OpArgs& a) {
         const double beta = a.scalar("beta"), alpha = a.scalar("alpha");
         const Tensor64 p = mm(a.tensor("mat1"), a.tensor("mat2"));
         return typed(a, zip(a.tensor("self"), p, [=](double s, double m) { return beta * s + alpha * m; },
                             a.result_dtype()));
       }},
      {"aten.baddbmm.default", [](const OpArgs& a) {
         const double beta = a.scalar("beta"), alpha = a.scalar("alpha");
         const Tensor64 p = bmm(a.tensor("batch1"), a.tensor("batch2"));
         return typed(a, zip(a.tensor("self"), p, [=](double s, double m) { return beta * s + alpha * m; },
                             a.result_dtype()));
       }},
      {"aten.linear.default", [](const OpArgs& a) {
         Tensor64 out = linear_product(a.tensor("input"), a.tensor("weight"));
         if (auto bias = a.optional_tensor("bias")) out = zip(out, *bias, std::plus<double>(), out.dtype);
         return typed(a, out);
       }},
      {"aten.scaled_dot_product_attention.default", sdpa_op},
      {"aten._scaled_dot_product_efficient_attention.default", sdpa_efficient_op},
      {"aten._scaled_dot_product_cudnn_attention.default", sdpa_cudnn_op},
      {"aten._scaled_dot_product_efficient_attention_backward.default", [](const OpArgs& a) {
         const std::vector<bool> mask = a.bools("grad_input_mask");
         return sdpa_backward_op(a, "grad_out_", "attn_bias", mask.size() > 3 && mask[3]);
       }},
      {"aten._scaled_dot_product_cudnn_attention_backward.default", [](const OpArgs& a) {
         return sdpa_backward_op(a, "grad_out", "attn_bias", false);
       }},
      // creation and lookup
      {"aten.rand.default", [](const OpArgs& a) {
         if (!a.uniform()) throw InterpError("a random op: random draws are not allowed in this run");
         return typed(a, (*a.uniform())(a.sizes("size")));
       }},
      {"aten.full.default", [](const OpArgs& a) {
         return typed(a, Tensor64::filled(a.sizes("size"), a.scalar("fill_value")));
       }},
      {"aten.scalar_tensor.default", [](const OpArgs& a) { return typed(a, Tensor64::scalar(a.scalar("s"))); }},
      {"prims.iota.default", [](const OpArgs& a) {
         const int64_t start = a.integer("start"), step = a.integer("step");
         Tensor64 t = Tensor64::arange({a.integer("length")});
         for (double& x : t.data) x = static_cast<double>(start) + x * static_cast<double>(step);
         return typed(a, t);
       }},
      {"aten.embedding.default", [](const OpArgs& a) {
         const Tensor64 &w = a.tensor("weight"), &idx = a.tensor("indices");
         Shape shape = idx.shape;
         shape.push_back(w.shape.at(1));
         Tensor64 out = Tensor64::filled(shape, 0.0, w.dtype);
         for (size_t i = 0; i < idx.data.size(); ++i) {
           const auto row = static_cast<int64_t>(idx.data[i]);
           if (row < 0 || row >= w.shape[0]) throw InterpError("embedding index out of range");
           for (int64_t j = 0; j < w.shape[1]; ++j)
             out.data[i * static_cast<size_t>(w.shape[1]) + static_cast<size_t>(j)] = w.at({row, j});
         }
         return T(out);
       }},
      {"aten.gather.default", gather_op},
      {"aten.constant_pad_nd.default", constant_pad_nd_op},
      {"aten.slice_scatter.default", slice_scatter_op},
      {"aten.index_put.default", index_put_op},
      {"aten.scatter.value", scatter_value_op},
      {"aten.select_scatter.default", select_scatter_op},
      {"aten.convolution.default", convolution_op},
      {"aten.convolution_backward.default", convolution_backward_op},
      {"aten.index.Tensor", index_tensor},
  };
  return table;
}

}  // namespace

OpKernel find_kernel(std::string_view op) {
  const auto it = kernels().find(op);
  return it == kernels().end() ? nullptr : it->second;
}

}  // namespace sator::interp
