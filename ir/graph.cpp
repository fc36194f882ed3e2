#include "ir/graph.h"

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

}  // namespace sator
