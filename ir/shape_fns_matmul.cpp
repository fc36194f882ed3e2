// Matrix products, convolution and the scaled-dot-product-attention family
// (shapes as in PyTorch's meta registrations, torch/_meta_registrations.py).
#include "ir/shape_fns.h"

namespace sator::shape_fns {

namespace {

void require_rank(InferContext& c, const TensorType& t, size_t rank, const char* what) {
  if (t.shape.size() != rank)
    c.fail(std::string(what) + " must have rank " + std::to_string(rank) + ", got " + shape_text(t.shape));
}

void require_same(InferContext& c, const SymExpr& a, const SymExpr& b, const std::string& what) {
  if (c.prover().equal(a, b) == Truth::False) c.fail(what + ": " + a.to_string() + " vs " + b.to_string());
}

void require_dtype(InferContext& c, const TensorType& a, const TensorType& b) {
  if (a.dtype != b.dtype)
    c.fail(std::string("expected both operands to have the same dtype, got ") + std::string(dtype_name(a.dtype)) +
           " and " + std::string(dtype_name(b.dtype)));
}

// Attention output: query's leading dims, value's last dim.
std::vector<SymExpr> attention_out_shape(InferContext& c) {
  const TensorType& q = c.tensor("query");
  const TensorType& k = c.tensor("key");
  const TensorType& v = c.tensor("value");
  if (q.shape.size() < 2 || k.shape.size() != q.shape.size() || v.shape.size() != q.shape.size())
    c.fail("query, key and value must have the same rank (at least 2)");
  require_same(c, q.shape.back(), k.shape.back(), "query and key head sizes differ");
  std::vector<SymExpr> out = q.shape;
  out.back() = v.shape.back();
  return out;
}

InferredSlot scalar_slot(SymExpr v) {
  InferredSlot s;
  s.kind = InferredSlot::Kind::Scalar;
  s.scalar = std::move(v);
  return s;
}

InferredSlot like(const TensorType& t) { return tensor_slot(t.shape, t.dtype); }

// An added operand (addmm's and baddbmm's self) broadcasts to the product's
// shape and no further: torch expands it to `out`, it does not grow `out`.
// Each of its dimensions is proved 1 or the product's.
void require_broadcasts_to(InferContext& c, const std::vector<SymExpr>& self, const std::vector<SymExpr>& out,
                           const std::string& what) {
  if (self.size() > out.size()) c.fail(what + ": self " + shape_text(self) + " has more dimensions than the product");
  const size_t lead = out.size() - self.size();
  for (size_t i = 0; i < self.size(); ++i)
    if (c.prover().equal(self[i], SymExpr(1)) != Truth::True && c.prover().equal(self[i], out[lead + i]) != Truth::True)
      c.fail(what + ": self " + shape_text(self) + " does not broadcast to the product's shape " + shape_text(out));
}

}  // namespace

Inferred mm(InferContext& c) {
  const TensorType& a = c.tensor("self");
  const TensorType& b = c.tensor("mat2");
  require_rank(c, a, 2, "mm: self");
  require_rank(c, b, 2, "mm: mat2");
  require_same(c, a.shape[1], b.shape[0], "mm: inner dimensions differ");
  require_dtype(c, a, b);
  return Inferred::tensor({a.shape[0], b.shape[1]}, a.dtype);
}

// [b, n, k] x [b, k, m] -> [b, n, m], for bmm and baddbmm (`op` names the
// operands in messages).
static std::vector<SymExpr> batched_product(InferContext& c, const TensorType& a, const TensorType& b, const std::string& op,
                                            const char* first, const char* second) {
  require_rank(c, a, 3, (op + ": " + first).c_str());
  require_rank(c, b, 3, (op + ": " + second).c_str());
  require_same(c, a.shape[0], b.shape[0], op + ": batch sizes differ");
  require_same(c, a.shape[2], b.shape[1], op + ": inner dimensions differ");
  require_dtype(c, a, b);
  return {a.shape[0], a.shape[1], b.shape[2]};
}

Inferred bmm(InferContext& c) {
  const TensorType& a = c.tensor("self");
  return Inferred::tensor(batched_product(c, a, c.tensor("mat2"), "bmm", "self", "mat2"), a.dtype);
}

Inferred addmm(InferContext& c) {
  const TensorType& a = c.tensor("mat1");
  const TensorType& b = c.tensor("mat2");
  require_rank(c, a, 2, "addmm: mat1");
  require_rank(c, b, 2, "addmm: mat2");
  require_same(c, a.shape[1], b.shape[0], "addmm: inner dimensions differ");
  require_dtype(c, a, b);
  std::vector<SymExpr> out = {a.shape[0], b.shape[1]};
  if (c.arg("self").is_node()) require_broadcasts_to(c, c.tensor("self").shape, out, "addmm");
  return Inferred::tensor(std::move(out), a.dtype);
}

// self * beta + (batch1 @ batch2) * alpha: [b, n, k] x [b, k, m], self
// broadcasting into [b, n, m].
Inferred baddbmm(InferContext& c) {
  const TensorType& a = c.tensor("batch1");
  std::vector<SymExpr> out = batched_product(c, a, c.tensor("batch2"), "baddbmm", "batch1", "batch2");
  require_dtype(c, a, c.tensor("self"));
  require_broadcasts_to(c, c.tensor("self").shape, out, "baddbmm");
  return Inferred::tensor(std::move(out), a.dtype);
}

// torch.matmul for operands of rank >= 2: batch dimensions broadcast.
Inferred matmul(InferContext& c) {
  const TensorType& a = c.tensor("self");
  const TensorType& b = c.tensor("other");
  if (a.shape.size() < 2 || b.shape.size() < 2) c.fail("matmul: sator handles operands of rank 2 and more");
  require_same(c, a.shape.back(), b.shape[b.shape.size() - 2], "matmul: inner dimensions differ");
  require_dtype(c, a, b);
  std::vector<SymExpr> batch = broadcast(c, std::vector<SymExpr>(a.shape.begin(), a.shape.end() - 2),
                                         std::vector<SymExpr>(b.shape.begin(), b.shape.end() - 2));
  batch.push_back(a.shape[a.shape.size() - 2]);
  batch.push_back(b.shape.back());
  return Inferred::tensor(std::move(batch), a.dtype);
}

// input [..., In] · weightᵀ [In, Out] (+ bias [Out]) -> [..., Out]
Inferred linear(InferContext& c) {
  const TensorType& x = c.tensor("input");
  const TensorType& w = c.tensor("weight");
  if (x.shape.empty()) c.fail("linear: input must have rank 1 or more");
  require_rank(c, w, 2, "linear: weight");
  require_same(c, x.shape.back(), w.shape[1], "linear: in_features differ");
  require_dtype(c, x, w);
  std::vector<SymExpr> out = x.shape;
  out.back() = w.shape[0];
  if (c.arg("bias").is_node()) broadcast(c, c.tensor("bias").shape, out);
  return Inferred::tensor(std::move(out), x.dtype);
}

Inferred convolution(InferContext& c) {
  const TensorType& input = c.tensor("input");
  const TensorType& weight = c.tensor("weight");
  const size_t spatial = input.shape.size() < 2 ? 0 : input.shape.size() - 2;
  if (spatial == 0 || weight.shape.size() != input.shape.size()) c.fail("convolution: input and weight ranks differ");
  auto expand_param = [&](const char* name) {
    std::vector<SymExpr> v = c.sym_list(name);
    if (v.size() == 1) v.assign(spatial, v[0]);
    if (v.size() != spatial) c.fail(std::string("convolution: ") + name + " has the wrong length");
    return v;
  };
  const auto stride = expand_param("stride"), padding = expand_param("padding"), dilation = expand_param("dilation");
  const bool transposed = c.bool_arg("transposed");
  const SymExpr groups = c.sym_arg("groups");
  std::vector<SymExpr> out = {input.shape[0], transposed ? weight.shape[1] * groups : weight.shape[0]};
  const auto output_padding = transposed ? expand_param("output_padding") : std::vector<SymExpr>(spatial, 0);
  for (size_t i = 0; i < spatial; ++i) {
    const SymExpr& in = input.shape[i + 2];
    const SymExpr& k = weight.shape[i + 2];
    if (transposed)
      out.push_back((in - 1) * stride[i] - padding[i] * 2 + dilation[i] * (k - 1) + output_padding[i] + 1);
    else
      out.push_back(SymExpr::floordiv(in + padding[i] * 2 - dilation[i] * (k - 1) - 1, stride[i]) + 1);
  }
  return Inferred::tensor(std::move(out), input.dtype);
}

Inferred convolution_backward(InferContext& c) {
  const std::vector<bool> mask = c.bool_list("output_mask");
  if (mask.size() != 3) c.fail("convolution_backward: output_mask must have 3 entries");
  const TensorType& input = c.tensor("input");
  const TensorType& weight = c.tensor("weight");
  std::vector<InferredSlot> slots(3);
  if (mask[0]) slots[0] = like(input);
  if (mask[1]) slots[1] = like(weight);
  if (mask[2]) {
    std::vector<SymExpr> bias = c.is_none("bias_sizes") ? std::vector<SymExpr>{weight.shape[0]} : c.sym_list("bias_sizes");
    slots[2] = tensor_slot(std::move(bias), c.tensor("grad_output").dtype);
  }
  return Inferred::tuple(std::move(slots));
}

Inferred sdpa(InferContext& c) {
  return Inferred::tensor(attention_out_shape(c), c.tensor("query").dtype);
}

Inferred sdpa_efficient(InferContext& c) {
  std::vector<SymExpr> out = attention_out_shape(c);
  const TensorType& q = c.tensor("query");
  if (q.shape.size() != 4) c.fail("efficient attention expects rank-4 query, key and value");
  // logsumexp is padded to a multiple of 32 rows, or empty when not requested.
  const SymExpr rows = c.bool_arg("compute_log_sumexp") ? SymExpr::floordiv(q.shape[2] + 31, 32) * 32 : SymExpr(0);
  return Inferred::tuple({tensor_slot(std::move(out), q.dtype), tensor_slot({q.shape[0], q.shape[1], rows}, DType::Float32),
                          tensor_slot({}, DType::Int64), tensor_slot({}, DType::Int64)});
}

Inferred sdpa_efficient_backward(InferContext& c) {
  const std::vector<bool> mask = c.bool_list("grad_input_mask");
  if (mask.size() != 4) c.fail("grad_input_mask must have 4 entries");
  std::vector<InferredSlot> slots = {like(c.tensor("query")), like(c.tensor("key")), like(c.tensor("value")), {}};
  if (mask[3] && c.arg("attn_bias").is_node()) slots[3] = like(c.tensor("attn_bias"));
  return Inferred::tuple(std::move(slots));
}

Inferred sdpa_cudnn(InferContext& c) {
  std::vector<SymExpr> out = attention_out_shape(c);
  const TensorType& q = c.tensor("query");
  const TensorType& k = c.tensor("key");
  if (q.shape.size() != 4) c.fail("cudnn attention expects rank-4 query, key and value");
  return Inferred::tuple({tensor_slot(std::move(out), q.dtype),
                          tensor_slot({q.shape[0], q.shape[1], q.shape[2], 1}, DType::Float32), {}, {},
                          scalar_slot(q.shape[2]), scalar_slot(k.shape[2]), tensor_slot({}, DType::Int64),
                          tensor_slot({}, DType::Int64), {}});
}

Inferred sdpa_cudnn_backward(InferContext& c) {
  return Inferred::tuple({like(c.tensor("query")), like(c.tensor("key")), like(c.tensor("value"))});
}

}  // namespace sator::shape_fns
