#include "rules/layout_rules.h"

#include "rulelang/rule_set.h"

namespace sator::rules {

using eg::Id;
using eg::kNoId;
using eg::Subst;

const std::vector<RuleInfo>& layout_rule_info() {
  // In the order layout_rules() builds them: rules/layout.rules, two C++
  // rules, rules/pointwise.rules, two more C++ rules (docs/rule-language.md
  // says why each of those is C++).
  static const std::vector<RuleInfo> info = [] {
    std::vector<RuleInfo> out;
    auto file = [&](const char* name) {
      for (const rulelang::RuleSpec& r : rulelang::shipped_rule_file(name).rules) out.push_back({r.name.c_str(), r.doc.c_str()});
    };
    file("layout");
    out.push_back({"permute-of-unit-dims-as-view", "permute(x, p) = view(x, shape) when p moves only dimensions of size 1"});
    out.push_back({"permute-of-unit-insert", "permute(view(x, x's shape with 1s inserted), p) = view(permute(x, p without the 1s), ...)"});
    file("pointwise");
    out.push_back({"transpose-through-flatten", "permute(view(x, [prod(P)]+T), [0]+q) = view(permute(x, P-identity + q shifted), ...) when the view only merges x's leading dims P"});
    return out;
  }();
  return info;
}

namespace {

struct Ctx {
  explicit Ctx(TensorEGraph& graph) : t(graph) {}
  TensorEGraph& t;

  const std::vector<SymExpr>* shape(Id cls) const { return t.analysis.shape(t.egraph, cls); }
  Id view(eg::EGraph& g, Id x, const std::vector<SymExpr>& s) {
    const Id kids[1] = {x};
    return g.add(t.lang.op("aten.view.default"), t.lang.view_attr(s), kids);
  }
  Id permute(eg::EGraph& g, Id x, const std::vector<int64_t>& dims) {
    const Id kids[1] = {x};
    return g.add(t.lang.op("aten.permute.default"), t.lang.permute_attr(dims), kids);
  }
  const NodeAttrs& attrs(const eg::EGraph& g, Id node) const { return t.lang.attrs(g.attr(node)); }
  // Permutation dims of a permute node, wrapped into [0, rank).
  std::vector<int64_t> dims_of(const eg::EGraph& g, Id node, size_t rank) const {
    std::vector<int64_t> d;
    const NodeAttrs& a = attrs(g, node);
    if (a.args.size() < 2) return d;
    for (const Value& v : a.args[1].list) d.push_back(v.i < 0 ? v.i + static_cast<int64_t>(rank) : v.i);
    return d;
  }
};

bool is_identity(const std::vector<int64_t>& dims) {
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != static_cast<int64_t>(i)) return false;
  return true;
}

}  // namespace

