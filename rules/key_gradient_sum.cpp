// Sums of attention's key gradient over the keys are zero (key_gradient_sum.h).
#include "rules/key_gradient_sum.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "rules/attention_builder.h"

namespace sator::rules {

const std::vector<RuleInfo>& key_gradient_rule_info() {
  static const std::vector<RuleInfo> info = {
      {"key-gradient-sum-zero",
       "sum(x, D) = the sum of x's other terms when x = layout(... + dK + ...) through merging views, permutes and "
       "adds, dK = _scaled_dot_product_efficient_attention_backward(..., O, lse, seed, offset, ...)[1] of its own "
       "forward, and D covers the keys' axis: Σ_j dK_j = 0 (softmax ignores a shift of its row); zeros when no term is left"},
  };
  return info;
}

namespace {

using eg::Subst;

constexpr int kMaxDepth = 8;  // views, permutes and adds between the sum and dK

// What summing a class over some of its dims comes to once the key gradients
// in it are dropped: nothing found (the rule does not apply there), zero, or
// a class holding the rest's sum (keepdim shape).
struct Reduced {
  bool found = false;
  bool zero = false;
  Id id = kNoId;
};

class KeyGradientSum {
 public:
  KeyGradientSum(AttentionBuilder& b, eg::EGraph& g, const NodeAttrs& sum_attrs) : b_(b), g_(g), sum_(sum_attrs) {}

