// Sums of attention's key gradient over the keys are zero (key_gradient_sum.h).
#include "rules/key_gradient_sum.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "rules/attention_builder.h"

namespace sator::rules {

const std::vector<RuleInfo>& key_gradient_rule_info() {
  static const std::vector<RuleInfo> info = {
      {"key-gradient-sum-zero",
       "sum(x, D) = the sum of x's other terms when x = layout(... + dK + ...) through views, permutes, keepdim sums "
       "and adds, dK = _scaled_dot_product_efficient_attention_backward(..., O, lse, seed, offset, ...)[1] of its own "
       "forward, and D covers the keys' axis: Σ_j dK_j = 0 (softmax ignores a shift of its row); zeros when no term is left"},
  };
  return info;
}

namespace {

using eg::Subst;

constexpr const char* kBackward = "aten._scaled_dot_product_efficient_attention_backward.default";
constexpr int kMaxDepth = 8;  // views, permutes, sums and adds between the sum and dK

// What summing a class over some of its dims comes to once the key gradients
// in it are dropped: nothing found (the rule does not apply there), zero, or
// a class holding the rest's sum (keepdim shape).
struct Reduced {
  bool found = false;
  bool zero = false;
  Id id = kNoId;
};

// A walk from a sum's argument down to dK. `dims` are the summed dims in the
// current class's coordinates (sorted). `zero_only`: a view below split a
// dim and the sum covers only part of it; a sum of the rest could not be
// written in the lower coordinates, but zero is zero in any.
class KeyGradientSum {
 public:
  KeyGradientSum(AttentionBuilder& b, eg::EGraph& g, const NodeAttrs& sum_attrs) : b_(b), g_(g), sum_(sum_attrs) {}

  Reduced reduce(Id cls, const std::vector<int64_t>& dims, int depth, bool zero_only) {
    cls = g_.find(cls);
    const auto key = std::make_tuple(cls, dims, zero_only);
    if (depth > kMaxDepth || !open_.insert(key).second) return {};  // a cycle, or too deep
    Reduced r = reduce_nodes(cls, dims, depth, zero_only);
    open_.erase(key);
    if (zero_only && r.found && !r.zero) return {};
    return r;
  }

  // sum(x, dims, keepdim=True) with the matched sum's other arguments (its dtype).
  Id plain_sum(Id x, const std::vector<int64_t>& dims) {
    NodeAttrs a = sum_;
    std::vector<Value> d;
    for (int64_t i : dims) d.push_back(Value::of_int(i));
    a.args = {Value::of_node(0), Value::of_list(std::move(d)), Value::of_bool(true)};
    return b_.add(g_, "aten.sum.dim_IntList", a, {x});
  }

 private:
  Reduced reduce_nodes(Id cls, const std::vector<int64_t>& dims, int depth, bool zero_only) {
    const auto* shape = b_.shape(cls);
    if (!shape) return {};
    std::vector<Id> nodes(g_.class_nodes(cls).begin(), g_.class_nodes(cls).end());  // adding moves the list
    for (Id n : nodes) {
      const std::string& op = b_.t.lang.op_name(g_.op(n));
      if (op == "getitem" && is_key_gradient(n) && shape->size() == 4 &&
          std::count(dims.begin(), dims.end(), 2) == 1)
        return {true, true, kNoId};
      Reduced r;
      if (op == "aten.add.Tensor") r = through_add(n, *shape, dims, depth, zero_only);
      else if (op == "aten.permute.default") r = through_permute(n, shape->size(), dims, depth, zero_only);
      else if (op == "aten.view.default") r = through_view(n, *shape, dims, depth, zero_only);
      else if (op == "aten.sum.dim_IntList") r = through_sum(n, shape->size(), dims, depth, zero_only);
      if (r.found) return r;
    }
    return {};
  }

