// Growing a chunkable region forward from an amplifier (region.h).
#include <algorithm>
#include <map>
#include <set>

#include "memory/peak_memory.h"
#include "chunk/region.h"
#include "ir/infer_context.h"
#include "ir/op_table.h"

namespace sator::chunk {

SymExpr Region::per_row(const SymExpr& size) const {
  auto q = size.exact_div(rows);
  return q ? *q : SymExpr(1);
}

namespace {

using State = ChunkState;

std::string_view base_name(std::string_view op) {
  // "aten.mul.Tensor" -> "mul.Tensor" is enough to tell ops apart here.
  return op.substr(op.find('.') + 1);
}

class Grower {
 public:
  Grower(const Graph& g, ShapeProver& prover) : g_(g), prover_(prover), needs_(g.nodes.size()) {}

  std::optional<Region> run(NodeId amp, int64_t dim, double large_bytes, std::string* why) {
    const TensorType* t = tensor_of(g_, amp);
    if (!t || dim < 0 || dim >= static_cast<int64_t>(t->shape.size())) return fail(why, "no such dim");
    r_.amplifier = amp;
    r_.amplifier_dim = dim;
    r_.rows = t->shape[static_cast<size_t>(dim)];
    r_.state.assign(g_.nodes.size(), std::nullopt);
    if (!seed(amp, dim)) return fail(why, "the amplifier cannot be chunked along dim " + std::to_string(dim));
    large_bytes_ = large_bytes;
    // Forward from the amplifier; then pull in the large tensors the region
    // reads sliced (the one-hot gradient of cross-entropy does not depend on
    // the logits, but is as large), and grow forward again from those.
    for (int round = 0; round < 8; ++round) {
      grow_forward();
      if (!pull_large_inputs()) break;
    }
    make_convex();
    trim(large_bytes);
    finish();
    if (r_.nodes.size() < 2) return fail(why, "nothing downstream of the amplifier can be chunked with it");
    refit_rows(t->shape[static_cast<size_t>(dim)]);
    return r_;
  }

 private:
  std::optional<Region> fail(std::string* why, const std::string& m) {
    if (why) *why = m;
    return std::nullopt;
  }

  void grow_forward() {
    for (NodeId id = first_region_node(); id < g_.nodes.size(); ++id) {
      if (in(id) || !touches_region(id)) continue;
      if (auto s = rule(id)) r_.state[id] = *s;
      else needs_[id].clear();
    }
  }

  NodeId first_region_node() const {
    for (NodeId id = 0; id < g_.nodes.size(); ++id)
      if (in(id)) return id;
    return 0;
  }

  bool large(NodeId id) const { return type(id) && memory::tensor_bytes(g_, *type(id)) >= large_bytes_; }

  // Sliced needs on large computed tensors become region nodes (pull): true
  // when any did.
  bool pull_large_inputs() {
    bool pulled = false;
    for (NodeId id = 0; id < g_.nodes.size(); ++id) {
      if (!in(id)) continue;
      std::vector<RegionInput> kept;
      for (const RegionInput& need : needs_[id]) {
        if (need.dim >= 0 && !need.recreate && (in(need.node) || pull(need.node, need.dim, need.size, 0))) {
          pulled = true;
          continue;
        }
        kept.push_back(need);
      }
      needs_[id] = std::move(kept);
    }
    return pulled;
  }

