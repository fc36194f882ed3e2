#include "rules/mask_algebra.h"

#include <memory>
#include <optional>

#include "rulelang/rule_set.h"
#include "rules/attention_builder.h"
#include "rules/causal_mask.h"

namespace sator::rules {

using eg::Subst;

const std::vector<RuleInfo>& mask_algebra_rule_info() {
  // In the order mask_algebra_rules() builds them: rules/casts.rules first.
  static const std::vector<RuleInfo> info = [] {
    std::vector<RuleInfo> out;
    for (const char* file : {"casts", "bias"})
      for (const rulelang::RuleSpec& r : rulelang::shipped_rule_file(file).rules) out.push_back({r.name.c_str(), r.doc.c_str()});
    for (const RuleInfo& r : std::initializer_list<RuleInfo>{
      {"masked-fill-as-add",
       "where(c, x, K) = x + where(c, 0, K) and where(c, K, x) = x + where(c, K, 0) for a masking constant K <= -2^100 "
       "of x's dtype (x + K rounds to K for |x| < ulp(K)/2)"},
      {"add-small-operands-first", "(x + y) + z = x + (y + z) when y and z each broadcast into x from fewer elements"},
      {"masked-softmax-gradient",
       "where(c, 0, dS) = dS for dS = fma(-P, sum(dP·P), dP·P), P = _softmax(where(c, K, y)) with c the causal "
       "triangle's masked entries (or none) and K <= -2^100: P is exactly 0 where c holds, so dS is"}})
      out.push_back(r);
    return out;
  }();
  return info;
}

namespace {


// The class in argument slot `pos` of node `n`, when that argument is a tensor.
std::optional<Id> arg_class(const AttentionBuilder& b, const eg::EGraph& g, Id n, size_t pos) {
  const NodeAttrs& a = b.attrs(g, n);
  if (pos >= a.args.size() || a.args[pos].kind != Value::Kind::Node) return std::nullopt;
  return b.child(g, n, a.args[pos].node);
}

// An add of two tensors, no alpha: its two classes in argument order.
std::optional<std::pair<Id, Id>> tensor_add(const AttentionBuilder& b, const eg::EGraph& g, Id n) {
  if (!b.attrs(g, n).kwargs.empty() || b.attrs(g, n).args.size() != 2) return std::nullopt;
  const auto x = arg_class(b, g, n, 0), y = arg_class(b, g, n, 1);
  if (!x || !y) return std::nullopt;
  return std::pair{*x, *y};
}

// The dims of big (by index) that `small` broadcasts along: aligned from the
// right, each of small's dims must be a literal 1 or equal big's; a dim of big
// that is not a literal 1 facing a 1 or no dim at all is broadcast. nullopt
// when small does not broadcast into big, or is 0-d (a 0-d tensor changes
// type promotion).
std::optional<std::vector<bool>> broadcast_dims(const AttentionBuilder& b, const std::vector<SymExpr>& small,
                                                const std::vector<SymExpr>& big) {
  if (small.empty() || small.size() > big.size()) return std::nullopt;
  const size_t lead = big.size() - small.size();
  std::vector<bool> along(big.size(), false);
  for (size_t i = 0; i < big.size(); ++i) {
    const bool big_one = big[i].as_constant() && *big[i].as_constant() == 1;
    if (i < lead) {
      along[i] = !big_one;
      continue;
    }
    const SymExpr& s = small[i - lead];
    if (s.as_constant() && *s.as_constant() == 1) along[i] = !big_one;
    else if (!b.equal(s, big[i])) return std::nullopt;
  }
  return along;
}

// Whether y and z each broadcast into x from fewer elements (each has a
// dim x has more of). Their sum may be as large as x: MPT's ALiBi [16, 1, S]
// plus its mask [B, 1, S, S], BLOOM's the same; the attention kernels take it
// as their one bias. Where no kernel takes it, a sum of two biases shared by
// every layer can hold more memory than the per-layer adds it saves; the
// peak guard (pipeline/peak_guard.h) gives such a form back to the input's.
bool each_broadcasts_from_fewer(const AttentionBuilder& b, const std::vector<SymExpr>& y, const std::vector<SymExpr>& z,
                                const std::vector<SymExpr>& x) {
  const auto by = broadcast_dims(b, y, x), bz = broadcast_dims(b, z, x);
  if (!by || !bz) return false;
  const auto some = [](const std::vector<bool>& along) {
    for (bool a : along)
      if (a) return true;
    return false;
  };
  return some(*by) && some(*bz);
}

// Whether class `x` (or the class it is a cast of) holds where(c, K, y) —
// where(c, y, K) with `masked_when_true` false — for the class `c` and a
// masking constant K, and c masks the causal triangle or nothing: every row
// keeps an entry, so the softmax of x is exactly 0 wherever c masks.
bool masked_rows_keep_an_entry(AttentionBuilder& b, eg::EGraph& g, Id x, Id c, bool masked_when_true) {
  std::vector<Id> classes{g.find(x)};
  for (Id cv : b.nodes(g, g.find(x), "prims.convert_element_type.default")) classes.push_back(b.child(g, cv, 0));
  for (Id cls : classes)
    for (Id w : b.nodes(g, cls, "aten.where.self")) {
      const auto cond = arg_class(b, g, w, 0), masking = arg_class(b, g, w, masked_when_true ? 1 : 2);
      if (!cond || *cond != g.find(c) || !masking) continue;
      const auto k = b.t.analysis.constant(g, *masking);
      const auto* shape = b.shape(cls);
      if (!k || *k > kMaskingConstantAtMost || !shape) continue;
      const MaskKind kind = classify_mask_condition(b.t, *cond, *shape, !masked_when_true);
      if (kind == MaskKind::Causal || kind == MaskKind::Zero) return true;
    }
  return false;
}

}  // namespace

std::vector<eg::Rewrite> mask_algebra_rules(TensorEGraph& t) {
  auto b = std::make_shared<AttentionBuilder>(AttentionBuilder{t});
  const std::optional<Value> device = graph_device(t.source());
  std::vector<eg::Rewrite> rs;
  // A cast there and back through a wider type (rules/casts.rules); a sum's
  // full-size operand first (rules/bias.rules).
  for (eg::Rewrite& r : rulelang::make_rewrites({rulelang::shipped_rule_file("casts"), rulelang::shipped_rule_file("bias")}, t))
    rs.push_back(std::move(r));
  rs.emplace_back(
      "masked-fill-as-add", t.lang, "(aten.where.self ?c ?a ?b)",
      [b, device](eg::EGraph& g, Id eclass, Subst s) -> Id {
        const Id where = s.root;
        const auto c = arg_class(*b, g, where, 0), a = arg_class(*b, g, where, 1), k2 = arg_class(*b, g, where, 2);
        if (!c || !a || !k2 || !device || b->dtype(g, *c) != DType::Bool) return kNoId;
        const auto dt = b->dtype(g, eclass);
        if (!dt || !is_floating(*dt)) return kNoId;
        auto masking = [&](Id k) {
          const auto* sk = b->shape(k);
          const auto v = b->t.analysis.constant(g, k);
          return sk && sk->empty() && b->dtype(g, k) == dt && v && *v <= kMaskingConstantAtMost;
        };
        // K in the `other` slot (masked where c is false) or in `self`.
        const bool k_other = masking(*k2), k_self = !k_other && masking(*a);
        if (!k_other && !k_self) return kNoId;
        const Id x = k_other ? *a : *k2, k = k_other ? *k2 : *a;
        if (b->dtype(g, x) != dt) return kNoId;
        NodeAttrs za;
        za.args = {Value::of_list({}), Value::of_float(0.0)};
        za.kwargs = {{"dtype", Value::of_dtype(*dt)},
                     {"layout", Value::of_text(Value::Kind::Enum, "torch.strided")},
                     {"device", *device},
                     {"pin_memory", Value::of_bool(false)}};
        const Id zero = b->add(g, "aten.full.default", za, {});
        NodeAttrs wa;
        wa.args = {Value::of_node(0), Value::of_node(1), Value::of_node(2)};
        const Id bias = b->add(g, "aten.where.self", wa, k_other ? std::vector<Id>{*c, zero, k} : std::vector<Id>{*c, k, zero});
        NodeAttrs aa;
        aa.args = {Value::of_node(0), Value::of_node(1)};
        return b->add(g, "aten.add.Tensor", aa, {x, bias});
      });
  rs.emplace_back("add-small-operands-first", t.lang, "(aten.add.Tensor (aten.add.Tensor ?x ?y) ?z)",
                  [b](eg::EGraph& g, Id eclass, Subst s) -> Id {
                    const auto outer = tensor_add(*b, g, s.root);
                    if (!outer || outer->second != g.find(s[2])) return kNoId;
                    const auto *sx = b->shape(s[0]), *sy = b->shape(s[1]), *sz = b->shape(s[2]), *so = b->shape(eclass);
                    if (!sx || !sy || !sz || !so || !b->same_dims(*sx, *so) || !each_broadcasts_from_fewer(*b, *sy, *sz, *sx))
                      return kNoId;
                    // The inner add must be this x + y (a class may hold other adds).
                    bool found = false;
                    for (Id inner : b->nodes(g, outer->first, "aten.add.Tensor")) {
                      const auto xy = tensor_add(*b, g, inner);
                      found = found || (xy && xy->first == g.find(s[0]) && xy->second == g.find(s[1]));
                    }
                    if (!found) return kNoId;
                    NodeAttrs aa;
                    aa.args = {Value::of_node(0), Value::of_node(1)};
                    const Id yz = b->add(g, "aten.add.Tensor", aa, {s[1], s[2]});
                    return b->add(g, "aten.add.Tensor", aa, {s[0], yz});
                  });
  // masked_fill(scores, c, K)'s backward zeroes dS where c holds; where the
  // softmax is already exactly 0 there (every row keeps an entry: the
  // causal triangle), dS is 0 there too, and the where changes nothing. The
  // training rule then reads the softmax backward as it is.
  rs.emplace_back("masked-softmax-gradient", t.lang, "(aten.where.self ?c ?a ?b)",
                  [b](eg::EGraph& g, Id eclass, Subst s) -> Id {
                    const Id where = s.root;
                    const auto c = arg_class(*b, g, where, 0), a = arg_class(*b, g, where, 1), z = arg_class(*b, g, where, 2);
                    if (!c || !a || !z || b->dtype(g, *c) != DType::Bool) return kNoId;
                    const auto zero = [&](Id k) {
                      const auto v = b->t.analysis.constant(g, k);
                      return v && *v == 0.0;
                    };
                    // where(c, 0, dS): the forward masked where c holds; where(c, dS, 0): where it fails.
                    const bool masked_when_true = zero(*a);
                    if (!masked_when_true && !zero(*z)) return kNoId;
                    const Id ds = masked_when_true ? *z : *a;
                    const auto *sd = b->shape(ds), *so = b->shape(eclass);
                    if (!sd || !so || !b->same_dims(*sd, *so) || b->dtype(g, ds) != b->dtype(g, eclass)) return kNoId;
                    // dS, or dS cast to 16 bits (autocast: the softmax backward in float32).
                    std::vector<Id> fmas = b->nodes(g, ds, "prims.fma.default");
                    for (Id cv : b->nodes(g, ds, "prims.convert_element_type.default"))
                      for (Id f : b->nodes(g, b->child(g, cv, 0), "prims.fma.default")) fmas.push_back(f);
                    for (Id fma : fmas) {
                      if (g.children(fma).size() != 3) continue;
                      for (Id neg : b->nodes(g, b->child(g, fma, 0), "aten.neg.default")) {
                        const Id p = b->child(g, neg, 0);
                        bool dpp = false;
                        for (Id m : b->nodes(g, b->child(g, fma, 2), "aten.mul.Tensor"))
                          dpp |= g.children(m).size() == 2 && (b->child(g, m, 0) == p || b->child(g, m, 1) == p);
                        if (!dpp) continue;
                        for (const char* op : {"aten._softmax.default", "aten._safe_softmax.default"})
                          for (Id sm : b->nodes(g, p, op))
                            if (masked_rows_keep_an_entry(*b, g, b->child(g, sm, 0), *c, masked_when_true)) return ds;
                      }
                    }
                    return kNoId;
                  });
  return rs;
}

}  // namespace sator::rules
