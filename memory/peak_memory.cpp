#include "memory/peak_memory.h"

#include "memory/reduction_staging.h"

#include <algorithm>
#include <string_view>

#include "ir/chunked_node.h"
#include "ir/op_table.h"

namespace sator::memory {

namespace {

int64_t value_at_hints(const Graph& g, const SymExpr& e) { return std::max<int64_t>(at_hints(g, e), 0); }

// Whether reshape(in, out) returns a view (no copy): where view's strides
// exist for it, at the hints. Inferred types (no strides) are contiguous.
bool reshape_is_view(const Graph& g, const TensorType& in, const TensorType& out) {
  if (in.stride.empty()) return true;
  std::vector<int64_t> shape, stride, new_shape;
  for (const SymExpr& d : in.shape) shape.push_back(value_at_hints(g, d));
  for (const SymExpr& d : in.stride) stride.push_back(value_at_hints(g, d));
  for (const SymExpr& d : out.shape) new_shape.push_back(value_at_hints(g, d));
  return view_strides(shape, stride, new_shape).has_value();
}

}  // namespace

double tensor_bytes(const Graph& g, const TensorType& t) {
  double n = static_cast<double>(dtype_bytes(t.dtype));
  for (const SymExpr& d : t.shape) n *= static_cast<double>(value_at_hints(g, d));
  return n;
}

double chunked_transient_bytes(const Graph& g, const Node& n) {
  const int64_t rows = std::max<int64_t>(value_at_hints(g, read_chunked_spec(n).rows), 1);
  const int64_t chunks = read_chunked_spec(n).chunks;
  const Graph body = body_with_symbols(g, n, (rows + chunks - 1) / std::max<int64_t>(chunks, 1));
  const PeakMemory inner = estimate_peak_memory(body);
  return std::max(inner.peak_bytes - inner.input_bytes, 0.0);
}

namespace {

// What a node holds while it runs beyond its result: a chunked node's body
// at its largest chunk, an op's own eager temporary, a reduction's staging
// buffer.
double transient_bytes(const Graph& g, const Node& n, const OpFacts& facts) {
  if (n.op == kChunkedOp) return chunked_transient_bytes(g, n);
  if (facts.has(OpFact::EagerTemporary) && n.result == Node::Result::Tensor) return tensor_bytes(g, n.tensor);
  return facts.has(OpFact::CudaReduction) ? reduction_staging_bytes(g, n) : 0;
}

}  // namespace

Storages storages_of(const Graph& g) {
  const size_t n = g.nodes.size();
  Storages st;
  st.refers.resize(n);
  st.transient.resize(n);
  // Each node's facts looked up once (three lookups a node were a third of
  // this function on a 165,000-node graph).
  std::vector<bool> aliases(n);
  for (NodeId i = 0; i < n; ++i) {
    const OpFacts facts(g.nodes[i].op);
    aliases[i] = facts.has(OpFact::Aliases);  // the result is a view of the first argument's storage
    st.transient[i] = transient_bytes(g, g.nodes[i], facts);
  }
  std::vector<std::vector<int64_t>>& refers = st.refers;
  auto allocate = [&](NodeId owner, double bytes) {
    st.bytes.push_back(bytes);
    st.owner.push_back(owner);
    return static_cast<int64_t>(st.bytes.size() - 1);
  };
  auto first_arg = [&](const Node& node) -> const Value* {
    return node.args.empty() || !node.args[0].is_node() ? nullptr : &node.args[0];
  };
  for (NodeId i = 0; i < n; ++i) {
    const Node& node = g.nodes[i];
    if (node.op == "output") continue;
    if (node.op == "getitem") {
      const Value* t = first_arg(node);
      const int64_t index = node.args.size() > 1 && node.args[1].kind == Value::Kind::Int ? node.args[1].i : 0;
      if (t && index >= 0 && static_cast<size_t>(index) < refers[t->node].size())
        refers[i] = {refers[t->node][static_cast<size_t>(index)]};
      else if (t && refers[t->node].size() == 1)
        refers[i] = refers[t->node];  // a piece of a view-producing tuple op (split): the base
      continue;
    }
    const Value* base = first_arg(node);
    bool view = aliases[i] && base && !refers[base->node].empty();
    if (node.op == "aten.reshape.default" && base) {
      const TensorType* in = tensor_of(g, base->node);
      view = in && node.result == Node::Result::Tensor && reshape_is_view(g, *in, node.tensor) &&
             !refers[base->node].empty();
    }
    if (view) {
      // Every element of a view-producing tuple op (split) shares the base.
      const int64_t s = refers[base->node].front();
      refers[i].assign(node.result == Node::Result::Tuple ? std::max<size_t>(node.outputs.size(), 1) : 1, s);
      continue;
    }
    if (node.result == Node::Result::Tensor) refers[i] = {allocate(i, tensor_bytes(g, node.tensor))};
    if (node.result == Node::Result::Tuple)
      for (const OutputSlot& slot : node.outputs)
        refers[i].push_back(slot.kind == OutputSlot::Kind::Tensor ? allocate(i, tensor_bytes(g, slot.tensor)) : -1);
  }
  return st;
}

double peak_bytes_in_order(const Graph& g, const Storages& st, const std::vector<NodeId>& order) {
  const size_t n = g.nodes.size();
  std::vector<size_t> pos(n);
  for (size_t k = 0; k < order.size(); ++k) pos[order[k]] = k;
  std::vector<size_t> last_use(st.bytes.size());
  std::vector<bool> pinned(st.bytes.size(), false);
  for (size_t s = 0; s < st.bytes.size(); ++s) {
    last_use[s] = pos[st.owner[s]];
    pinned[s] = g.nodes[st.owner[s]].op == "placeholder";
  }
  for (NodeId i = 0; i < n; ++i) {
    const Node& node = g.nodes[i];
    auto use = [&](NodeId ref) {
      for (int64_t s : st.refers[ref])
        if (s >= 0) {
          last_use[static_cast<size_t>(s)] = std::max(last_use[static_cast<size_t>(s)], pos[i]);
          if (node.op == "output") pinned[static_cast<size_t>(s)] = true;
        }
    };
    for (const Value& v : node.args) v.for_each_node(use);
    for (const auto& kv : node.kwargs) kv.second.for_each_node(use);
  }
  std::vector<double> delta_at(n + 1, 0.0), freed_after(n, 0.0);
  for (size_t s = 0; s < st.bytes.size(); ++s) {
    delta_at[pos[st.owner[s]]] += st.bytes[s];
    if (!pinned[s]) freed_after[last_use[s]] += st.bytes[s];
  }
  double now = 0, peak = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    now += delta_at[k];
    peak = std::max(peak, now + st.transient[order[k]]);
    now -= freed_after[k];
  }
  return peak;
}