  // Makes `x` a region node sliced along `o` when it is large, its op has a
  // rule that says which of its arguments to slice, and those can be sliced
  // (or pulled in turn).
  bool pull(NodeId x, int64_t o, const SymExpr& size, int depth) {
    if (in(x)) return r_.state[x]->kind == State::Kind::Sliced && r_.state[x]->dim == o;
    const Node& n = g_.nodes[x];
    const OpInfo* op = find_op(n.op);
    if (depth > 16 || !op || !op->shape_fn || !large(x) || n.result != Node::Result::Tensor) return false;
    const std::string_view name = base_name(n.op);
    const size_t ro = rank(x);
    std::vector<std::pair<NodeId, int64_t>> wanted;  // argument, dim (-1: whole)
    try {
      InferContext ctx(g_, n, *op, prover_);
      if (op->cls == OpClass::Pointwise) {
        for (NodeId a : tensor_args(n)) {
          const int64_t ea = o - (static_cast<int64_t>(ro) - static_cast<int64_t>(rank(a)));
          wanted.push_back({a, ea < 0 || eq(type(a)->shape[static_cast<size_t>(ea)], 1) ? -1 : ea});
        }
      } else if (name == "gather.default" || name == "scatter.value" || name == "scatter.src") {
        if (ctx.wrap_dim(ctx.int_arg("dim"), ro) == static_cast<size_t>(o)) return false;
        for (const char* p : {"self", "index", "src"}) {
          if (std::string_view(p) == "src" && name != "scatter.src") continue;
          if (!eq(ctx.tensor(p).shape.at(static_cast<size_t>(o)), size)) return false;
          wanted.push_back({ctx.arg(p).node, o});
        }
      } else {
        return false;
      }
    } catch (const ShapeError&) {
      return false;
    }
    if (!fit_rows(size)) return false;
    std::vector<RegionInput> needs;
    for (const auto& [a, dim] : wanted) {
      if (dim < 0) needs.push_back({a, -1, {}});
      else if (in(a) ? !(r_.state[a]->kind == State::Kind::Sliced && r_.state[a]->dim == dim)
                     : !pull(a, dim, size, depth + 1))
        needs.push_back(sliced_input(a, dim, size));
    }
    r_.state[x] = State{State::Kind::Sliced, o, size};
    needs_[x] = std::move(needs);
    return true;
  }

  const TensorType* type(NodeId id) const { return tensor_of(g_, id); }
  size_t rank(NodeId id) const { return type(id) ? type(id)->shape.size() : 0; }
  bool in(NodeId id) const { return r_.state[id].has_value(); }
  bool eq(const SymExpr& a, const SymExpr& b) { return prover_.is_equal(a, b); }

  bool touches_region(NodeId id) const {
    bool any = false;
    auto see = [&](NodeId a) { any |= in(a); };
    for (const Value& v : g_.nodes[id].args) v.for_each_node(see);
    for (const auto& kv : g_.nodes[id].kwargs) kv.second.for_each_node(see);
    return any;
  }

  // Every Sliced size must be a whole multiple of the row count; a coarser
  // size becomes the row count (rows of the batch instead of tokens).
  bool fit_rows(const SymExpr& size) {
    if (size.exact_div(r_.rows)) return true;
    if (r_.rows.exact_div(size)) {
      r_.rows = size;
      return true;
    }
    return false;
  }

  // Growing coarsened the rows at every Sliced size it met (a view of the
  // tokens as batch x sequence makes them the batch), including at nodes
  // that make_convex and trim then dropped. The rows are fitted again to
  // the region as it ends, so that only what it still holds coarsens them:
  // an LM head and loss over the flattened tokens chunk by tokens, not by
  // sequences, and a batch of 2 is not 2 chunks at most. Where the sizes
  // left do not fit one another from the amplifier's size, the rows grown
  // with are kept (every size left is a multiple of them).
  void refit_rows(const SymExpr& amplifier_size) {
    const SymExpr grown = r_.rows;
    r_.rows = amplifier_size;
    bool fits = true;
    for (size_t i = 0; i < r_.nodes.size() && fits; ++i) {
      const State& st = *r_.state[r_.nodes[i]];
      if (st.kind == State::Kind::Sliced) fits = fit_rows(st.size);
      for (const RegionInput& need : r_.needs[i])
        if (fits && need.dim >= 0) fits = fit_rows(need.size);
    }
    if (!fits) r_.rows = grown;
  }

  bool seed(NodeId amp, int64_t dim) {
    // The amplifier's own rule decides which of its inputs are sliced.
    const Node& n = g_.nodes[amp];
    std::vector<RegionInput> needs;
    if (!matmul_seed(n, dim, needs)) return false;
    needs_[amp] = needs;
    r_.state[amp] = State{State::Kind::Sliced, dim, type(amp)->shape[static_cast<size_t>(dim)]};
    return fit_rows(type(amp)->shape[static_cast<size_t>(dim)]);
  }

