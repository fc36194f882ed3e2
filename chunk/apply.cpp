#include "chunk/apply.h"

#include <algorithm>
#include <map>

#include "ir/chunked_node.h"
#include "ir/infer_context.h"
#include "ir/op_table.h"
#include "tensor/tensor_lang.h"

namespace sator::chunk {

namespace {

constexpr NodeId kNone = ~NodeId{0};

Value remap_refs(const Value& v, const std::vector<NodeId>& to) {
  Value out = v;
  if (v.kind == Value::Kind::Node) out.node = to.at(v.node);
  for (Value& x : out.list) x = remap_refs(x, to);
  return out;
}

// Strides the body records: a permute's and an expand's follow their input,
// everything else is laid out contiguously (what PyTorch's kernels produce
// for these shapes; views of contiguous tensors stay contiguous).
std::vector<SymExpr> body_strides(const Graph& body, const Node& n) {
  const std::string& op = n.op;
  if ((op == "aten.permute.default") && n.args.size() > 1 && n.args[0].is_node()) {
    const TensorType* in = tensor_of(body, n.args[0].node);
    if (in && in->stride.size() == in->shape.size() && n.args[1].is_list()) {
      std::vector<SymExpr> s;
      for (const Value& d : n.args[1].list) {
        const int64_t r = static_cast<int64_t>(in->shape.size());
        s.push_back(in->stride.at(static_cast<size_t>((d.i % r + r) % r)));
      }
      return s;
    }
  }
  return contiguous_strides(n.tensor.shape);
}

class Builder {
 public:
  Builder(const Graph& g, const Region& r, int64_t chunks) : g_(g), r_(r), chunks_(chunks) {}

  Graph run() {
    choose_row_symbol();
    build_body();
    return remove_dead_nodes(build_outer());
  }

 private:
  void choose_row_symbol() {
    row_name_ = "chunk_rows";
    for (int i = 2; g_.find_symbol(row_name_); ++i) row_name_ = "chunk_rows" + std::to_string(i);
    const int64_t rows = std::max<int64_t>(at_hints(g_, r_.rows), 1);
    chunks_ = std::clamp<int64_t>(chunks_, 1, rows);
    row_hint_ = (rows + chunks_ - 1) / chunks_;
    k_ = SymExpr::symbol(row_name_);
    scratch_.name = g_.name + "/chunked";
    scratch_.symbols = g_.symbols;
    scratch_.symbols.push_back(Symbol{row_name_, row_hint_, 1, std::nullopt});
  }

  SymExpr chunk_size(const SymExpr& full) const { return k_ * r_.per_row(full); }

  NodeId add(Node n) {
    scratch_.nodes.push_back(std::move(n));
    return static_cast<NodeId>(scratch_.nodes.size() - 1);
  }

  void infer(Node& n) {
    const OpInfo* op = find_op(n.op);
    if (!op || !op->shape_fn) throw ApplyError(n.name + ": " + n.op + " has no shape function");
    ShapeProver prover(scratch_.symbols);
    try {
      InferContext ctx(scratch_, n, *op, prover);
      const Inferred inf = op->shape_fn(ctx);
      n.result = Node::Result::Tensor;
      n.tensor.shape = inf.slots.at(0).shape;
      n.tensor.dtype = inf.slots.at(0).dtype;
      n.tensor.stride = body_strides(scratch_, n);
    } catch (const ShapeError& e) {
      throw ApplyError(n.name + ": " + e.what());
    }
  }

  // A size list argument (view, expand, full) with its chunked entry resized.
  static void resize_entry(Node& n, size_t arg, int64_t dim, const SymExpr& size) {
    if (arg >= n.args.size() || !n.args[arg].is_list() || dim >= static_cast<int64_t>(n.args[arg].list.size())) return;
    Value& entry = n.args[arg].list[static_cast<size_t>(dim)];
    if (auto c = size.as_constant()) entry = Value::of_int(*c);
    else entry = Value::of_sym(size);
  }