PeakMemory estimate_peak_memory(const Graph& g) {
  const size_t n = g.nodes.size();
  Storages st = storages_of(g);
  const std::vector<double>& storage_bytes = st.bytes;
  const std::vector<NodeId>& storage_owner = st.owner;
  const std::vector<std::vector<int64_t>>& refers = st.refers;
  std::vector<size_t> storage_last_use(storage_owner.begin(), storage_owner.end());
  std::vector<bool> storage_pinned(storage_bytes.size(), false);  // inputs and outputs: never freed
  PeakMemory r;
  // Last uses; inputs and outputs pinned.
  for (NodeId i = 0; i < n; ++i) {
    const Node& node = g.nodes[i];
    auto use = [&](NodeId ref) {
      for (int64_t s : refers[ref])
        if (s >= 0) {
          storage_last_use[static_cast<size_t>(s)] = std::max<size_t>(storage_last_use[static_cast<size_t>(s)], i);
          if (node.op == "output") storage_pinned[static_cast<size_t>(s)] = true;
        }
    };
    for (const Value& v : node.args) v.for_each_node(use);
    for (const auto& kv : node.kwargs) kv.second.for_each_node(use);
    if (node.op == "placeholder")
      for (int64_t s : refers[i])
        if (s >= 0) storage_pinned[static_cast<size_t>(s)] = true;
  }
  std::vector<std::vector<size_t>> freed_after(n);
  for (size_t s = 0; s < storage_bytes.size(); ++s) {
    if (g.nodes[storage_owner[s]].op == "placeholder") r.input_bytes += storage_bytes[s];
    else if (storage_pinned[s]) r.output_bytes += storage_bytes[s];
    else freed_after[storage_last_use[s]].push_back(s);
  }
  double now = 0, peak_transient = 0;
  size_t next_storage = 0;
  r.live_after.assign(n, 0.0);
  for (NodeId i = 0; i < n; ++i) {
    while (next_storage < storage_owner.size() && storage_owner[next_storage] == i) {
      now += storage_bytes[next_storage++];
    }
    // A node holds its results and, while it runs, its transient bytes (a
    // chunked node: what its body allocates beyond its inputs, the body's
    // own peak at the largest chunk).
    const double transient = st.transient[i];
    if (now + transient > r.peak_bytes) {
      r.peak_bytes = now + transient;
      r.peak_node = i;
      peak_transient = transient;
    }
    for (size_t s : freed_after[i]) now -= storage_bytes[s];
    r.live_after[i] = now;
  }
  // What is alive at the peak, listed once at the end (listing it at every
  // new peak was quadratic on a graph whose peak keeps rising, as N stacked
  // copies of a model do): a storage made by then and not yet freed.
  if (r.peak_bytes > 0) {
    const NodeId p = r.peak_node;
    for (size_t s = 0; s < storage_bytes.size() && storage_owner[s] <= p; ++s) {
      const bool never_freed = storage_pinned[s] || g.nodes[storage_owner[s]].op == "placeholder";
      if (never_freed || storage_last_use[s] >= p) r.at_peak.push_back({storage_owner[s], storage_bytes[s]});
    }
    if (peak_transient > 0) r.at_peak.push_back({p, peak_transient});
  }
  std::sort(r.at_peak.begin(), r.at_peak.end(), [](const LiveTensor& a, const LiveTensor& b) { return a.bytes > b.bytes; });
  return r;
}

}  // namespace sator::memory
