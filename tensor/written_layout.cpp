#include "tensor/written_layout.h"

#include <string_view>

namespace sator {

bool is_contiguous(const std::vector<SymExpr>& shape, const std::vector<SymExpr>& strides) {
  if (strides.size() != shape.size()) return false;
  SymExpr expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == SymExpr(1)) continue;
    if (shape[i] == SymExpr(0)) return true;
    if (!(strides[i] == expected)) return false;
    expected = expected * shape[i];
  }
  return true;
}

namespace {

// A dim argument wrapped into [0, rank); nullopt if it is not an int in range.
std::optional<size_t> dim_arg(const Node& n, size_t index, size_t rank) {
  if (n.args.size() <= index || n.args[index].kind != Value::Kind::Int) return std::nullopt;
  int64_t d = n.args[index].i;
  if (d < 0) d += static_cast<int64_t>(rank);
  if (d < 0 || d >= static_cast<int64_t>(rank)) return std::nullopt;
  return static_cast<size_t>(d);
}

// Strides of `in` without the size-1 dims `drop` says to drop.
template <class Drop>
std::vector<SymExpr> squeezed(const TensorType& in, Drop drop) {
  std::vector<SymExpr> out;
  for (size_t i = 0; i < in.shape.size(); ++i)
    if (!(in.shape[i] == SymExpr(1) && drop(i))) out.push_back(in.stride[i]);
  return out;
}

}  // namespace

std::optional<std::vector<SymExpr>> layout_op_strides(const Node& node, const Node& in) {
  if (in.result != Node::Result::Tensor || node.result != Node::Result::Tensor) return std::nullopt;
  const TensorType& t = in.tensor;
  if (t.stride.size() != t.shape.size()) return std::nullopt;
  const size_t rank = t.shape.size();
  const std::string_view op = node.op;
  std::optional<std::vector<SymExpr>> out;
  if (op == "aten.alias.default") {
    out = t.stride;
  } else if (op == "aten.permute.default") {
    if (node.args.size() < 2 || !node.args[1].is_list() || node.args[1].list.size() != rank) return std::nullopt;
    out.emplace();
    for (const Value& v : node.args[1].list) {
      if (v.kind != Value::Kind::Int) return std::nullopt;
      const int64_t d = v.i < 0 ? v.i + static_cast<int64_t>(rank) : v.i;
      if (d < 0 || d >= static_cast<int64_t>(rank)) return std::nullopt;
      out->push_back(t.stride[static_cast<size_t>(d)]);
    }
  } else if (op == "aten.transpose.int" || op == "aten.t.default") {
    out = t.stride;
    if (op == "aten.t.default") {
      if (rank == 2) std::swap((*out)[0], (*out)[1]);
    } else {
      const auto a = dim_arg(node, 1, rank), b = dim_arg(node, 2, rank);
      if (!a || !b) return std::nullopt;
      std::swap((*out)[*a], (*out)[*b]);
    }
  } else if (op == "aten.expand.default") {
    // Aligned to the right; a new leading dim and a size-1 dim broadcast
    // to another size read one element over and over: stride 0.
    const std::vector<SymExpr>& shape = node.tensor.shape;
    if (shape.size() < rank) return std::nullopt;
    const size_t lead = shape.size() - rank;
    out.emplace(shape.size(), SymExpr(0));
    for (size_t i = 0; i < rank; ++i)
      (*out)[lead + i] = t.shape[i] == shape[lead + i] ? t.stride[i] : SymExpr(0);
  } else if (op == "aten.unsqueeze.default") {
    const auto d = dim_arg(node, 1, rank + 1);
    if (!d) return std::nullopt;
    out = t.stride;
    // PyTorch's inferUnsqueezeGeometry: the new dim's stride spans the next dim.
    const SymExpr s = *d < rank ? t.shape[*d] * t.stride[*d] : SymExpr(1);
    out->insert(out->begin() + static_cast<std::ptrdiff_t>(*d), s);
  } else if (op == "aten.squeeze.default") {
    out = squeezed(t, [](size_t) { return true; });
  } else if (op == "aten.squeeze.dim") {
    const auto d = dim_arg(node, 1, rank);
    if (!d) return std::nullopt;
    out = squeezed(t, [&](size_t i) { return i == *d; });
  } else if (op == "aten.squeeze.dims") {
    if (node.args.size() < 2 || !node.args[1].is_list()) return std::nullopt;
    std::vector<bool> drop(rank, false);
    for (const Value& v : node.args[1].list) {
      if (v.kind != Value::Kind::Int) return std::nullopt;
      const int64_t d = v.i < 0 ? v.i + static_cast<int64_t>(rank) : v.i;
      if (d < 0 || d >= static_cast<int64_t>(rank)) return std::nullopt;
      drop[static_cast<size_t>(d)] = true;
    }
    out = squeezed(t, [&](size_t i) { return drop[i]; });
  } else if (op == "aten.slice.Tensor") {
    const auto d = node.args.size() > 1 ? dim_arg(node, 1, rank) : std::optional<size_t>(0);
    if (!d) return std::nullopt;
    int64_t step = 1;
    if (node.args.size() > 4) {
      if (node.args[4].kind != Value::Kind::Int) return std::nullopt;
      step = node.args[4].i;
    }
    out = t.stride;
    (*out)[*d] = (*out)[*d] * SymExpr(step);
  } else if (op == "aten.select.int") {
    const auto d = dim_arg(node, 1, rank);
    if (!d) return std::nullopt;
    out = t.stride;
    out->erase(out->begin() + static_cast<std::ptrdiff_t>(*d));
  }
  if (out && out->size() != node.tensor.shape.size()) return std::nullopt;
  return out;
}

std::optional<std::vector<std::vector<SymExpr>>> view_pieces_strides(const Node& node, const Node& in) {
  if (in.result != Node::Result::Tensor || node.result != Node::Result::Tuple) return std::nullopt;
  const TensorType& t = in.tensor;
  if (t.stride.size() != t.shape.size()) return std::nullopt;
  const std::string_view op = node.op;
  std::vector<SymExpr> piece = t.stride;  // split's pieces: the input's strides, a shorter span
  if (op == "aten.unbind.int") {
    const auto d = node.args.size() > 1 ? dim_arg(node, 1, t.shape.size()) : std::optional<size_t>(0);
    if (!d) return std::nullopt;
    piece.erase(piece.begin() + static_cast<std::ptrdiff_t>(*d));
  } else if (op != "aten.split.Tensor" && op != "aten.split_with_sizes.default" && op != "aten.chunk.default") {
    return std::nullopt;
  }
  std::vector<std::vector<SymExpr>> out;
  for (const OutputSlot& s : node.outputs) {
    if (s.kind != OutputSlot::Kind::Tensor || s.tensor.shape.size() != piece.size()) return std::nullopt;
    out.push_back(piece);
  }
  return out;
}

}  // namespace sator