  void build_body() {
    spec_.rows = r_.rows;
    spec_.chunks = chunks_;
    spec_.row_symbol = row_name_;
    for (const RegionInput& in : r_.inputs) {
      const Node& src = g_.nodes[in.node];
      Node n;
      if (in.recreate) {
        n = src;
        resize_entry(n, 0, in.dim, chunk_size(in.size));
        infer(n);
      } else {
        n.name = src.name;
        if (in.dim >= 0) n.name += "_rows";
        n.op = "placeholder";
        n.role = Role::Input;
        n.result = Node::Result::Tensor;
        n.tensor = *tensor_of(g_, in.node);
        if (n.tensor.stride.empty()) n.tensor.stride = contiguous_strides(n.tensor.shape);
        if (in.dim >= 0) n.tensor.shape[static_cast<size_t>(in.dim)] = chunk_size(in.size);
        spec_.inputs.push_back(in.node);
        spec_.slices.push_back(in.dim >= 0 ? std::optional<ChunkSlice>(ChunkSlice{in.dim, r_.per_row(in.size)})
                                           : std::nullopt);
      }
      input_ids_.push_back(add(std::move(n)));
    }
    std::vector<NodeId> to_body(g_.nodes.size(), kNone);
    const std::vector<bool> folded = widening_folded_into_sums();
    for (size_t i = 0; i < r_.nodes.size(); ++i) {
      const NodeId id = r_.nodes[i];
      if (folded[id]) {  // the sum widens: the body returns the narrow part
        to_body[id] = to_body[g_.nodes[id].args[0].node];
        continue;
      }
      Node n = g_.nodes[id];
      auto map = [&](auto&& self, const Value& v) -> Value {
        if (v.kind == Value::Kind::Node) {
          const NodeId a = v.node;
          if (to_body[a] != kNone) return Value::of_node(to_body[a]);
          if (g_.nodes[a].result == Node::Result::SymInt) return Value::of_sym(g_.nodes[a].symint);
          for (const RegionInput& need : r_.needs[i])
            if (need.node == a) {
              const auto it = std::find(r_.inputs.begin(), r_.inputs.end(), need);
              return Value::of_node(input_ids_.at(static_cast<size_t>(it - r_.inputs.begin())));
            }
          throw ApplyError(n.name + ": an argument from outside the region has no input");
        }
        Value out = v;
        for (Value& x : out.list) x = self(self, x);
        return out;
      };
      for (Value& v : n.args) v = map(map, v);
      for (auto& kv : n.kwargs) kv.second = map(map, kv.second);
      const ChunkState& s = *r_.state[id];
      if (s.kind == ChunkState::Kind::Sliced &&
          op_has(n.op, OpFact::ShapeArgument))
        resize_entry(n, 1, s.dim, chunk_size(s.size));
      infer(n);
      to_body[id] = add(std::move(n));
    }
    Node out;
    out.name = "output";
    out.op = "output";
    out.has_args = true;
    std::vector<Value> results;
    for (NodeId o : r_.outputs) {
      results.push_back(Value::of_node(to_body[o]));
      const ChunkState& s = *r_.state[o];
      spec_.combines.push_back(s.kind == ChunkState::Kind::Partial
                                   ? ChunkCombine{ChunkCombine::Kind::Sum, 0, SymExpr(0)}
                                   : ChunkCombine{ChunkCombine::Kind::Cat, s.dim, r_.per_row(s.size)});
    }
    out.args = {Value::of_list(std::move(results))};
    add(std::move(out));
  }