  // The amplifier (a matmul) chunked along an output dim that is not
  // contracted: which inputs are sliced along which dim.
  bool matmul_seed(const Node& n, int64_t d, std::vector<RegionInput>& needs) {
    const OpInfo* op = find_op(n.op);
    if (!op || op->cls != OpClass::Matmul) return false;
    InferContext ctx(g_, n, *op, prover_);
    const std::string_view name = base_name(n.op);
    const size_t ro = rank(static_cast<NodeId>(&n - g_.nodes.data()));
    auto node_of = [&](const char* p) { return ctx.arg(p).node; };
    const TensorType& out = *type(static_cast<NodeId>(&n - g_.nodes.data()));
    const SymExpr size = out.shape[static_cast<size_t>(d)];
    if (name == "linear.default") {
      if (static_cast<size_t>(d) + 1 < ro) {
        needs.push_back({node_of("input"), d, size});
        needs.push_back({node_of("weight"), -1, {}});
      } else {
        needs.push_back({node_of("input"), -1, {}});
        needs.push_back({node_of("weight"), 0, size});
      }
      if (!ctx.is_none("bias")) needs.push_back({node_of("bias"), static_cast<size_t>(d) + 1 < ro ? -1 : 0, size});
      return true;
    }
    if (name == "mm.default" || name == "addmm.default") {
      needs.push_back({node_of(name == "mm.default" ? "self" : "mat1"), d == 0 ? 0 : -1, size});
      needs.push_back({node_of("mat2"), d == 1 ? 1 : -1, size});
      if (name == "addmm.default") {
        const TensorType& b = ctx.tensor("self");
        const int64_t bd = d - static_cast<int64_t>(2 - b.shape.size());
        needs.push_back({node_of("self"), bd >= 0 && !eq(b.shape[static_cast<size_t>(bd)], 1) ? bd : -1, size});
      }
      return true;
    }
    if (name == "bmm.default") {
      needs.push_back({node_of("self"), d == 0 || d == 1 ? d : -1, size});
      needs.push_back({node_of("mat2"), d == 0 ? 0 : d == 2 ? 2 : -1, size});
      return true;
    }
    return false;
  }

  // The state of node `id` from its arguments', recording what it needs from
  // outside the region; nullopt when no rule fits.
  std::optional<State> rule(NodeId id) {
    const Node& n = g_.nodes[id];
    const OpInfo* op = find_op(n.op);
    if (!op || !op->shape_fn || n.result != Node::Result::Tensor) return std::nullopt;
    std::vector<RegionInput>& needs = needs_[id];
    needs.clear();
    try {
      InferContext ctx(g_, n, *op, prover_);
      const std::string_view name = base_name(n.op);
      std::optional<State> s;
      if (op->cls == OpClass::Pointwise) s = pointwise(id, name, needs);
      else if (op->cls == OpClass::Reduction) s = reduction(ctx, id, name);
      else if (op->cls == OpClass::Layout) s = layout(ctx, id, name);
      else if (op->cls == OpClass::Matmul) s = matmul(ctx, id, name, needs);
      else if (name == "gather.default" || name == "scatter.value" || name == "scatter.src") s = indexed(ctx, id, name, needs);
      if (s && s->kind == State::Kind::Sliced && !fit_rows(s->size)) return std::nullopt;
      for (const RegionInput& need : needs)
        if (need.dim >= 0 && !fit_rows(need.size)) return std::nullopt;
      return s;
    } catch (const ShapeError&) {
      return std::nullopt;
    }
  }

  // Tensor arguments of a node (node references with a tensor type).
  std::vector<NodeId> tensor_args(const Node& n) const {
    std::vector<NodeId> out;
    for (const Value& v : n.args)
      v.for_each_node([&](NodeId a) { if (type(a)) out.push_back(a); });
    for (const auto& kv : n.kwargs)
      kv.second.for_each_node([&](NodeId a) { if (type(a)) out.push_back(a); });
    return out;
  }

  RegionInput sliced_input(NodeId a, int64_t dim, const SymExpr& size) const {
    return RegionInput{a, dim, size, g_.nodes[a].op == "aten.full.default"};
  }