  Reduced through_add(Id n, const std::vector<SymExpr>& shape, const std::vector<int64_t>& dims, int depth,
                      bool zero_only) {
    const NodeAttrs& a = b_.attrs(g_, n);
    if (g_.children(n).size() != 2 || !a.kwargs.empty() || a.args.size() != 2) return {};
    const Id x = b_.child(g_, n, 0), y = b_.child(g_, n, 1);
    const auto *sx = b_.shape(x), *sy = b_.shape(y);
    if (!sx || !sy || !b_.same_dims(*sx, shape) || !b_.same_dims(*sy, shape) || b_.dtype(g_, x) != b_.dtype(g_, y))
      return {};  // broadcasting or promoting adds are left alone
    Reduced rx = reduce(x, dims, depth + 1, zero_only), ry = reduce(y, dims, depth + 1, zero_only);
    if (!rx.found && !ry.found) return {};
    if (rx.zero && ry.zero) return {true, true, kNoId};
    if (zero_only) return {};
    if (rx.zero || ry.zero) {
      const Reduced& other = rx.zero ? ry : rx;
      return {true, false, other.found ? other.id : plain_sum(rx.zero ? y : x, dims)};
    }
    NodeAttrs sum_attrs;
    sum_attrs.args = {Value::of_node(0), Value::of_node(1)};
    const Id tx = rx.found ? rx.id : plain_sum(x, dims), ty = ry.found ? ry.id : plain_sum(y, dims);
    return {true, false, b_.add(g_, "aten.add.Tensor", sum_attrs, {tx, ty})};
  }

  Reduced through_permute(Id n, size_t rank, const std::vector<int64_t>& dims, int depth, bool zero_only) {
    const NodeAttrs& a = b_.attrs(g_, n);
    if (a.args.size() < 2) return {};
    const std::vector<int64_t> p = int_list(a.args[1], rank);
    if (p.size() != rank) return {};
    // out dim i is in dim p[i]
    std::vector<int64_t> in_dims;
    for (int64_t d : dims) in_dims.push_back(p[static_cast<size_t>(d)]);
    std::sort(in_dims.begin(), in_dims.end());
    const Id x = b_.child(g_, n, 0);
    Reduced r = reduce(x, in_dims, depth + 1, zero_only);
    if (!r.found || r.zero) return r;
    NodeAttrs pa;
    std::vector<Value> pv;
    for (int64_t i : p) pv.push_back(Value::of_int(i));
    pa.args = {Value::of_node(0), Value::of_list(std::move(pv))};
    return {true, false, b_.add(g_, "aten.permute.default", pa, {r.id})};
  }