  // The region's results that only widen a partial sum's part (a 16-bit
  // matmul's weight gradient converted to float32) and feed nothing else in
  // the region: the conversion moves into the sum (ChunkCombine::Sum sums in
  // the result's dtype), so each chunk does not write a float32 copy of its
  // part only to add it. One kernel per chunk reads the 16-bit part and the
  // float32 sum and writes the sum, where there were two.
  std::vector<bool> widening_folded_into_sums() const {
    std::vector<bool> folded(g_.nodes.size(), false), region(g_.nodes.size(), false), used_inside(g_.nodes.size(), false);
    for (NodeId id : r_.nodes) region[id] = true;
    auto see = [&](NodeId a) { if (region[a]) used_inside[a] = true; };
    for (NodeId id : r_.nodes) {
      for (const Value& v : g_.nodes[id].args) v.for_each_node(see);
      for (const auto& kv : g_.nodes[id].kwargs) kv.second.for_each_node(see);
    }
    for (NodeId o : r_.outputs) {
      const Node& n = g_.nodes[o];
      if (n.op != "prims.convert_element_type.default" || used_inside[o] || r_.state[o]->kind != ChunkState::Kind::Partial ||
          n.args.empty() || !n.args[0].is_node() || !region[n.args[0].node])
        continue;
      const TensorType* from = tensor_of(g_, n.args[0].node);
      const TensorType* to = tensor_of(g_, o);
      if (from && to && is_floating(from->dtype) && is_floating(to->dtype) && dtype_bytes(to->dtype) > dtype_bytes(from->dtype))
        folded[o] = true;
    }
    return folded;
  }

  Graph build_outer() {
    const size_t n = g_.nodes.size();
    const NodeId first = r_.nodes.front();
    std::vector<bool> region(n, false), hoist(n, false);
    for (NodeId id : r_.nodes) region[id] = true;
    // What the region reads from after its first node moves before it.
    std::vector<NodeId> stack(spec_.inputs.begin(), spec_.inputs.end());
    while (!stack.empty()) {
      const NodeId x = stack.back();
      stack.pop_back();
      if (x <= first || region[x] || hoist[x]) continue;
      hoist[x] = true;
      auto push = [&](NodeId a) { stack.push_back(a); };
      for (const Value& v : g_.nodes[x].args) v.for_each_node(push);
      for (const auto& kv : g_.nodes[x].kwargs) kv.second.for_each_node(push);
    }
    std::vector<NodeId> order;
    for (NodeId id = 0; id < first; ++id) order.push_back(id);
    for (NodeId id = first; id < n; ++id)
      if (hoist[id]) order.push_back(id);
    const size_t chunked_at = order.size();
    for (NodeId id = first; id < n; ++id)
      if (!hoist[id] && !region[id]) order.push_back(id);

    Graph out;
    out.name = g_.name;
    out.source_json = g_.source_json;
    out.symbols = g_.symbols;
    std::vector<NodeId> to(n, kNone);
    auto copy = [&](NodeId id) {
      Node node = g_.nodes[id];
      for (Value& v : node.args) v = remap_refs(v, to);
      for (auto& kv : node.kwargs) kv.second = remap_refs(kv.second, to);
      to[id] = static_cast<NodeId>(out.nodes.size());
      out.nodes.push_back(std::move(node));
    };
    for (size_t i = 0; i < order.size(); ++i) {
      if (i == chunked_at) add_chunked(out, to);
      copy(order[i]);
    }
    return out;
  }

  void add_chunked(Graph& out, std::vector<NodeId>& to) {
    ChunkedSpec spec = spec_;
    for (NodeId& id : spec.inputs) id = to.at(id);
    Node c;
    c.name = "sator_chunked_" + g_.nodes[r_.amplifier].name;
    write_chunked_spec(spec, c);
    c.result = Node::Result::Tuple;
    for (NodeId o : r_.outputs) {
      OutputSlot slot;
      slot.kind = OutputSlot::Kind::Tensor;
      slot.tensor = *tensor_of(g_, o);
      slot.tensor.stride = contiguous_strides(slot.tensor.shape);
      c.outputs.push_back(std::move(slot));
    }
    Graph body = scratch_;
    body.name.clear();
    body.source_json = "{}";
    body.symbols = {scratch_.symbols.back()};
    c.body.push_back(std::move(body));
    const auto cid = static_cast<NodeId>(out.nodes.size());
    out.nodes.push_back(std::move(c));
    for (size_t i = 0; i < r_.outputs.size(); ++i) {
      const Node& orig = g_.nodes[r_.outputs[i]];
      Node item;
      item.name = orig.name;
      item.op = "getitem";
      item.has_args = true;
      item.args = {Value::of_node(cid), Value::of_int(static_cast<int64_t>(i))};
      item.result = Node::Result::Tensor;
      item.tensor = out.nodes[cid].outputs[i].tensor;
      to[r_.outputs[i]] = static_cast<NodeId>(out.nodes.size());
      out.nodes.push_back(std::move(item));
    }
  }