  std::optional<State> pointwise(NodeId id, std::string_view name, std::vector<RegionInput>& needs) {
    const size_t ro = rank(id);
    const TensorType& out = *type(id);
    int64_t o = -1;
    int partial = 0, sliced = 0;
    const std::vector<NodeId> args = tensor_args(g_.nodes[id]);
    for (NodeId a : args) {
      if (!in(a)) continue;
      const State& s = *r_.state[a];
      if (s.kind == State::Kind::Partial) {
        ++partial;
        continue;
      }
      ++sliced;
      const int64_t oa = s.dim + static_cast<int64_t>(ro) - static_cast<int64_t>(rank(a));
      if (o >= 0 && o != oa) return std::nullopt;
      o = oa;
    }
    if (partial && sliced) return std::nullopt;
    if (partial) {
      // Only what is linear in the partial sums keeps them partial.
      const bool one = partial == 1;
      const bool linear = name == "neg.default" || name == "convert_element_type.default" || name == "clone.default" ||
                          ((name == "mul.Tensor" || name == "mul.Scalar") && one) ||
                          ((name == "div.Tensor" || name == "div.Scalar") && one && in(args.front())) ||
                          ((name == "add.Tensor" || name == "sub.Tensor") && partial == static_cast<int>(args.size()));
      if (!linear) return std::nullopt;
      for (NodeId a : args)
        if (!in(a)) needs.push_back({a, -1, {}});
      return State{State::Kind::Partial, 0, {}};
    }
    const SymExpr size = out.shape[static_cast<size_t>(o)];
    for (NodeId a : args) {
      if (in(a)) continue;
      const int64_t ea = o - (static_cast<int64_t>(ro) - static_cast<int64_t>(rank(a)));
      if (ea < 0 || eq(type(a)->shape[static_cast<size_t>(ea)], 1)) needs.push_back({a, -1, {}});
      else needs.push_back(sliced_input(a, ea, size));
    }
    return State{State::Kind::Sliced, o, size};
  }

  std::optional<State> reduction(InferContext& ctx, NodeId id, std::string_view name) {
    const Node& n = g_.nodes[id];
    const NodeId self = n.args.at(0).node;
    if (!n.args.at(0).is_node() || !in(self)) return std::nullopt;
    const State& s = *r_.state[self];
    const bool is_sum = name == "sum.dim_IntList" || name == "sum.default";
    if (s.kind == State::Kind::Partial) return is_sum ? std::optional<State>(State{State::Kind::Partial, 0, {}}) : std::nullopt;
    const size_t ri = rank(self);
    std::vector<size_t> dims;
    bool keepdim = false;
    if (name == "sum.default") {
      for (size_t i = 0; i < ri; ++i) dims.push_back(i);
    } else if (name == "sum.dim_IntList" || name == "amax.default" || name == "amin.default" || name == "mean.dim") {
      if (!ctx.is_none("dim"))
        for (int64_t d : ctx.int_list("dim")) dims.push_back(ctx.wrap_dim(d, ri));
      if (dims.empty())
        for (size_t i = 0; i < ri; ++i) dims.push_back(i);
      keepdim = ctx.bool_arg("keepdim");
    } else {
      return std::nullopt;
    }
    const auto d = static_cast<size_t>(s.dim);
    if (std::find(dims.begin(), dims.end(), d) != dims.end())
      return is_sum ? std::optional<State>(State{State::Kind::Partial, 0, {}}) : std::nullopt;
    const int64_t before = std::count_if(dims.begin(), dims.end(), [&](size_t x) { return x < d; });
    const int64_t o = keepdim ? s.dim : s.dim - before;
    return State{State::Kind::Sliced, o, type(id)->shape[static_cast<size_t>(o)]};
  }

