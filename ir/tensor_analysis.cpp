#include "ir/tensor_analysis.h"

#include "ir/infer_context.h"
#include "ir/op_table.h"

namespace sator {

TensorData recorded_type(const Node& n) {
  TensorData d;
  d.result = n.result;
  d.type.shape = n.tensor.shape;
  d.type.dtype = n.tensor.dtype;
  d.outputs = n.outputs;
  d.symint = n.symint;
  return d;
}

TensorData TensorAnalysis::make_data(const eg::EGraph& g, eg::Id node) {
  if (supplied_) {
    TensorData d = std::move(*supplied_);
    supplied_.reset();
    return d;
  }
  return infer(g, node);
}

// Runs the op's shape function on a two-level graph: one placeholder per
// child, holding the child class's type, then the node itself.
TensorData TensorAnalysis::infer(const eg::EGraph& g, eg::Id node) {
  const std::string& op = lang_.op_name(g.op(node));
  const OpInfo* info = find_op(op);
  if (!info || !info->shape_fn) throw std::logic_error("a rule built an opaque node (" + op + ")");
  Graph tmp;
  for (eg::Id child : g.children(node)) {
    const TensorData& d = data(g.find(child));
    Node p;
    p.name = "c" + std::to_string(tmp.nodes.size());
    p.op = "placeholder";
    p.result = d.result;
    p.tensor.shape = d.type.shape;
    p.tensor.dtype = d.type.dtype;
    p.outputs = d.outputs;
    p.symint = d.symint;
    tmp.nodes.push_back(std::move(p));
  }
  const NodeAttrs& a = lang_.attrs(g.attr(node));
  Node n;
  n.name = "n";
  n.op = op;
  n.args = a.args;  // child slots are the placeholders' indices
  n.kwargs = a.kwargs;
  tmp.nodes.push_back(std::move(n));
  InferContext ctx(tmp, tmp.nodes.back(), *info, prover_);
  const Inferred inf = info->shape_fn(ctx);
  TensorData d;
  d.result = inf.result;
  d.symint = inf.symint;
  if (inf.result == Node::Result::Tensor) {
    d.type.shape = inf.slots[0].shape;
    d.type.dtype = inf.slots[0].dtype;
  } else if (inf.result == Node::Result::Tuple) {
    for (const InferredSlot& s : inf.slots) {
      OutputSlot o;
      o.kind = static_cast<OutputSlot::Kind>(static_cast<int>(s.kind));
      o.tensor.shape = s.shape;
      o.tensor.dtype = s.dtype;
      if (s.kind == InferredSlot::Kind::Scalar) o.scalar = Value::of_sym(s.scalar);
      d.outputs.push_back(std::move(o));
    }
  }
  return d;
}

eg::DidMerge TensorAnalysis::merge_data(TensorData& into, TensorData from) {
  auto differ = [&]() -> std::string {
    if (into.result != from.result) return "one is a tensor and the other is not";
    if (into.result == Node::Result::Tensor) {
      if (into.type.dtype != from.type.dtype) return "dtypes differ";
      if (into.type.shape.size() != from.type.shape.size()) return "ranks differ";
      for (size_t i = 0; i < into.type.shape.size(); ++i)
        if (prover_.equal(into.type.shape[i], from.type.shape[i]) == Truth::False)
          return "shapes " + shape_text(into.type.shape) + " and " + shape_text(from.type.shape) + " differ";
    }
    if (into.result == Node::Result::SymInt && prover_.equal(into.symint, from.symint) == Truth::False)
      return "values differ";
    return {};
  };
  if (std::string why = differ(); !why.empty()) throw UnsoundMerge("a rule merged two classes whose " + why);
  return {false, false};
}

}  // namespace sator
