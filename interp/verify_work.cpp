#include "interp/verify_work.h"

#include <algorithm>
#include <optional>
#include <string>

#include "interp/tensor64.h"
#include "ir/op_table.h"

namespace sator::interp {

namespace {

int64_t concrete(const Graph& g, const SymExpr& d, const SymbolValues& symbols) {
  const auto v = d.evaluate([&](const std::string& name) -> std::optional<int64_t> {
    if (auto it = symbols.find(name); it != symbols.end()) return it->second;
    const Symbol* s = g.find_symbol(name);
    return s ? std::optional<int64_t>(s->hint) : std::nullopt;
  });
  return std::max<int64_t>(v.value_or(1), 0);
}

int64_t numel(const Graph& g, const std::vector<SymExpr>& shape, const SymbolValues& symbols) {
  int64_t e = 1;
  for (const SymExpr& d : shape) e = checked_mul(e, concrete(g, d, symbols));
  return e;
}

// The tensor type of argument `k` of n, if it is a node with one.
const TensorType* arg_type(const Graph& g, const Node& n, size_t k) {
  return k < n.args.size() && n.args[k].is_node() ? tensor_of(g, n.args[k].node) : nullptr;
}

}  // namespace

int64_t graph_elements(const Graph& g, const SymbolValues& symbols) {
  int64_t total = 0;
  for (const Node& n : g.nodes) {
    if (n.result == Node::Result::Tensor) total = checked_add(total, numel(g, n.tensor.shape, symbols));
    for (const OutputSlot& o : n.outputs)
      if (o.kind == OutputSlot::Kind::Tensor) total = checked_add(total, numel(g, o.tensor.shape, symbols));
  }
  return total;
}

double graph_products(const Graph& g, const SymbolValues& symbols) {
  double total = 0;
  for (const Node& n : g.nodes) {
    const OpInfo* info = find_op(n.op);
    const bool conv = n.op.find("convolution") != std::string::npos;
    if (!conv && (!info || (info->cls != OpClass::Matmul && info->cls != OpClass::Attention))) continue;
    // The result's elements (a tuple's first tensor: attention's output).
    const TensorType* out = n.result == Node::Result::Tensor ? &n.tensor : nullptr;
    for (const OutputSlot& o : n.outputs)
      if (!out && o.kind == OutputSlot::Kind::Tensor) out = &o.tensor;
    if (!out || out->shape.empty()) continue;
    const double elements = static_cast<double>(numel(g, out->shape, symbols));
    if (conv) {  // each output element: in_channels / groups x the kernel's size
      const TensorType* w = arg_type(g, n, 1);
      if (w && !w->shape.empty())
        total += elements * static_cast<double>(numel(g, w->shape, symbols)) /
                 static_cast<double>(std::max<int64_t>(concrete(g, w->shape[0], symbols), 1));
      continue;
    }
    if (info->cls == OpClass::Attention) {  // q k^T and p v: 2 x S per output element (backward ~2.5x)
      const TensorType* k = arg_type(g, n, 1);
      const double s = k && k->shape.size() >= 2 ? static_cast<double>(concrete(g, k->shape[k->shape.size() - 2], symbols)) : 1;
      total += elements * 2 * s * (n.op.find("backward") != std::string::npos ? 2.5 : 1.0);
      continue;
    }
    // A product: each output element sums over the first matrix operand's
    // last dim (addmm / baddbmm: the operand after the added one).
    const bool added = n.op.find("addmm") != std::string::npos || n.op.find("baddbmm") != std::string::npos;
    const TensorType* a = arg_type(g, n, added ? 1 : 0);
    if (a && !a->shape.empty()) total += elements * static_cast<double>(concrete(g, a->shape.back(), symbols));
  }
  return total;
}

}  // namespace sator::interp
