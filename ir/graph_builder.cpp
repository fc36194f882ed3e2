#include "ir/graph_builder.h"

#include "ir/infer_context.h"
#include "ir/op_table.h"
#include "ir/shape_prover.h"

namespace sator {

namespace {
// prefix + number (built in place: GCC 12 warns falsely on "lit" + to_string()).
std::string numbered(const char* prefix, size_t n) {
  std::string s = prefix;
  s += std::to_string(n);
  return s;
}
}  // namespace

GraphBuilder::GraphBuilder(std::string name) { g_.name = std::move(name); }

SymExpr GraphBuilder::symbol(int64_t min, int64_t hint) {
  const std::string name = numbered("s", g_.symbols.size());
  g_.symbols.push_back({name, hint, min, std::nullopt});
  return SymExpr::symbol(name);
}

void infer_tensor_node(const Graph& g, Node& n) {
  const OpInfo* info = find_op(n.op);
  if (!info || !info->shape_fn) throw ShapeError(n.op + ": not an op with a shape function");
  ShapeProver prover(g.symbols);
  InferContext ctx(g, n, *info, prover);
  const Inferred r = info->shape_fn(ctx);
  if (r.result != Node::Result::Tensor) throw ShapeError(n.op + ": does not produce one tensor");
  n.result = Node::Result::Tensor;
  n.tensor.shape = r.slots.at(0).shape;
  n.tensor.dtype = r.slots.at(0).dtype;
  n.tensor.stride = contiguous_strides(n.tensor.shape);
}

void set_inferred_type(Node& n, const Inferred& r) {
  n.result = r.result;
  if (r.result == Node::Result::Tensor) {
    n.tensor.shape = r.slots.at(0).shape;
    n.tensor.dtype = r.slots.at(0).dtype;
    n.tensor.stride = contiguous_strides(n.tensor.shape);
  } else if (r.result == Node::Result::SymInt) {
    n.symint = r.symint;
  } else {
    for (const InferredSlot& s : r.slots) {
      OutputSlot o;
      if (s.kind == InferredSlot::Kind::Tensor) {
        o.kind = OutputSlot::Kind::Tensor;
        o.tensor = {s.shape, contiguous_strides(s.shape), s.dtype};
      } else if (s.kind == InferredSlot::Kind::Scalar) {
        o.kind = OutputSlot::Kind::Scalar;
        o.scalar = Value::of_sym(s.scalar);
      }
      n.outputs.push_back(std::move(o));
    }
  }
}

NodeId GraphBuilder::input(std::vector<SymExpr> shape, DType dtype) {
  Node n;
  n.name = numbered("in", g_.nodes.size());
  n.op = "placeholder";
  n.role = Role::Input;
  n.result = Node::Result::Tensor;
  n.tensor.stride = contiguous_strides(shape);
  n.tensor.shape = std::move(shape);
  n.tensor.dtype = dtype;
  g_.nodes.push_back(std::move(n));
  return static_cast<NodeId>(g_.nodes.size() - 1);
}

NodeId GraphBuilder::op(const std::string& op, std::vector<Value> args,
                        std::vector<std::pair<std::string, Value>> kwargs) {
  const OpInfo* info = find_op(op);
  if (!info || !info->shape_fn) throw ShapeError(op + ": not an op with a shape function");
  Node n;
  n.name = numbered("n", g_.nodes.size());
  n.op = op;
  n.has_args = true;
  n.args = std::move(args);
  n.kwargs = std::move(kwargs);
  ShapeProver prover(g_.symbols);
  InferContext ctx(g_, n, *info, prover);
  set_inferred_type(n, info->shape_fn(ctx));
  g_.nodes.push_back(std::move(n));
  return static_cast<NodeId>(g_.nodes.size() - 1);
}

NodeId GraphBuilder::item(NodeId tuple, size_t index) {
  const Node& t = g_.nodes.at(tuple);
  if (t.result != Node::Result::Tuple || index >= t.outputs.size() || t.outputs[index].kind != OutputSlot::Kind::Tensor)
    throw ShapeError("getitem: " + t.name + " has no tensor element " + std::to_string(index));
  Node n;
  n.name = numbered("n", g_.nodes.size());
  n.op = "getitem";
  n.has_args = true;
  n.args = {ref(tuple), Value::of_int(static_cast<int64_t>(index))};
  n.result = Node::Result::Tensor;
  n.tensor = t.outputs[index].tensor;
  g_.nodes.push_back(std::move(n));
  return static_cast<NodeId>(g_.nodes.size() - 1);
}

const TensorType& GraphBuilder::type(NodeId n) const {
  const TensorType* t = tensor_of(g_, n);
  if (!t) throw ShapeError(g_.nodes.at(n).name + " is not a tensor");
  return *t;
}

Graph GraphBuilder::finish(const std::vector<NodeId>& outputs) const {
  Graph g = g_;
  Node out;
  out.name = "output";
  out.op = "output";
  out.has_args = true;
  std::vector<Value> refs;
  for (NodeId n : outputs) refs.push_back(ref(n));
  out.args = {Value::of_list(std::move(refs))};
  g.nodes.push_back(std::move(out));
  return g;
}

Value GraphBuilder::sizes(const std::vector<SymExpr>& s) {
  std::vector<Value> v;
  for (const SymExpr& e : s) v.push_back(e.as_constant() ? Value::of_int(*e.as_constant()) : Value::of_sym(e));
  return Value::of_list(std::move(v));
}

Value GraphBuilder::ints(const std::vector<int64_t>& v) {
  std::vector<Value> out;
  for (int64_t x : v) out.push_back(Value::of_int(x));
  return Value::of_list(std::move(out));
}

}  // namespace sator
