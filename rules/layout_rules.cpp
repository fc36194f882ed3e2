#include "rules/layout_rules.h"

#include "rulelang/rule_set.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

namespace sator::rules {

using eg::Id;
using eg::kNoId;
using eg::Subst;

const std::vector<RuleInfo>& layout_rule_info() {
  // In the order layout_rules() builds them: rules/layout.rules, then the
  // rules below that the rule language cannot say.
  static const std::vector<RuleInfo> info = [] {
    std::vector<RuleInfo> out;
    for (const rulelang::RuleSpec& r : rulelang::shipped_rule_file("layout").rules) out.push_back({r.name.c_str(), r.doc.c_str()});
    for (const RuleInfo& r : std::initializer_list<RuleInfo>{
             {"permute-of-unit-dims-as-view", "permute(x, p) = view(x, shape) when p moves only dimensions of size 1"},
             {"permute-of-unit-insert", "permute(view(x, x's shape with 1s inserted), p) = view(permute(x, p without the 1s), ...)"},
             {"view-through-pointwise", "view(f(x), s) = f(view(x, s)) for an elementwise f of one tensor (dtype conversion, scaling by a number, exp, ...)"},
             {"permute-through-pointwise", "permute(f(x), p) = f(permute(x, p)) for the same f"},
             {"convert-of-permute", "convert(permute(x, p), t) = permute(convert(x, t), p): a cast moves inside a permute "
                                    "(autocast casts a permuted kᵀ; the attention rule reads the permute)"},
             {"transpose-through-flatten", "permute(view(x, [prod(P)]+T), [0]+q) = view(permute(x, P-identity + q shifted), ...) when the view only merges x's leading dims P"}})
      out.push_back(r);
    return out;
  }();
  return info;
}

namespace {


struct Ctx {
  explicit Ctx(TensorEGraph& graph) : t(graph) {}
  TensorEGraph& t;

  // The elementwise nodes of one tensor in a class, as (node, its input),
  // remembered until the next rebuild: every view of a class asks, and a
  // class merged from thousands of views (a deep view chain) was scanned
  // once per view, quadratically. (A node merged into the class after the
  // scan is seen after the rebuild, in the next iteration.)
  uint64_t elementwise_epoch = ~uint64_t{0};
  std::unordered_map<Id, std::vector<std::pair<Id, Id>>> elementwise_cache;
  const std::vector<std::pair<Id, Id>>& elementwise_of(const eg::EGraph& g, Id cls) {
    if (elementwise_epoch != g.stats().rebuilds) {
      elementwise_cache.clear();
      elementwise_epoch = g.stats().rebuilds;
    }
    cls = g.find(cls);
    auto it = elementwise_cache.find(cls);
    if (it != elementwise_cache.end()) return it->second;
    // Layout ops move outward through elementwise ops of one tensor (the op
    // table's Valuewise ops), so that they meet the layout ops on the other side.
    std::vector<std::pair<Id, Id>> found;
    for (Id n : g.class_nodes(cls))
      if (g.children(n).size() == 1 && valuewise(g.op(n))) found.emplace_back(n, g.find(g.children(n)[0]));
    return elementwise_cache.emplace(cls, std::move(found)).first->second;
  }

  // Whether an op of the language is Valuewise, by op id (asked per node).
  std::vector<int8_t> valuewise_by_op;  // -1 unknown, 0 no, 1 yes
  bool valuewise(eg::OpId op) {
    if (op >= valuewise_by_op.size()) valuewise_by_op.resize(op + 1, -1);
    if (valuewise_by_op[op] < 0) valuewise_by_op[op] = op_has(t.lang.op_name(op), OpFact::Valuewise) ? 1 : 0;
    return valuewise_by_op[op] == 1;
  }

  const std::vector<SymExpr>* shape(Id cls) const { return t.analysis.shape(t.egraph, cls); }
  bool same_shape(Id a, Id b) const {
    const auto *x = shape(a), *y = shape(b);
    if (!x || !y || x->size() != y->size()) return false;
    for (size_t i = 0; i < x->size(); ++i)
      if (!t.prover.is_equal((*x)[i], (*y)[i])) return false;
    return true;
  }
  Id view(eg::EGraph& g, Id x, const std::vector<SymExpr>& s) {
    const Id kids[1] = {x};
    return g.add(t.lang.op("aten.view.default"), t.lang.view_attr(s), kids);
  }
  Id expand(eg::EGraph& g, Id x, const std::vector<SymExpr>& s) {
    const Id kids[1] = {x};
    return g.add(t.lang.op("aten.expand.default"), t.lang.view_attr(s), kids);
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
  for (const char* layout : {"aten.view.default", "aten.permute.default"}) {
    const bool is_view = layout[5] == 'v';
    rule(is_view ? "view-through-pointwise" : "permute-through-pointwise",
         (std::string("(") + layout + " ?y)").c_str(), [ctx, is_view](eg::EGraph& g, Id eclass, Subst s) {
           const auto* out_found = ctx->shape(eclass);
           const auto* mid = ctx->shape(s[0]);
           if (!out_found || !mid) return kNoId;
           // Copied: the nodes added below may move the analysis' storage.
           const std::vector<SymExpr> out_shape = *out_found;
           const std::vector<SymExpr>* out = &out_shape;
           const size_t mid_rank = mid->size();
           std::vector<int64_t> dims;
           if (!is_view) dims = ctx->dims_of(g, s.root, mid_rank);
           // Elementwise nodes of one tensor in the class of y (copied: the
           // nodes added below may move the class's list).
           const std::vector<std::pair<Id, Id>> found = ctx->elementwise_of(g, s[0]);
           Id result = kNoId;
           for (const auto& [n, x] : found) {
             const auto* in = ctx->shape(x);
             if (!in || in->size() != mid_rank) continue;  // elementwise ops here keep the shape
             const Id moved = is_view ? ctx->view(g, x, *out) : ctx->permute(g, x, dims);
             const Id kids[1] = {moved};
             const Id f = g.add(g.op(n), g.attr(n), kids);
             if (result != kNoId) g.union_classes(result, f, "layout-through-pointwise");
             result = f;
           }
           return result;
         });
  }
  rule("convert-of-permute", "(prims.convert_element_type.default (aten.permute.default ?x))",
       [ctx](eg::EGraph& g, Id, Subst s) {
         const auto* in = ctx->shape(s[0]);
         if (!in) return kNoId;
         const size_t rank = in->size();
         const Id permuted_class = g.find(g.children(s.root)[0]);
         const auto permute_op = ctx->t.lang.find_op("aten.permute.default");
         std::vector<int64_t> dims;
         for (Id p : g.class_nodes(permuted_class))
           if (permute_op && g.op(p) == *permute_op && g.find(g.children(p)[0]) == g.find(s[0])) {
             dims = ctx->dims_of(g, p, rank);
             break;
           }
         if (dims.size() != rank) return kNoId;
         const Id kids[1] = {s[0]};
         const Id cast = g.add(g.op(s.root), g.attr(s.root), kids);
         return ctx->permute(g, cast, dims);
       });
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
