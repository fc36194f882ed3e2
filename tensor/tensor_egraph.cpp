#include "tensor/tensor_egraph.h"

#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <unordered_set>

#include "ir/op_table.h"
#include "tensor/written_layout.h"

namespace sator {

TensorEGraph::TensorEGraph(const Graph& g, bool explanations)
    : prover(g.symbols), analysis(lang, prover), egraph(&analysis), source_(g) {
  if (explanations) egraph.enable_explanations();
  node_class_.assign(g.nodes.size(), eg::kNoId);
  for (NodeId i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.op == "output") {
      for (const Value& v : n.args[0].list) {
        if (v.is_none()) outputs_.push_back(std::nullopt);
        else if (v.is_node()) outputs_.push_back(node_class_[v.node]);
        else throw std::runtime_error("output '" + n.name + "' holds a constant, which sator cannot carry yet");
      }
      continue;
    }
    const TensorLanguage::Encoded e = lang.encode(g, i);
    std::vector<eg::Id> kids;
    kids.reserve(e.children.size());
    for (NodeId c : e.children) kids.push_back(node_class_[c]);
    analysis.supply(recorded_type(n));
    const eg::Id id = egraph.add_uncanonical(e.op, e.attr, kids);
    analysis.clear_supplied();  // unused when the node was already there
    node_class_[i] = id;
    if (id >= original_.size()) original_.resize(id + 1, -1);
    if (original_[id] < 0) original_[id] = static_cast<int64_t>(i);
    if (n.result == Node::Result::SymInt) symint_nodes_.emplace(n.symint, i);
  }
  egraph.rebuild();
}

// ---------------------------------------------------------------------------

namespace {

bool writes_view_or_reshape(const std::string& op) { return op_has(op, OpFact::ViewOrReshape); }

// view's strides for `in` reshaped to `shape`, where every size and stride
// is a constant (a symbolic size could make the view invalid at another
// size); nullopt where unknown or where only a copy can do it.
std::optional<std::vector<int64_t>> constant_view_strides(const Node& in, const std::vector<SymExpr>& shape) {
  if (in.result != Node::Result::Tensor || in.tensor.stride.size() != in.tensor.shape.size()) return std::nullopt;
  std::vector<int64_t> old_shape, old_stride, new_shape;
  for (const SymExpr& d : in.tensor.shape) {
    if (!d.as_constant()) return std::nullopt;
    old_shape.push_back(*d.as_constant());
  }
  for (const SymExpr& d : in.tensor.stride) {
    if (!d.as_constant()) return std::nullopt;
    old_stride.push_back(*d.as_constant());
  }
  for (const SymExpr& d : shape) {
    if (!d.as_constant()) return std::nullopt;
    new_shape.push_back(*d.as_constant());
  }
  return view_strides(old_shape, old_stride, new_shape);
}

}  // namespace

class GraphWriter {
 public:
  GraphWriter(const TensorEGraph& t, const eg::Extraction& x, bool recompute,
              const std::unordered_set<eg::Id>* recompute_only)
      : t_(t), x_(x), recompute_(recompute), recompute_only_(recompute_only) {
    emitted_.assign(t.egraph.num_nodes(), kNone);
    open_.assign(t.egraph.num_nodes(), 0);
    used_.assign(t.source().nodes.size(), 0);
    for (const Node& n : t.source().nodes)
      if (const std::optional<size_t> k = fresh_number(n.name)) taken_.insert(*k);
    if (recompute_)
      for (NodeId i = 0; i < t.source().nodes.size(); ++i)
        if (t.source().nodes[i].op != "placeholder" && t.source().nodes[i].op != "output")
          if (const eg::Id c = t.class_of(i); !recompute_only_ || recompute_only_->count(c))
            class_sources_[c].push_back(i);
  }

  Graph run() {
    // Room for as many nodes as the source has and an eighth more (copies a
    // recomputation adds): growing the vector of 448-byte nodes by doubling
    // moved every node into fresh pages at each step, a tenth of a 60-copy
    // run in page faults.
    out_.nodes.reserve(t_.source().nodes.size() + t_.source().nodes.size() / 8 + 16);
    out_.name = t_.source().name;
    out_.source_json = t_.source().source_json;
    out_.symbols = t_.source().symbols;
    for (NodeId i = 0; i < t_.source().nodes.size(); ++i) {
      const Node& n = t_.source().nodes[i];
      if (n.op != "placeholder") continue;
      emitted_[t_.class_of(i)] = push(n, static_cast<int64_t>(i), is_contiguous(n.tensor.shape, n.tensor.stride), true);
    }
    std::vector<Value> results;
    for (const auto& o : t_.outputs()) results.push_back(o ? Value::of_node(emit(*o, std::numeric_limits<int64_t>::max())) : Value::none());
    Node output;
    output.name = "output";
    output.op = "output";
    output.args = {Value::of_list(std::move(results))};
    out_.nodes.push_back(std::move(output));
    return std::move(out_);
  }

