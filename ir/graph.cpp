#include "ir/graph.h"

#include <algorithm>
#include <numeric>

namespace sator {

std::string_view role_name(Role r) {
  switch (r) {
    case Role::Primal: return "primal";
    case Role::Tangent: return "tangent";
    case Role::Input: return "input";
    case Role::None: break;
  }
  return "";
}

std::optional<Value> graph_device(const Graph& g) {
  for (const Node& n : g.nodes)
    if (const Value* d = n.kwarg("device"); d && d->kind == Value::Kind::Device) return *d;
  return std::nullopt;
}

const Value* Node::kwarg(std::string_view key) const {
  for (const auto& [k, v] : kwargs)
    if (k == key) return &v;
  return nullptr;
}

const Symbol* Graph::find_symbol(std::string_view n) const {
  for (const Symbol& s : symbols)
    if (s.name == n) return &s;
  return nullptr;
}

std::optional<NodeId> Graph::find_node(std::string_view n) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == n) return static_cast<NodeId>(i);
  return std::nullopt;
}

const TensorType* tensor_of(const Graph& g, NodeId id, std::optional<size_t> index) {
  if (id >= g.nodes.size()) return nullptr;
  const Node& n = g.nodes[id];
  if (!index) return n.result == Node::Result::Tensor ? &n.tensor : nullptr;
  if (n.result != Node::Result::Tuple || *index >= n.outputs.size()) return nullptr;
  const OutputSlot& slot = n.outputs[*index];
  return slot.kind == OutputSlot::Kind::Tensor ? &slot.tensor : nullptr;
}

std::string shape_text(const std::vector<SymExpr>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i].to_string();
  }
  return s + "]";
}

std::vector<SymExpr> contiguous_strides(const std::vector<SymExpr>& shape) {
  std::vector<SymExpr> stride(shape.size());
  SymExpr run = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    stride[i] = run;
    run = run * shape[i];
  }
  return stride;
}

std::optional<std::vector<int64_t>> view_strides(const std::vector<int64_t>& shape, const std::vector<int64_t>& stride,
                                                 const std::vector<int64_t>& new_shape) {
  std::vector<int64_t> out(new_shape.size(), 1);
  if (shape.empty()) return out;
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  if (numel == 0) {
    int64_t run = 1;  // an empty tensor views to anything: contiguous strides
    for (size_t i = new_shape.size(); i-- > 0;) {
      out[i] = run;
      run *= std::max<int64_t>(new_shape[i], 1);
    }
    return out;
  }
  // Walk the old dims from the innermost, in chunks that are contiguous
  // within themselves; each chunk's new dims take strides from its base.
  int64_t view_d = static_cast<int64_t>(new_shape.size()) - 1;
  int64_t base = stride.back(), tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    tensor_numel *= shape[static_cast<size_t>(d)];
    const bool chunk_ends = d == 0 || (shape[static_cast<size_t>(d - 1)] != 1 &&
                                       stride[static_cast<size_t>(d - 1)] != tensor_numel * base);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || new_shape[static_cast<size_t>(view_d)] == 1)) {
      out[static_cast<size_t>(view_d)] = view_numel * base;
      view_numel *= new_shape[static_cast<size_t>(view_d)];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (d > 0) {
      base = stride[static_cast<size_t>(d - 1)];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

int64_t at_hints(const Graph& g, const SymExpr& e) {
  if (e.is_constant()) return e.constant();  // most sizes: no std::function, no lookup
  const auto v = e.evaluate([&](const std::string& name) -> std::optional<int64_t> {
    const Symbol* s = g.find_symbol(name);
    return s ? std::optional<int64_t>(s->hint) : std::nullopt;
  });
  return v.value_or(1);
}

std::vector<SymExpr> clone_strides(const Graph& g, const TensorType& t) {
  const size_t r = t.shape.size();
  if (t.stride.size() != r) return contiguous_strides(t.shape);
  // Dims from the innermost (least stride) out; dims of size 1 anywhere.
  std::vector<size_t> order(r);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return at_hints(g, t.stride[a]) < at_hints(g, t.stride[b]) ||
           (at_hints(g, t.stride[a]) == at_hints(g, t.stride[b]) && a > b);
  });
  std::vector<SymExpr> dense(r);
  SymExpr run = 1;
  for (size_t d : order) {
    dense[d] = run;
    run = run * t.shape[d];
  }
  return dense;
}

}  // namespace sator