  const Graph& g_;
  const Region& r_;
  int64_t chunks_;
  std::string row_name_;
  int64_t row_hint_ = 1;
  SymExpr k_;
  Graph scratch_;  // the body, seeing the outer symbols while it is built
  ChunkedSpec spec_;
  std::vector<NodeId> input_ids_;  // per region input: its body node
};

}  // namespace

Graph remove_dead_nodes(const Graph& g) {
  const size_t n = g.nodes.size();
  std::vector<bool> live(n, false);
  for (size_t i = n; i-- > 0;) {
    const Node& node = g.nodes[i];
    if (node.op == "output" || node.op == "placeholder") live[i] = true;
    if (!live[i]) continue;
    auto mark = [&](NodeId a) { live[a] = true; };
    for (const Value& v : node.args) v.for_each_node(mark);
    for (const auto& kv : node.kwargs) kv.second.for_each_node(mark);
  }
  Graph out = g;
  out.nodes.clear();
  std::vector<NodeId> to(n, kNone);
  for (size_t i = 0; i < n; ++i) {
    if (!live[i]) continue;
    Node node = g.nodes[i];
    for (Value& v : node.args) v = remap_refs(v, to);
    for (auto& kv : node.kwargs) kv.second = remap_refs(kv.second, to);
    to[i] = static_cast<NodeId>(out.nodes.size());
    out.nodes.push_back(std::move(node));
  }
  return out;
}

std::vector<bool> tangent_dependent_outputs(const Graph& g) {
  std::vector<bool> dep(g.nodes.size(), false);
  std::vector<bool> out;
  for (NodeId i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.op == "placeholder") {
      dep[i] = n.role == Role::Tangent;
    } else if (n.op == "output") {
      if (n.args.empty()) continue;
      for (const Value& v : n.args[0].list) out.push_back(v.kind == Value::Kind::Node && dep[v.node]);
    } else {
      for (NodeId c : tensor_children(g, i)) dep[i] = dep[i] || dep[c];
    }
  }
  return out;
}

Graph apply_chunking(const Graph& g, const Region& r, int64_t chunks, TangentScaling* scaling) {
  Builder b(g, r, chunks);
  Graph chunked = b.run();
  const auto c = std::find_if(chunked.nodes.begin(), chunked.nodes.end(), [](const Node& n) { return n.op == kChunkedOp; });
  TangentScaling scaled;
  try {
    scaled = scale_by_tangent(chunked, static_cast<NodeId>(c - chunked.nodes.begin()));
  } catch (const ShapeError& e) {
    throw ApplyError(std::string("taking the tangent out of the chunked node: ") + e.what());
  }
  Graph out = scaled.tangent.empty() ? std::move(chunked) : remove_dead_nodes(scaled.graph);
  // One node computes the whole region: where it still reads a tangent and
  // also yields a value of the forward, that forward output would depend on
  // the tangent, which AOTAutograd's partitioner cannot split ("was invalid,
  // but is output"; seen on the zoo's autocast training graphs).
  const std::vector<bool> before = tangent_dependent_outputs(g), after = tangent_dependent_outputs(out);
  for (size_t i = 0; i < before.size() && i < after.size(); ++i)
    if (!before[i] && after[i])
      throw ApplyError("the chunked region reads a tangent and yields forward output " + std::to_string(i) +
                       ", which would then depend on the tangent");
  if (scaling) {
    *scaling = std::move(scaled);
    scaling->graph = Graph{};
  }
  return out;
}

}  // namespace sator::chunk