 private:
  static constexpr NodeId kNone = ~NodeId{0};

  NodeId push(Node n, int64_t original, bool contiguous, bool known) {
    out_.nodes.push_back(std::move(n));
    original_of_.push_back(original);
    contiguous_.push_back(contiguous);
    known_.push_back(known || contiguous);
    return static_cast<NodeId>(out_.nodes.size() - 1);
  }

  // A new node's name: "sator_<k>" for the next k no source node's name
  // holds (the names this writer made never repeat: k only grows).
  std::string fresh_name() {
    while (taken_.count(counter_)) ++counter_;
    return "sator_" + std::to_string(counter_++);
  }
  // k where `name` is "sator_<k>" as fresh_name writes it, else nullopt.
  static std::optional<size_t> fresh_number(const std::string& name) {
    static constexpr std::string_view kPrefix = "sator_";
    if (name.size() <= kPrefix.size() || name.compare(0, kPrefix.size(), kPrefix) != 0) return std::nullopt;
    const std::string_view digits = std::string_view(name).substr(kPrefix.size());
    if (digits.size() > 18 || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
    size_t k = 0;
    for (char ch : digits) {
      if (ch < '0' || ch > '9') return std::nullopt;
      k = k * 10 + static_cast<size_t>(ch - '0');
    }
    return k;
  }

  // Child slots become the emitted children; symbolic sizes go back to a
  // node that computes them where the source has one.
  Value rewrite(const Value& v, const std::vector<NodeId>& kids) {
    if (v.kind == Value::Kind::Node) return Value::of_node(kids.at(v.node));
    if (v.kind == Value::Kind::Sym) {
      auto it = t_.symint_nodes_.find(v.sym);
      if (it == t_.symint_nodes_.end()) return v;
      try {
        const int64_t at = at_;  // a nested write moves at_
        const NodeId producer = emit(t_.class_of(it->second), at);
        at_ = at;
        return Value::of_node(producer);
      } catch (const Cycle&) {
        // The node computing the size reads the value being written (a
        // sym_size of a view whose own sizes are that expression, as a
        // rewritten graph can hold): the size stays an expression.
        return v;
      }
    }
    if (v.kind == Value::Kind::List) {
      std::vector<Value> items;
      for (const Value& x : v.list) items.push_back(rewrite(x, kids));
      return Value::of_list(std::move(items));
    }
    return v;
  }

  // A class reached again while its own children are being written (open_):
  // the choices form a cycle. Thrown by emit(); rewrite() catches it when a
  // symbolic size's producer closes the cycle.
  struct Cycle : std::logic_error {
    Cycle() : std::logic_error("the extracted graph has a cycle") {}
  };

  // The places the source computes class c's value at, with the chosen
  // node's op (the partitioner's recomputations: the same expression, or one
  // the rules proved equal), in order; nullptr where it is one place, or the
  // writer writes each value once, or the op is a view (free to share).
  const std::vector<NodeId>* places_of(eg::Id c) {
    if (!recompute_ || (recompute_only_ && !recompute_only_->count(c))) return nullptr;
    const auto cached = places_.find(c);
    if (cached != places_.end()) return cached->second.size() > 1 ? &cached->second : nullptr;
    std::vector<NodeId>& places = places_[c];
    const std::string& op = t_.lang.op_name(t_.egraph.op(x_.choice.at(c)));
    if (op == "getitem" || !op_has(op, OpFact::Aliases))
      if (const auto it = class_sources_.find(c); it != class_sources_.end())
        for (NodeId i : it->second)
          if (t_.source().nodes[i].op == op) places.push_back(i);
    return places.size() > 1 ? &places : nullptr;
  }
  // Which place's copy of class c a user at source position `at` reads: the
  // latest at or before it (0 where the source computes it at one place).
  size_t copy_for(eg::Id c, int64_t at) {
    const std::vector<NodeId>* places = places_of(c);
    if (!places) return 0;
    size_t k = 0;
    for (size_t j = 0; j < places->size(); ++j)
      if (static_cast<int64_t>((*places)[j]) <= at) k = j;
    return k;
  }
  // The source position copy k of class c stands at (its children are read
  // from there): its place's, its source node's, or for a node a rule made,
  // its user's.
  int64_t place_of(eg::Id c, size_t k, int64_t at) {
    if (const std::vector<NodeId>* places = places_of(c)) return static_cast<int64_t>((*places)[k]);
    const int64_t source = t_.original_node(x_.choice.at(c));
    return source >= 0 ? source : at;
  }
  NodeId& written(eg::Id c, size_t k) {
    if (k == 0) return emitted_[c];
    return copies_.try_emplace({c, k}, kNone).first->second;
  }

  // Emits `root` (the copy a user at source position `at` reads) after
  // everything it depends on, in the order a recursive post-order walk
  // would (children in slot order), with an explicit stack: a joint graph
  // of a deep model is thousands of nodes deep.
  NodeId emit(eg::Id root, int64_t at) {
    root = t_.egraph.find(root);
    const size_t root_copy = copy_for(root, at);
    if (written(root, root_copy) != kNone) return written(root, root_copy);  // the common case
    struct Item {
      eg::Id c;
      size_t copy;
      int64_t at;
      bool expanded;
    };
    std::vector<Item> stack{{root, root_copy, at, false}};
    std::vector<eg::Id> opened;  // closed again if a cycle unwinds this call
    try {
      while (!stack.empty()) {
        const Item it = stack.back();
        stack.pop_back();
        if (written(it.c, it.copy) != kNone) continue;
        if (it.expanded) {
          emit_one(it.c, it.copy, it.at);
          open_[it.c] = 0;
          continue;
        }
        if (open_[it.c]) throw Cycle();
        open_[it.c] = 1;
        opened.push_back(it.c);
        stack.push_back({it.c, it.copy, it.at, true});
        const eg::Id n = x_.choice.at(it.c);
        if (n == eg::kNoId) throw std::logic_error("extraction left a needed class without a node");
        const int64_t here = place_of(it.c, it.copy, it.at);
        const auto kids = t_.egraph.children(n);
        for (size_t i = kids.size(); i-- > 0;) {
          const eg::Id k = t_.egraph.find(kids[i]);
          const size_t kc = copy_for(k, here);
          if (written(k, kc) == kNone) stack.push_back({k, kc, here, false});
        }
      }
    } catch (...) {
      for (eg::Id c : opened) open_[c] = 0;
      throw;
    }
    return written(root, root_copy);
  }

  // One class whose children are emitted (symbolic sizes it reads may still
  // emit their producers through emit()).
  NodeId emit_one(eg::Id cls, size_t copy, int64_t at) {
    cls = t_.egraph.find(cls);
    if (written(cls, copy) != kNone) return written(cls, copy);
    const eg::Id n = x_.choice.at(cls);
    if (n == eg::kNoId) throw std::logic_error("extraction left a needed class without a node");
    const int64_t here = place_of(cls, copy, at);
    std::vector<NodeId> kids;
    for (eg::Id c : t_.egraph.children(n)) kids.push_back(emit(c, here));
    at_ = here;  // for the producers of symbolic sizes rewrite() emits

    const NodeAttrs& a = t_.lang.attrs(t_.egraph.attr(n));
    Node node;
    node.op = t_.lang.op_name(t_.egraph.op(n));
    for (const Value& v : a.args) node.args.push_back(rewrite(v, kids));
    for (const auto& [k, v] : a.kwargs) node.kwargs.emplace_back(k, rewrite(v, kids));
    node.role = a.role;
    node.target = a.target;
    node.value = a.value;

    const int64_t orig = t_.original_node(n);
    const bool is_original = orig >= 0;
    // The source node this copy stands for (a recomputed one: its place).
    const std::vector<NodeId>* places = places_of(cls);
    const NodeId source = !is_original ? 0 : places ? (*places)[copy] : static_cast<NodeId>(orig);
    if (is_original && !used_[source]) {
      node.name = t_.source().nodes[source].name;
      used_[source] = 1;
    } else {
      node.name = fresh_name();
    }

    const TensorData& d = t_.analysis.data(cls);
    node.result = d.result;
    node.symint = d.symint;
    node.tensor.shape = d.type.shape;
    node.tensor.dtype = d.type.dtype;
    node.outputs = d.outputs;

    // Recorded strides hold when the node and all its inputs are the
    // source's, the inputs laid out as the source recorded them (an input
    // written as a view into a larger buffer, its copy dropped, has other
    // strides, and so do the layout ops and kernels reading it).
    bool same_inputs = is_original;
    if (is_original) {
      const std::vector<NodeId> src_kids = tensor_children(t_.source(), source);
      same_inputs = src_kids.size() == kids.size();
      for (size_t k = 0; same_inputs && k < kids.size(); ++k)
        same_inputs = original_of_[kids[k]] == static_cast<int64_t>(src_kids[k]) &&
                      laid_out_as_recorded(kids[k], t_.source().nodes[src_kids[k]]);
    }
    bool contiguous = true, known = true;
    for (NodeId k : kids) contiguous &= contiguous_[k] || out_.nodes[k].result != Node::Result::Tensor;
    if (same_inputs && !writes_view_or_reshape(node.op)) {
      const Node& src = t_.source().nodes[source];
      node.tensor.stride = src.tensor.stride;
      node.outputs = src.outputs.empty() ? node.outputs : src.outputs;
      if (d.result == Node::Result::Tensor) contiguous = is_contiguous(node.tensor.shape, node.tensor.stride);
    } else if (d.result == Node::Result::Tensor) {
      derive_strides(node, kids, contiguous, known);
    } else if (d.result == Node::Result::Tuple) {
      derive_tuple_strides(node, kids, contiguous, known);
    }
    const NodeId id = push(std::move(node), is_original ? static_cast<int64_t>(source) : -1, contiguous, known);
    enode_of_.resize(id + 1, eg::kNoId);
    enode_of_[id] = n;
    written(cls, copy) = id;
    return id;
  }

  // Whether written node `id`'s strides are known and are those the source
  // recorded for `src` (for a tuple: each result's).
  bool laid_out_as_recorded(NodeId id, const Node& src) const {
    if (!known_[id]) return false;
    const Node& w = out_.nodes[id];
    // Equal strides where a dim has more than one element (a size-1 dim's
    // stride is arbitrary: PyTorch records whatever its kernel chose).
    auto same = [](const TensorType& a, const TensorType& b) {
      if (a.shape != b.shape || a.stride.size() != a.shape.size() || b.stride.size() != b.shape.size()) return false;
      for (size_t i = 0; i < a.shape.size(); ++i)
        if (!(a.shape[i] == SymExpr(1)) && !(a.stride[i] == b.stride[i])) return false;
      return true;
    };
    if (w.result == Node::Result::Tensor) return same(w.tensor, src.tensor);
    if (w.result == Node::Result::Tuple) {
      if (w.outputs.size() != src.outputs.size()) return false;
      for (size_t i = 0; i < w.outputs.size(); ++i)
        if (w.outputs[i].kind == OutputSlot::Kind::Tensor && !same(w.outputs[i].tensor, src.outputs[i].tensor))
          return false;
    }
    return true;
  }

  // Strides of a node whose inputs changed (written_layout.h): a view of an
  // input whose strides do not allow it becomes a reshape; layout ops and a
  // tuple's pieces follow their input's known strides; an op that picks its
  // own layout gives unknown strides, one that writes a fresh result
  // contiguous ones; a pointwise result is contiguous where its inputs are
  // row-major ordered (TensorIterator's rule); anything else is contiguous
  // when all its inputs are, and unknown otherwise.
  void derive_strides(Node& node, const std::vector<NodeId>& kids, bool& contiguous, bool& known) {
    const std::vector<SymExpr>& shape = node.tensor.shape;
    const Node* in = kids.empty() ? nullptr : &out_.nodes[kids[0]];
    if (writes_view_or_reshape(node.op) && in) {
      if (!contiguous_[kids[0]] && known_[kids[0]])
        if (const auto strides = constant_view_strides(*in, shape)) {
          // A non-contiguous input whose dims split or merge within
          // contiguous runs (a piece of a split, heads of a fused qkv):
          // view holds at every size, no copy.
          node.op = "aten.view.default";
          node.tensor.stride.assign(strides->begin(), strides->end());
          contiguous = is_contiguous(shape, node.tensor.stride);
          return;
        }
      node.op = contiguous_[kids[0]] ? "aten.view.default" : "aten.reshape.default";
      node.tensor.stride = contiguous_strides(shape);
      contiguous = known = contiguous_[kids[0]];
      return;
    }
    if (node.op == "getitem" && in && in->result == Node::Result::Tuple && node.args.size() > 1 &&
        node.args[1].kind == Value::Kind::Int && node.args[1].i >= 0 &&
        static_cast<size_t>(node.args[1].i) < in->outputs.size() && known_[kids[0]]) {
      node.tensor.stride = in->outputs[static_cast<size_t>(node.args[1].i)].tensor.stride;
      contiguous = is_contiguous(shape, node.tensor.stride);
      return;
    }
    if (in && op_has(node.op, OpFact::Aliases)) {
      const auto strides = known_[kids[0]] ? layout_op_strides(node, *in) : std::nullopt;
      known = strides.has_value();
      node.tensor.stride = known ? *strides : contiguous_strides(shape);
      contiguous = known && is_contiguous(shape, node.tensor.stride);
      return;
    }
    node.tensor.stride = contiguous_strides(shape);
    const OpInfo* info = find_op(node.op);
    if (op_has(node.op, OpFact::OwnLayout) || node.op == "getitem") {
      contiguous = false;
    } else if (op_has(node.op, OpFact::FreshContiguous)) {
      contiguous = true;
    } else if (info && info->cls == OpClass::Pointwise) {
      // TensorIterator lays its result out in the order its inputs' strides
      // give: row-major when every input steps through its dims in that
      // order (contiguous, broadcast with stride 0, or a slice of a wider one).
      contiguous = true;
      for (NodeId k : kids)
        if (out_.nodes[k].result == Node::Result::Tensor) contiguous &= known_[k] && row_major_ordered(out_.nodes[k].tensor);
    }
    known = contiguous;
  }

  // Whether a tensor's strides, over its dims of more than one element and
  // a nonzero stride, fall from the first dim to the last (constants only).
  static bool row_major_ordered(const TensorType& t) {
    if (t.stride.size() != t.shape.size()) return false;
    int64_t last = -1;
    for (size_t i = 0; i < t.shape.size(); ++i) {
      if (t.shape[i] == SymExpr(1) || t.stride[i] == SymExpr(0)) continue;
      const auto s = t.stride[i].as_constant();
      if (!s) return is_contiguous(t.shape, t.stride);
      if (last >= 0 && *s > last) return false;
      last = *s;
    }
    return true;
  }

  // A tuple op's results: a split's pieces keep their input's strides;
  // others as derive_strides says for one result.
  void derive_tuple_strides(Node& node, const std::vector<NodeId>& kids, bool& contiguous, bool& known) {
    const Node* in = kids.empty() ? nullptr : &out_.nodes[kids[0]];
    if (in && known_[kids[0]])
      if (const auto pieces = view_pieces_strides(node, *in)) {
        for (size_t i = 0; i < pieces->size(); ++i) node.outputs[i].tensor.stride = (*pieces)[i];
        contiguous = false;  // per piece: getitem reads its strides
        return;
      }
    for (OutputSlot& s : node.outputs)
      if (s.kind == OutputSlot::Kind::Tensor) s.tensor.stride = contiguous_strides(s.tensor.shape);
    if (op_has(node.op, OpFact::OwnLayout) || op_has(node.op, OpFact::Aliases)) contiguous = false;
    known = contiguous;
  }

  const TensorEGraph& t_;
  const eg::Extraction& x_;
  const bool recompute_;
  const std::unordered_set<eg::Id>* recompute_only_;
  Graph out_;
  std::vector<NodeId> emitted_;        // by class id (its first copy)
  std::map<std::pair<eg::Id, size_t>, NodeId> copies_;  // further copies of recomputed values
  std::unordered_map<eg::Id, std::vector<NodeId>> class_sources_;  // by class: the source nodes in it
  std::unordered_map<eg::Id, std::vector<NodeId>> places_;         // by class: places_of's answer
  int64_t at_ = 0;                     // the source position being written (emit_one)
  std::vector<char> open_;             // by class id: its children are being written
  std::vector<int64_t> original_of_;   // by output node: the source node it copies, or -1
  std::vector<bool> contiguous_;       // by output node: its runtime layout is known contiguous
  std::vector<bool> known_;            // by output node: its strides (a tuple's: each result's) are the runtime ones
  std::unordered_set<size_t> taken_;   // k of each source name "sator_<k>" (fresh_name skips them)
  std::vector<char> used_;             // by source node: its name is written already
  size_t counter_ = 0;

 public:
  const std::vector<int64_t>& source_of() const { return original_of_; }
  std::vector<eg::Id> enode_of_;  // by output node: the e-node it writes (kNoId: a placeholder or the output)
};

Graph TensorEGraph::write(const eg::Extraction& x, std::vector<eg::Id>* enode_of, std::vector<int64_t>* source_of,
                          bool recompute, const std::unordered_set<eg::Id>* recompute_only) const {
  GraphWriter w(*this, x, recompute, recompute_only);
  Graph g = w.run();
  if (enode_of) {
    *enode_of = std::move(w.enode_of_);
    enode_of->resize(g.nodes.size(), eg::kNoId);
  }
  if (source_of) {
    *source_of = w.source_of();
    source_of->resize(g.nodes.size(), -1);
  }
  return g;
}

}  // namespace sator
