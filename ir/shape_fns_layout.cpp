// Layout ops (view, permute, expand, ...) and the structural ops that move
// data without arithmetic (slice, split, cat, pad, scatters).
#include <algorithm>

#include "ir/shape_fns.h"

namespace sator::shape_fns {

namespace {

// Slice bounds this large mean "to the end" (PyTorch writes sys.maxsize).
constexpr int64_t kToTheEnd = int64_t{1} << 62;

bool is_minus_one(const SymExpr& e) { return e == SymExpr(-1); }

// PyTorch's clamping of a slice bound into [0, size].
SymExpr clamp_bound(InferContext& c, SymExpr x, const SymExpr& size) {
  if (auto k = x.as_constant()) {
    if (*k >= kToTheEnd) return size;
    if (*k < 0) x = x + size;
  }
  if (c.prover().less_equal(SymExpr(0), x) == Truth::False) return 0;
  if (c.prover().is_le(x, size)) return x;
  if (c.prover().less_equal(x, size) == Truth::False) return size;
  return SymExpr::min(x, size);
}

std::vector<InferredSlot> split_slots(InferContext& c, const TensorType& t, size_t dim, const SymExpr& split_size) {
  const SymExpr& size = t.shape[dim];
  auto total = size.as_constant();
  auto step = split_size.as_constant();
  std::vector<InferredSlot> slots;
  if (total && step) {
    if (*step <= 0) c.fail("split size must be positive, got " + std::to_string(*step));
    const int64_t n = std::max<int64_t>(1, (*total + *step - 1) / *step);
    for (int64_t i = 0; i < n; ++i) {
      std::vector<SymExpr> shape = t.shape;
      shape[dim] = std::min(*step, *total - i * *step);
      slots.push_back(tensor_slot(std::move(shape), t.dtype));
    }
    return slots;
  }
  // Symbolic: the number of pieces must still be a constant.
  auto pieces = size.exact_div(split_size);
  if (!pieces || !pieces->as_constant())
    c.fail("cannot split a dimension of size " + size.to_string() + " into pieces of " + split_size.to_string() +
           ": the number of pieces is not a constant");
  for (int64_t i = 0; i < *pieces->as_constant(); ++i) {
    std::vector<SymExpr> shape = t.shape;
    shape[dim] = split_size;
    slots.push_back(tensor_slot(std::move(shape), t.dtype));
  }
  return slots;
}

}  // namespace

SymExpr numel(const std::vector<SymExpr>& shape) {
  SymExpr n = 1;
  for (const SymExpr& d : shape) n = n * d;
  return n;
}

Inferred view(InferContext& c) {
  const TensorType& self = c.tensor("self");
  const bool reshape = c.node().op == "aten.reshape.default";
  std::vector<SymExpr> size = c.sym_list(reshape ? "shape" : "size");
  int inferred = -1;
  SymExpr known = 1;
  for (size_t i = 0; i < size.size(); ++i) {
    if (is_minus_one(size[i])) {
      if (inferred >= 0) c.fail("only one dimension can be -1");
      inferred = static_cast<int>(i);
      continue;
    }
    if (auto k = size[i].as_constant(); k && *k < 0) c.fail("invalid size " + std::to_string(*k));
    known = known * size[i];
  }
  const SymExpr total = numel(self.shape);
  if (inferred >= 0) {
    auto q = total.exact_div(known);
    if (!q) c.fail("cannot infer the -1 in " + shape_text(size) + " from " + total.to_string() + " elements");
    size[inferred] = *q;
  } else if (c.prover().equal(total, known) == Truth::False) {
    c.fail("shape " + shape_text(size) + " is invalid for input of shape " + shape_text(self.shape));
  }
  return Inferred::tensor(std::move(size), self.dtype);
}

Inferred permute(InferContext& c) {
  const TensorType& self = c.tensor("self");
  std::vector<int64_t> dims = c.int_list("dims");
  if (dims.size() != self.shape.size())
    c.fail("permute of a rank-" + std::to_string(self.shape.size()) + " tensor needs that many dims, got " +
           std::to_string(dims.size()));
  std::vector<bool> used(dims.size(), false);
  std::vector<SymExpr> shape;
  for (int64_t d : dims) {
    size_t w = c.wrap_dim(d, self.shape.size());
    if (used[w]) c.fail("permute repeats dimension " + std::to_string(d));
    used[w] = true;
    shape.push_back(self.shape[w]);
  }
  return Inferred::tensor(std::move(shape), self.dtype);
}

Inferred transpose(InferContext& c) {
  const TensorType& self = c.tensor("self");
  std::vector<SymExpr> shape = self.shape;
  if (shape.empty()) return Inferred::tensor(shape, self.dtype);
  std::swap(shape[c.wrap_dim(c.int_arg("dim0"), shape.size())], shape[c.wrap_dim(c.int_arg("dim1"), shape.size())]);
  return Inferred::tensor(std::move(shape), self.dtype);
}

Inferred t(InferContext& c) {
  const TensorType& self = c.tensor("self");
  if (self.shape.size() > 2) c.fail("t() expects a tensor of rank <= 2");
  std::vector<SymExpr> shape = self.shape;
  std::reverse(shape.begin(), shape.end());
  return Inferred::tensor(std::move(shape), self.dtype);
}

Inferred expand(InferContext& c) {
  const TensorType& self = c.tensor("self");
  std::vector<SymExpr> size = c.sym_list("size");
  if (size.size() < self.shape.size())
    c.fail("expand to " + shape_text(size) + " has fewer dimensions than the input " + shape_text(self.shape));
  const size_t lead = size.size() - self.shape.size();
  for (size_t i = 0; i < size.size(); ++i) {
    if (i < lead) {
      if (is_minus_one(size[i])) c.fail("expand: -1 is not allowed in a new leading dimension");
      continue;
    }
    const SymExpr& in = self.shape[i - lead];
    if (is_minus_one(size[i])) {
      size[i] = in;
    } else if (in != SymExpr(1) && c.prover().equal(in, size[i]) == Truth::False) {
      c.fail("expand: size " + in.to_string() + " of dimension " + std::to_string(i - lead) + " cannot become " +
             size[i].to_string());
    }
  }
  return Inferred::tensor(std::move(size), self.dtype);
}

Inferred identity(InferContext& c) {
  const TensorType& self = c.tensor("self");
  return Inferred::tensor(self.shape, self.dtype);
}

Inferred unsqueeze(InferContext& c) {
  const TensorType& self = c.tensor("self");
  std::vector<SymExpr> shape = self.shape;
  shape.insert(shape.begin() + static_cast<long>(c.wrap_dim(c.int_arg("dim"), shape.size() + 1)), SymExpr(1));
  return Inferred::tensor(std::move(shape), self.dtype);
}

Inferred squeeze_dim(InferContext& c) {
  const TensorType& self = c.tensor("self");
  std::vector<SymExpr> shape = self.shape;
  if (shape.empty()) return Inferred::tensor(shape, self.dtype);
  const size_t d = c.wrap_dim(c.int_arg("dim"), shape.size());
  if (c.prover().is_equal(shape[d], 1)) shape.erase(shape.begin() + static_cast<long>(d));
  return Inferred::tensor(std::move(shape), self.dtype);
}

Inferred slice(InferContext& c) {
  const TensorType& self = c.tensor("self");
  if (self.shape.empty()) c.fail("slice() cannot be applied to a 0-dim tensor");
  std::vector<SymExpr> shape = self.shape;
  const size_t d = c.wrap_dim(c.int_arg("dim"), shape.size());
  const SymExpr step = c.sym_arg("step");
  if (auto k = step.as_constant(); !k || *k <= 0) c.fail("slice step must be a positive constant");
  const SymExpr start = clamp_bound(c, c.is_none("start") ? SymExpr(0) : c.sym_arg("start"), shape[d]);
  const SymExpr end = clamp_bound(c, c.is_none("end") ? SymExpr(kToTheEnd) : c.sym_arg("end"), shape[d]);
  SymExpr len = SymExpr::floordiv(end - start + step - 1, step);
  if (auto k = len.as_constant(); k && *k < 0) len = 0;
  shape[d] = len;
  return Inferred::tensor(std::move(shape), self.dtype);
}

Inferred select(InferContext& c) {
  const TensorType& self = c.tensor("self");
  if (self.shape.empty()) c.fail("select() cannot be applied to a 0-dim tensor");
  std::vector<SymExpr> shape = self.shape;
  shape.erase(shape.begin() + static_cast<long>(c.wrap_dim(c.int_arg("dim"), shape.size())));
  return Inferred::tensor(std::move(shape), self.dtype);
}

Inferred split(InferContext& c) {
  const TensorType& self = c.tensor("self");
  if (self.shape.empty()) c.fail("split() cannot be applied to a 0-dim tensor");
  const size_t d = c.wrap_dim(c.int_arg("dim"), self.shape.size());
  return Inferred::tuple(split_slots(c, self, d, c.sym_arg("split_size")));
}

Inferred chunk(InferContext& c) {
  const TensorType& self = c.tensor("self");
  if (self.shape.empty()) c.fail("chunk() cannot be applied to a 0-dim tensor");
  const size_t d = c.wrap_dim(c.int_arg("dim"), self.shape.size());
  const int64_t chunks = c.int_arg("chunks");
  if (chunks <= 0) c.fail("chunk expects a positive number of chunks");
  const SymExpr split_size = SymExpr::floordiv(self.shape[d] + SymExpr(chunks - 1), chunks);
  return Inferred::tuple(split_slots(c, self, d, split_size));
}

Inferred cat(InferContext& c) {
  std::vector<const TensorType*> parts;
  for (const TensorType* t : c.tensor_list("tensors"))
    // PyTorch still skips legacy empty 1-D tensors of shape [0].
    if (!(t->shape.size() == 1 && t->shape[0] == SymExpr(0))) parts.push_back(t);
  if (parts.empty()) c.fail("cat() needs at least one non-empty tensor");
  std::vector<SymExpr> shape = parts[0]->shape;
  if (shape.empty()) c.fail("cat() cannot concatenate 0-dim tensors");
  const size_t d = c.wrap_dim(c.int_arg("dim"), shape.size());
  DType dtype = parts[0]->dtype;
  for (size_t i = 1; i < parts.size(); ++i) {
    const TensorType& t = *parts[i];
    if (t.shape.size() != shape.size()) c.fail("cat() tensors must have the same rank");
    for (size_t k = 0; k < shape.size(); ++k) {
      if (k == d) continue;
      if (c.prover().equal(t.shape[k], shape[k]) == Truth::False)
        c.fail("cat() sizes differ in dimension " + std::to_string(k) + ": " + shape_text(shape) + " vs " +
               shape_text(t.shape));
    }
    shape[d] = shape[d] + t.shape[d];
    dtype = promote_types(dtype, t.dtype);
  }
  return Inferred::tensor(std::move(shape), dtype);
}

Inferred constant_pad_nd(InferContext& c) {
  const TensorType& self = c.tensor("self");
  std::vector<SymExpr> pad = c.sym_list("pad");
  if (pad.size() % 2 != 0 || pad.size() / 2 > self.shape.size())
    c.fail("padding length must be even and at most twice the rank");
  std::vector<SymExpr> shape = self.shape;
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    SymExpr& dim = shape[shape.size() - 1 - i];
    dim = dim + pad[2 * i] + pad[2 * i + 1];
  }
  return Inferred::tensor(std::move(shape), self.dtype);
}

Inferred scatter_like(InferContext& c) {
  const TensorType& self = c.tensor("self");
  return Inferred::tensor(self.shape, self.dtype);
}

}  // namespace sator::shape_fns