  std::optional<State> layout(InferContext& ctx, NodeId id, std::string_view name) {
    const Node& n = g_.nodes[id];
    if (n.args.empty() || !n.args[0].is_node() || !in(n.args[0].node)) return std::nullopt;
    for (NodeId a : tensor_args(n))
      if (a != n.args[0].node) return std::nullopt;
    const NodeId self = n.args[0].node;
    const State& s = *r_.state[self];
    if (s.kind == State::Kind::Partial) return State{State::Kind::Partial, 0, {}};  // layout is linear
    const TensorType& ti = *type(self);
    const TensorType& to = *type(id);
    const size_t ri = ti.shape.size(), ro = to.shape.size();
    const auto d = static_cast<size_t>(s.dim);
    int64_t o = -1;
    if (name == "clone.default" || name == "alias.default" || name == "detach.default") {
      o = s.dim;
    } else if (name == "permute.default") {
      const auto perm = ctx.int_list("dims");
      for (size_t i = 0; i < perm.size(); ++i)
        if (ctx.wrap_dim(perm[i], ri) == d) o = static_cast<int64_t>(i);
    } else if (name == "transpose.int") {
      const size_t a = ctx.wrap_dim(ctx.int_arg("dim0"), ri), b = ctx.wrap_dim(ctx.int_arg("dim1"), ri);
      o = static_cast<int64_t>(d == a ? b : d == b ? a : d);
    } else if (name == "t.default") {
      o = ri == 2 ? static_cast<int64_t>(1 - d) : s.dim;
    } else if (name == "unsqueeze.default") {
      const size_t u = ctx.wrap_dim(ctx.int_arg("dim"), ri + 1);
      o = s.dim + (u <= d ? 1 : 0);
    } else if (name == "squeeze.dim" || name == "squeeze.dims" || name == "squeeze.default") {
      // Only size-1 dims go, and the chunked dim is never size 1.
      int64_t removed = 0;
      for (size_t i = 0, j = 0; i < ri; ++i) {
        if (j < ro && eq(ti.shape[i], to.shape[j]) && !(eq(ti.shape[i], 1) && ri - i > ro - j)) ++j;
        else if (i < d) ++removed;
      }
      o = s.dim - removed;
    } else if (name == "expand.default") {
      o = s.dim + static_cast<int64_t>(ro - ri);
    } else if (name == "view.default" || name == "_unsafe_view.default" || name == "reshape.default") {
      o = regroup(ti.shape, to.shape, d);
    }
    if (o < 0 || o >= static_cast<int64_t>(ro)) return std::nullopt;
    // Only a view may change the dim's size (rows of a batch into tokens).
    const bool view = name == "view.default" || name == "_unsafe_view.default" || name == "reshape.default";
    if (!view && !eq(to.shape[static_cast<size_t>(o)], s.size)) return std::nullopt;
    return State{State::Kind::Sliced, o, to.shape[static_cast<size_t>(o)]};
  }

  // A view keeps a dim's rows together when the dims before it hold as many
  // elements before and after (same prefix) and it is the outermost non-1
  // dim of what follows: then rows [a, b) of the input are one block per
  // prefix, and so are they in the output dim found here.
  int64_t regroup(const std::vector<SymExpr>& in, const std::vector<SymExpr>& out, size_t d) {
    SymExpr prefix_in(1);
    for (size_t i = 0; i < d; ++i) prefix_in = prefix_in * in[i];
    SymExpr prefix_out(1);
    for (size_t o = 0; o < out.size(); ++o) {
      if (eq(prefix_out, prefix_in) && !eq(out[o], 1)) return static_cast<int64_t>(o);
      prefix_out = prefix_out * out[o];
    }
    return -1;
  }