  // sum(y, d', keepdim=True) summed over dims is y summed over dims ∪ d'.
  Reduced through_sum(Id n, size_t rank, const std::vector<int64_t>& dims, int depth, bool zero_only) {
    const NodeAttrs& a = b_.attrs(g_, n);
    const Id y = b_.child(g_, n, 0);
    const auto* sy = b_.shape(y);
    const bool keepdim = a.args.size() > 2 && a.args[2].kind == Value::Kind::Bool && a.args[2].b;
    if (!sy || sy->size() != rank || !keepdim || !a.kwargs.empty() || a.args[1].kind != Value::Kind::List) return {};
    std::vector<int64_t> all = int_list(a.args[1], rank);
    all.insert(all.end(), dims.begin(), dims.end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    return reduce(y, all, depth + 1, zero_only);
  }

  std::optional<int64_t> at_hints(const SymExpr& e) const {
    return e.evaluate([this](const std::string& name) -> std::optional<int64_t> {
      const Symbol* sym = b_.t.source().find_symbol(name);
      return sym ? std::optional<int64_t>(sym->hint) : std::nullopt;
    });
  }

  // A view's dims in groups: runs of input dims and runs of output dims with
  // the same number of elements, the finest such split (1s join a
  // neighbour). Merges, splits and both; nothing if the prover cannot tell.
  struct Group {
    std::vector<int64_t> in, out;
  };
  std::optional<std::vector<Group>> view_groups(const std::vector<SymExpr>& in, const std::vector<SymExpr>& out) const {
    std::vector<Group> groups;
    size_t i = 0, j = 0;
    while (i < in.size() || j < out.size()) {
      Group gr;
      SymExpr pi = 1, po = 1;
      // Take at least one dim of each side that has one left, then grow the smaller side.
      if (i < in.size()) pi = pi * in[i], gr.in.push_back(static_cast<int64_t>(i++));
      if (j < out.size()) po = po * out[j], gr.out.push_back(static_cast<int64_t>(j++));
      while (!b_.equal(pi, po)) {
        // Grow the side with fewer elements, compared at the symbols' hints;
        // the group closes only when the prover finds both products equal.
        const auto hi = at_hints(pi), ho = at_hints(po);
        if (!hi || !ho || *hi == *ho) return std::nullopt;
        const bool grow_in = *hi < *ho;
        if (grow_in ? i >= in.size() : j >= out.size()) return std::nullopt;
        if (grow_in) pi = pi * in[i], gr.in.push_back(static_cast<int64_t>(i++));
        else po = po * out[j], gr.out.push_back(static_cast<int64_t>(j++));
      }
      groups.push_back(std::move(gr));
    }
    return groups;
  }

  Reduced through_view(Id n, const std::vector<SymExpr>& out, const std::vector<int64_t>& dims, int depth,
                       bool zero_only) {
    const Id x = b_.child(g_, n, 0);
    const auto* in = b_.shape(x);
    if (!in) return {};
    const auto groups = view_groups(*in, out);
    if (!groups) return {};
    std::vector<int64_t> in_dims;
    bool partial = false;
    for (const Group& gr : *groups) {
      const auto summed = static_cast<size_t>(std::count_if(gr.out.begin(), gr.out.end(), [&](int64_t d) {
        return std::binary_search(dims.begin(), dims.end(), d);
      }));
      if (summed == gr.out.size() && summed > 0) in_dims.insert(in_dims.end(), gr.in.begin(), gr.in.end());
      else if (summed > 0) partial = true;  // part of a split dim: only a zero carries over
    }
    std::sort(in_dims.begin(), in_dims.end());
    Reduced r = reduce(x, in_dims, depth + 1, zero_only || partial);
    if (!r.found || r.zero) return r;
    std::vector<SymExpr> kept = out;
    for (int64_t d : dims) kept[static_cast<size_t>(d)] = 1;
    return {true, false, g_.add(b_.t.lang.op("aten.view.default"), b_.t.lang.view_attr(kept), std::vector<Id>{r.id})};
  }

  // The child class behind argument `i` of node n (kNoId if not a node).
  Id arg_class(Id n, size_t i) const {
    const NodeAttrs& a = b_.attrs(g_, n);
    if (i >= a.args.size() || a.args[i].kind != Value::Kind::Node) return kNoId;
    return b_.child(g_, n, a.args[i].node);
  }

  // getitem(fwd, item) in class c for the forward kernel node fwd.
  bool holds_item(Id c, Id fwd, int64_t item) const {
    for (Id n : b_.nodes(g_, c, "getitem")) {
      const NodeAttrs& a = b_.attrs(g_, n);
      if (a.args.size() == 2 && a.args[1].kind == Value::Kind::Int && a.args[1].i == item && b_.child(g_, n, 0) == g_.find(fwd))
        return true;
    }
    return false;
  }

  static const Value* kwarg(const NodeAttrs& a, const char* key) {
    for (const auto& [k, v] : a.kwargs)
      if (k == key) return &v;
    return nullptr;
  }

  // n = getitem(bwd, 1), bwd the efficient backward of its own forward: the
  // forward on the same q, k, v and bias, with the same dropout, causality and
  // scale, whose output, log-sum-exp and dropout seed the backward takes.
  bool is_key_gradient(Id n) const {
    const NodeAttrs& ga = b_.attrs(g_, n);
    if (ga.args.size() != 2 || ga.args[1].kind != Value::Kind::Int || ga.args[1].i != 1) return false;
    for (Id bwd : b_.nodes(g_, b_.child(g_, n, 0), kBackward)) {
      const NodeAttrs& ba = b_.attrs(g_, bwd);
      if (ba.args.size() < 12) continue;
      const Id out = arg_class(bwd, 5), lse = arg_class(bwd, 6), seed = arg_class(bwd, 7), offset = arg_class(bwd, 8);
      if (out == kNoId || lse == kNoId) continue;
      for (Id item : b_.nodes(g_, out, "getitem")) {
        const Id fwd_class = b_.child(g_, item, 0);
        for (Id fwd : b_.nodes(g_, fwd_class, "aten._scaled_dot_product_efficient_attention.default")) {
          const NodeAttrs& fa = b_.attrs(g_, fwd);
          if (fa.args.size() < 7) continue;
          bool same = true;
          for (size_t i = 0; i < 4 && same; ++i) same = arg_class(fwd, i) == arg_class(bwd, i + 1);
          same = same && (fa.args[3].kind == Value::Kind::Node) == (ba.args[4].kind == Value::Kind::Node);
          same = same && fa.args[5] == ba.args[9] && fa.args[6] == ba.args[11];
          const Value *fs = kwarg(fa, "scale"), *bs = kwarg(ba, "scale");
          same = same && (fs == nullptr) == (bs == nullptr) && (!fs || *fs == *bs);
          const bool dropout = !(ba.args[9].kind == Value::Kind::Float && ba.args[9].f == 0.0) &&
                               !(ba.args[9].kind == Value::Kind::Int && ba.args[9].i == 0);
          if (same && holds_item(out, fwd, 0) && holds_item(lse, fwd, 1) &&
              (!dropout || (seed != kNoId && offset != kNoId && holds_item(seed, fwd, 2) && holds_item(offset, fwd, 3))))
            return true;
        }
      }
    }
    return false;
  }

  AttentionBuilder& b_;
  eg::EGraph& g_;
  const NodeAttrs& sum_;
  std::set<std::tuple<Id, std::vector<int64_t>, bool>> open_;
};

}  // namespace

std::vector<eg::Rewrite> key_gradient_rules(TensorEGraph& t) {
  auto b = std::make_shared<AttentionBuilder>(AttentionBuilder{t});
  const std::optional<Value> device = graph_device(t.source());
  std::vector<eg::Rewrite> rs;
  rs.emplace_back("key-gradient-sum-zero", t.lang, "(aten.sum.dim_IntList@_ ?x)",
                  [b, device](eg::EGraph& g, Id eclass, Subst s) -> Id {
                    // No walk until the training rule (or the source) has put a
                    // backward kernel in the e-graph: ops are interned on first use.
                    if (!b->t.lang.find_op(kBackward)) return kNoId;
                    const NodeAttrs sum_attrs = b->attrs(g, s.root);  // a copy: adding nodes may move the table
                    const auto *in = b->shape(s[0]), *out = b->shape(eclass);
                    const auto dtype = b->dtype(g, eclass);
                    if (!in || !out || !dtype || sum_attrs.args.size() < 2 ||
                        sum_attrs.args[1].kind != Value::Kind::List || sum_attrs.args[1].list.empty())
                      return kNoId;
                    std::vector<int64_t> dims = int_list(sum_attrs.args[1], in->size());
                    std::sort(dims.begin(), dims.end());
                    dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
                    const bool keepdim = sum_attrs.args.size() > 2 && sum_attrs.args[2].kind == Value::Kind::Bool &&
                                         sum_attrs.args[2].b;
                    KeyGradientSum walk(*b, g, sum_attrs);
                    const Reduced r = walk.reduce(s[0], dims, 0, false);
                    if (!r.found) return kNoId;
                    if (r.zero) {
                      if (!device) return kNoId;  // zeros would land on the CPU
                      NodeAttrs fa;
                      std::vector<Value> sizes;
                      for (const SymExpr& e : *out) sizes.push_back(size_value(e));
                      fa.args = {Value::of_list(std::move(sizes)), Value::of_float(0.0)};
                      fa.kwargs = {{"dtype", Value::of_dtype(*dtype)},
                                   {"layout", Value::of_text(Value::Kind::Enum, "torch.strided")},
                                   {"device", *device},
                                   {"pin_memory", Value::of_bool(false)}};
                      return b->add(g, "aten.full.default", fa, {});
                    }
                    if (keepdim) return r.id;
                    return g.add(b->t.lang.op("aten.view.default"), b->t.lang.view_attr(*out), std::vector<Id>{r.id});
                  });
  return rs;
}

}  // namespace sator::rules