  Reduced reduce(Id cls, const std::vector<int64_t>& dims, int depth) {
    cls = g_.find(cls);
    const auto key = std::make_pair(cls, dims);
    if (depth > kMaxDepth || !open_.insert(key).second) return {};  // a cycle, or too deep
    Reduced r = reduce_nodes(cls, dims, depth);
    open_.erase(key);
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
  Reduced reduce_nodes(Id cls, const std::vector<int64_t>& dims, int depth) {
    const auto* shape = b_.shape(cls);
    if (!shape) return {};
    std::vector<Id> nodes(g_.class_nodes(cls).begin(), g_.class_nodes(cls).end());  // adding moves the list
    for (Id n : nodes) {
      const std::string& op = b_.t.lang.op_name(g_.op(n));
      if (op == "getitem" && is_key_gradient(n) && shape->size() == 4 &&
          std::count(dims.begin(), dims.end(), 2) == 1)
        return {true, true, kNoId};
      Reduced r;
      if (op == "aten.add.Tensor") r = through_add(n, *shape, dims, depth);
      else if (op == "aten.permute.default") r = through_permute(n, shape->size(), dims, depth);
      else if (op == "aten.view.default") r = through_view(n, *shape, dims, depth);
      if (r.found) return r;
    }
    return {};
  }

  Reduced through_add(Id n, const std::vector<SymExpr>& shape, const std::vector<int64_t>& dims, int depth) {
    const NodeAttrs& a = b_.attrs(g_, n);
    if (g_.children(n).size() != 2 || !a.kwargs.empty() || a.args.size() != 2) return {};
    const Id x = b_.child(g_, n, 0), y = b_.child(g_, n, 1);
    const auto *sx = b_.shape(x), *sy = b_.shape(y);
    if (!sx || !sy || !b_.same_dims(*sx, shape) || !b_.same_dims(*sy, shape) || b_.dtype(g_, x) != b_.dtype(g_, y))
      return {};  // broadcasting or promoting adds are left alone
    Reduced rx = reduce(x, dims, depth + 1), ry = reduce(y, dims, depth + 1);
    if (!rx.found && !ry.found) return {};
    if (rx.zero && ry.zero) return {true, true, kNoId};
    if (rx.zero || ry.zero) {
      const Reduced& other = rx.zero ? ry : rx;
      return {true, false, other.found ? other.id : plain_sum(rx.zero ? y : x, dims)};
    }
    NodeAttrs sum_attrs;
    sum_attrs.args = {Value::of_node(0), Value::of_node(1)};
    const Id tx = rx.found ? rx.id : plain_sum(x, dims), ty = ry.found ? ry.id : plain_sum(y, dims);
    return {true, false, b_.add(g_, "aten.add.Tensor", sum_attrs, {tx, ty})};
  }

  Reduced through_permute(Id n, size_t rank, const std::vector<int64_t>& dims, int depth) {
    const NodeAttrs& a = b_.attrs(g_, n);
    if (a.args.size() < 2) return {};
    const std::vector<int64_t> p = int_list(a.args[1], rank);
    if (p.size() != rank) return {};
    // out dim i is in dim p[i]
    std::vector<int64_t> in_dims;
    for (int64_t d : dims) in_dims.push_back(p[static_cast<size_t>(d)]);
    std::sort(in_dims.begin(), in_dims.end());
    const Id x = b_.child(g_, n, 0);
    Reduced r = reduce(x, in_dims, depth + 1);
    if (!r.found || r.zero) return r;
    NodeAttrs pa;
    std::vector<Value> pv;
    for (int64_t i : p) pv.push_back(Value::of_int(i));
    pa.args = {Value::of_node(0), Value::of_list(std::move(pv))};
    return {true, false, b_.add(g_, "aten.permute.default", pa, {r.id})};
  }

  // A view that only merges runs of adjacent input dims (and adds or drops
  // 1s): each output dim's run of input dims, or nothing.
  std::optional<std::vector<std::vector<int64_t>>> merge_runs(const std::vector<SymExpr>& in,
                                                              const std::vector<SymExpr>& out) const {
    std::vector<std::vector<int64_t>> runs(out.size());
    size_t i = 0;
    for (size_t j = 0; j < out.size(); ++j) {
      if (b_.equal(out[j], 1)) {
        while (i < in.size() && b_.equal(in[i], 1)) runs[j].push_back(static_cast<int64_t>(i++));
        continue;
      }
      SymExpr prod = 1;
      bool done = false;
      while (i < in.size() && !done) {
        prod = prod * in[i];
        runs[j].push_back(static_cast<int64_t>(i++));
        done = b_.equal(prod, out[j]);
      }
      if (!done) return std::nullopt;
    }
    for (; i < in.size(); ++i) {  // trailing 1s
      if (!b_.equal(in[i], 1) || runs.empty()) return std::nullopt;
      runs.back().push_back(static_cast<int64_t>(i));
    }
    return runs;
  }

  Reduced through_view(Id n, const std::vector<SymExpr>& out, const std::vector<int64_t>& dims, int depth) {
    const Id x = b_.child(g_, n, 0);
    const auto* in = b_.shape(x);
    if (!in) return {};
    const auto runs = merge_runs(*in, out);
    if (!runs) return {};
    std::vector<int64_t> in_dims;
    for (int64_t d : dims)
      for (int64_t i : (*runs)[static_cast<size_t>(d)]) in_dims.push_back(i);
    std::sort(in_dims.begin(), in_dims.end());
    Reduced r = reduce(x, in_dims, depth + 1);
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
    for (Id bwd : b_.nodes(g_, b_.child(g_, n, 0), "aten._scaled_dot_product_efficient_attention_backward.default")) {
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
  std::set<std::pair<Id, std::vector<int64_t>>> open_;
};

}  // namespace

std::vector<eg::Rewrite> key_gradient_rules(TensorEGraph& t) {
  auto b = std::make_shared<AttentionBuilder>(AttentionBuilder{t});
  const std::optional<Value> device = graph_device(t.source());
  std::vector<eg::Rewrite> rs;
  rs.emplace_back("key-gradient-sum-zero", t.lang, "(aten.sum.dim_IntList@_ ?x)",
                  [b, device](eg::EGraph& g, Id eclass, Subst s) -> Id {
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
                    const Reduced r = walk.reduce(s[0], dims, 0);
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