  std::optional<State> matmul(InferContext& ctx, NodeId id, std::string_view name, std::vector<RegionInput>& needs) {
    const TensorType& out = *type(id);
    auto st = [&](const char* p) -> std::optional<State> {
      const Value& v = ctx.arg(p);
      return v.is_node() && in(v.node) ? r_.state[v.node] : std::nullopt;
    };
    auto node_of = [&](const char* p) { return ctx.arg(p).node; };
    // (a, b): the two matrix operands; batch: leading dims shared by both (bmm).
    const bool lin = name == "linear.default";
    const char* pa = lin ? "input" : name == "addmm.default" ? "mat1" : "self";
    const char* pb = lin ? "weight" : "mat2";
    if (name != "mm.default" && name != "bmm.default" && !lin) return std::nullopt;
    const auto sa = st(pa), sb = st(pb);
    const size_t ra = ctx.tensor(pa).shape.size(), rb = ctx.tensor(pb).shape.size();
    // Which dim of each operand is contracted.
    const size_t a_contract = ra - 1;
    const size_t b_contract = lin ? rb - 1 : rb - 2;
    if (sa && sb) {
      // Both chunked alike: a contraction over the rows on both sides is a
      // sum over the chunks (aᵀb = Σ a_cᵀ b_c); bmm's batch on both sides
      // stays sliced. Anything else pairs rows of different chunks.
      if (sa->kind != State::Kind::Sliced || sb->kind != State::Kind::Sliced || !eq(sa->size, sb->size)) return std::nullopt;
      if (lin && !ctx.is_none("bias")) return std::nullopt;
      if (static_cast<size_t>(sa->dim) == a_contract && static_cast<size_t>(sb->dim) == b_contract)
        return State{State::Kind::Partial, 0, {}};
      if (name == "bmm.default" && sa->dim == 0 && sb->dim == 0) return State{State::Kind::Sliced, 0, out.shape[0]};
      return std::nullopt;
    }
    const std::optional<State> s = sa ? sa : sb;
    const bool on_a = sa.has_value();
    if (s->kind == State::Kind::Partial) {
      if (lin && !ctx.is_none("bias")) return std::nullopt;
      needs.push_back({node_of(on_a ? pb : pa), -1, {}});
      return State{State::Kind::Partial, 0, {}};
    }
    const auto d = static_cast<size_t>(s->dim);
    const bool batch = name == "bmm.default" && d == 0;
    const bool contract = on_a ? d == a_contract : d == b_contract;
    if (batch) {
      needs.push_back(sliced_input(node_of(on_a ? pb : pa), 0, s->size));
      return State{State::Kind::Sliced, 0, out.shape[0]};
    }
    if (contract) {
      if (lin && !ctx.is_none("bias")) return std::nullopt;
      needs.push_back(sliced_input(node_of(on_a ? pb : pa), static_cast<int64_t>(on_a ? b_contract : a_contract), s->size));
      return State{State::Kind::Partial, 0, {}};
    }
    needs.push_back({node_of(on_a ? pb : pa), -1, {}});
    if (lin && !ctx.is_none("bias")) {
      if (on_a) needs.push_back({node_of("bias"), -1, {}});
      else needs.push_back(sliced_input(node_of("bias"), 0, s->size));
    }
    // Output dims: a's rows (all but its contracted dim), then b's columns.
    int64_t o;
    if (on_a) o = s->dim;
    else o = lin ? static_cast<int64_t>(out.shape.size()) - 1 : static_cast<int64_t>(out.shape.size()) - 1;
    return State{State::Kind::Sliced, o, out.shape[static_cast<size_t>(o)]};
  }

  std::optional<State> indexed(InferContext& ctx, NodeId id, std::string_view name, std::vector<RegionInput>& needs) {
    const TensorType& out = *type(id);
    const size_t r = out.shape.size();
    const size_t along = ctx.wrap_dim(ctx.int_arg("dim"), r);
    std::vector<const char*> params = {"self", "index"};
    if (name == "scatter.src") params.push_back("src");
    int64_t o = -1;
    for (const char* p : params) {
      const Value& v = ctx.arg(p);
      if (!v.is_node() || !in(v.node)) continue;
      const State& s = *r_.state[v.node];
      if (s.kind == State::Kind::Partial || (o >= 0 && o != s.dim)) return std::nullopt;
      o = s.dim;
    }
    if (o < 0 || static_cast<size_t>(o) == along) return std::nullopt;
    const SymExpr size = out.shape[static_cast<size_t>(o)];
    for (const char* p : params) {
      const Value& v = ctx.arg(p);
      if (in(v.node)) continue;
      if (!eq(ctx.tensor(p).shape.at(static_cast<size_t>(o)), size)) return std::nullopt;
      needs.push_back(sliced_input(v.node, o, size));
    }
    return State{State::Kind::Sliced, o, size};
  }