std::vector<eg::Rewrite> layout_rules(TensorEGraph& t) {
  auto ctx = std::make_shared<Ctx>(t);
  eg::Language& lang = t.lang;
  std::vector<eg::Rewrite> rs;
  auto rule = [&](const char* name, const char* searcher, eg::Builder b) { rs.emplace_back(name, lang, searcher, std::move(b)); };

  // The identities the rule language says (rules/layout.rules) come first.
  rs = rulelang::make_rewrites({rulelang::shipped_rule_file("layout")}, t);
  rule("permute-of-unit-dims-as-view", "(aten.permute.default@_ ?x)", [ctx](eg::EGraph& g, Id eclass, Subst s) {
    const auto *in = ctx->shape(s[0]), *out = ctx->shape(eclass);
    if (!in || !out) return kNoId;
    const std::vector<int64_t> dims = ctx->dims_of(g, s.root, in->size());
    if (dims.size() != in->size() || is_identity(dims)) return kNoId;
    // By value, moving dimensions of size 1 is a reshape: the dimensions of
    // other sizes must keep their order.
    int64_t last = -1;
    for (int64_t d : dims) {
      if (ctx->t.prover.is_equal((*in)[static_cast<size_t>(d)], 1)) continue;
      if (ctx->t.prover.equal((*in)[static_cast<size_t>(d)], 1) != Truth::False) return kNoId;  // unknown: no
      if (d < last) return kNoId;
      last = d;
    }
    return ctx->view(g, s[0], *out);
  });
  rule("permute-of-unit-insert", "(aten.permute.default@_ (aten.view.default@_ ?x))", [ctx](eg::EGraph& g, Id eclass, Subst s) {
    const auto *in = ctx->shape(s[0]), *out = ctx->shape(eclass);
    const auto* mid = ctx->shape(g.find(g.children(s.root)[0]));
    if (!in || !out || !mid || mid->size() <= in->size()) return kNoId;
    // Match x's dims, in order, inside the view's shape; the rest must be 1s.
    std::vector<int64_t> from_mid(mid->size(), -1);  // view dim -> x dim
    size_t j = 0;
    for (size_t i = 0; i < mid->size(); ++i) {
      if (j < in->size() && ctx->t.prover.is_equal((*mid)[i], (*in)[j])) from_mid[i] = static_cast<int64_t>(j++);
      else if (!ctx->t.prover.is_equal((*mid)[i], 1)) return kNoId;
    }
    if (j != in->size()) return kNoId;
    const std::vector<int64_t> p = ctx->dims_of(g, s.root, mid->size());
    if (p.size() != mid->size()) return kNoId;
    std::vector<int64_t> q;
    for (int64_t d : p)
      if (from_mid[static_cast<size_t>(d)] >= 0) q.push_back(from_mid[static_cast<size_t>(d)]);
    const std::vector<SymExpr> out_shape = *out;  // copied: the permute may move the analysis' storage
    const Id permuted = is_identity(q) ? s[0] : ctx->permute(g, s[0], q);
    return ctx->view(g, permuted, out_shape);
  });
  // Layout ops through pointwise ops (rules/pointwise.rules), in their place
  // in the order.
  for (eg::Rewrite& r : rulelang::make_rewrites({rulelang::shipped_rule_file("pointwise")}, t)) rs.push_back(std::move(r));
  rule("transpose-through-flatten", "(aten.permute.default@_ (aten.view.default@_ ?x))", [ctx](eg::EGraph& g, Id eclass, Subst s) {
    const auto *in = ctx->shape(s[0]), *out = ctx->shape(eclass);
    const Id flat_class = g.find(g.children(s.root)[0]);
    const auto* flat = ctx->shape(flat_class);
    if (!in || !out || !flat || flat->empty() || in->size() <= flat->size()) return kNoId;
    const std::vector<int64_t> q = ctx->dims_of(g, s.root, flat->size());
    if (q.size() != flat->size() || q[0] != 0) return kNoId;
    // x = P + T, the view = [prod(P)] + T: it only merges the leading dims.
    const size_t k = in->size() - flat->size() + 1;  // |P|
    SymExpr lead = 1;
    for (size_t i = 0; i < k; ++i) lead = lead * (*in)[i];
    if (!ctx->t.prover.is_equal(lead, (*flat)[0])) return kNoId;
    for (size_t i = 1; i < flat->size(); ++i)
      if (!ctx->t.prover.is_equal((*flat)[i], (*in)[k - 1 + i])) return kNoId;
    std::vector<int64_t> p;
    for (size_t i = 0; i < k; ++i) p.push_back(static_cast<int64_t>(i));
    for (size_t i = 1; i < q.size(); ++i) p.push_back(q[i] + static_cast<int64_t>(k) - 1);
    const std::vector<SymExpr> out_shape = *out;  // copied: the permute may move the analysis' storage
    const Id permuted = ctx->permute(g, s[0], p);
    return ctx->view(g, permuted, out_shape);
  });
  return rs;
}

}  // namespace sator::rules