  // A node outside the region that depends on it must not feed it back:
  // such region nodes leave the region until none is left.
  void make_convex() {
    for (bool changed = true; changed;) {
      changed = false;
      std::vector<bool> tainted(g_.nodes.size(), false);
      for (NodeId id = first_region_node(); id < g_.nodes.size(); ++id) {
        bool from_region = false, from_tainted = false;
        auto see = [&](NodeId a) {
          from_region |= in(a);
          from_tainted |= tainted[a];
        };
        for (const Value& v : g_.nodes[id].args) v.for_each_node(see);
        for (const auto& kv : g_.nodes[id].kwargs) kv.second.for_each_node(see);
        if (in(id) && from_tainted) {
          r_.state[id].reset();
          changed = true;
        }
        if (!in(id)) tainted[id] = from_region || from_tainted;
      }
    }
  }

  void trim(double large_bytes) {
    const size_t n = g_.nodes.size();
    std::vector<bool> keep(n, false);
    auto large = [&](NodeId id) { return in(id) && type(id) && memory::tensor_bytes(g_, *type(id)) >= large_bytes; };
    keep[r_.amplifier] = true;
    for (NodeId id = 0; id < n; ++id) {
      if (!in(id)) continue;
      bool big_arg = false;
      for (NodeId a : tensor_args(g_.nodes[id])) big_arg |= large(a);
      if (large(id) || big_arg) keep[id] = true;
      // A partial sum's widening convert: sum the chunks in the wider type
      // (apply.cpp folds it into the sum itself: ChunkCombine::Sum widens).
      const Node& node = g_.nodes[id];
      if (node.op == "prims.convert_element_type.default" && !node.args.empty() && node.args[0].is_node() &&
          keep[node.args[0].node] && r_.state[id]->kind == State::Kind::Partial &&
          dtype_bytes(type(id)->dtype) > dtype_bytes(type(node.args[0].node)->dtype))
        keep[id] = true;
    }
    // What the kept nodes compute from inside the region stays too.
    for (NodeId id = static_cast<NodeId>(n); id-- > 0;)
      if (keep[id])
        for (NodeId a : tensor_args(g_.nodes[id]))
          if (in(a)) keep[a] = true;
    for (NodeId id = 0; id < n; ++id)
      if (in(id) && !keep[id]) r_.state[id].reset();
  }

  void finish() {
    std::vector<bool> used_outside(g_.nodes.size(), false);
    for (NodeId id = 0; id < g_.nodes.size(); ++id) {
      if (in(id)) {
        const Node& n = g_.nodes[id];
        // Tensor arguments the rules passed over are read whole (symint
        // sizes become expressions in the body).
        for (const Value& v : n.args)
          v.for_each_node([&](NodeId a) {
            if (!in(a) && type(a) && std::none_of(needs_[id].begin(), needs_[id].end(), [&](const RegionInput& x) { return x.node == a; }))
              needs_[id].push_back({a, -1, {}});
          });
        r_.nodes.push_back(id);
        r_.needs.push_back(needs_[id]);
        for (const RegionInput& need : needs_[id])
          if (std::find(r_.inputs.begin(), r_.inputs.end(), need) == r_.inputs.end()) r_.inputs.push_back(need);
        continue;
      }
      auto see = [&](NodeId a) { if (in(a)) used_outside[a] = true; };
      for (const Value& v : g_.nodes[id].args) v.for_each_node(see);
      for (const auto& kv : g_.nodes[id].kwargs) kv.second.for_each_node(see);
    }
    for (NodeId id : r_.nodes)
      if (used_outside[id]) r_.outputs.push_back(id);
  }

  const Graph& g_;
  ShapeProver& prover_;
  Region r_;
  std::vector<std::vector<RegionInput>> needs_;
  double large_bytes_ = 0;
};

}  // namespace

std::optional<Region> grow_region(const Graph& g, ShapeProver& prover, NodeId amplifier, int64_t dim,
                                  double large_bytes, std::string* why) {
  Grower grower(g, prover);
  return grower.run(amplifier, dim, large_bytes, why);
}

}  // namespace sator::chunk
