#include "rules/attention_rules.h"

#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "rulelang/rule_set.h"
#include "rules/attention_builder.h"

namespace sator::rules {

using eg::Subst;

// Recomposition is written in rules/matmul.rules and rules/softmax.rules, in
// that order.
const std::vector<RuleInfo>& recompose_rule_info() {
  static const std::vector<RuleInfo> info = [] {
    std::vector<RuleInfo> out;
    for (const char* file : {"matmul", "softmax"})
      for (const rulelang::RuleSpec& r : rulelang::shipped_rule_file(file).rules) out.push_back({r.name.c_str(), r.doc.c_str()});
    return out;
  }();
  return info;
}

const std::vector<RuleInfo>& attention_rule_info() {
  static const std::vector<RuleInfo> info = {
      {"attention", "matmul(_softmax(matmul(q, kᵀ) · s [+ m], -1), v) = scaled_dot_product_attention(q, k, v, m, 0, False, scale=s) (and with _safe_softmax, SDPA's own)"},
      {"attention-dropout", "matmul(dropout_p(_softmax(...)), v) = scaled_dot_product_attention(..., dropout_p, ...): equal in distribution only, so opt-in (--fuse-dropout)"},
  };
  return info;
}

namespace {
using Builder = AttentionBuilder;
}  // namespace

std::vector<eg::Rewrite> recompose_rules(TensorEGraph& t) {
  return rulelang::make_rewrites({rulelang::shipped_rule_file("matmul"), rulelang::shipped_rule_file("softmax")}, t);
}

// The attention rule's builder: `matmul(p, v)` where class `sm_class` holds
// `_softmax(scores, -1)` and p is that softmax (or its dropout, dropout_p > 0).
Id fuse_attention(const std::shared_ptr<Builder>& b, eg::EGraph& g, Id sm_class, Id scores, Id v, double dropout_p) {
  if (!softmax_of(b, g, sm_class, scores)) return kNoId;
  Id result = kNoId;
  for (const AttentionForm& f : attention_forms(b, g, scores, v)) {
    NodeAttrs at;
    at.args = {Value::of_node(0), Value::of_node(1), Value::of_node(2),
               f.mask != kNoId ? Value::of_node(3) : Value::none(), Value::of_float(dropout_p), Value::of_bool(f.causal)};
    double scale = f.scale;
    Id query = f.q;
    if (f.scale_tensor != kNoId) {
      NodeAttrs sa;
      sa.args = {Value::of_node(0), Value::of_node(1)};
      query = b->add(g, "aten.mul.Tensor", sa, {f.q, f.scale_tensor});
      scale = 1.0;
    }
    at.kwargs.emplace_back("scale", Value::of_float(scale));
    std::vector<Id> kids = {query, f.k, g.find(v)};
    if (f.mask != kNoId) kids.push_back(f.mask);
    const Id sdpa = b->add(g, "aten.scaled_dot_product_attention.default", at, kids);
    if (result != kNoId) g.union_classes(result, sdpa, "attention");
    result = sdpa;
  }
  return result;
}

// A dropout written out: matmul(mul(mul(gt(rand, p), softmax), 1/(1-p)), v).
// SDPA draws its own random numbers: equal in distribution, not in value.
Id fuse_attention_dropout(const std::shared_ptr<Builder>& b, eg::EGraph& g, const Subst& s) {
  const Id scaled = b->child(g, s.root, 0);
  for (Id outer : b->nodes(g, scaled, "aten.mul.Tensor")) {
    const auto c = b->scalar_arg(g, outer);
    if (!c) continue;
    const Id masked = b->child(g, outer, 0);
    for (Id inner : b->nodes(g, masked, "aten.mul.Tensor")) {
      if (g.children(inner).size() != 2 || b->child(g, inner, 0) != g.find(s[0])) continue;
      const Id sm_class = b->child(g, inner, 1);
      for (Id gt : b->nodes(g, g.find(s[0]), "aten.gt.Scalar")) {
        const auto p = b->scalar_arg(g, gt);
        if (!p) continue;
        const double keep = 1.0 - Builder::number(*p);
        const Id r = b->child(g, gt, 0);
        const bool uniform = !b->nodes(g, r, "aten.rand.default").empty();
        const auto *sr = b->shape(r), *ssm = b->shape(sm_class);
        if (!uniform || !sr || !ssm || !b->same_dims(*sr, *ssm) || keep <= 0 ||
            std::abs(Builder::number(*c) * keep - 1.0) > 1e-9)
          continue;
        return fuse_attention(b, g, sm_class, s[1], s[2], Builder::number(*p));
      }
    }
  }
  return kNoId;
}

std::vector<eg::Rewrite> attention_rules(TensorEGraph& t, bool fuse_dropout) {
  auto b = std::make_shared<Builder>(Builder{t});
  std::vector<eg::Rewrite> rs;
  // The probabilities: softmax, or SDPA's own _safe_softmax (its math path,
  // decomposed, recomposes to it: rules/softmax.rules). SDPA computes
  // _safe_softmax; on _softmax the two differ only where a row of scores is
  // -inf whole (softmax: NaN; SDPA: 0).
  for (const std::string softmax : {"aten._softmax.default", "aten._safe_softmax.default"}) {
    rs.emplace_back("attention", t.lang, "(aten.matmul.default (" + softmax + "@_ ?s) ?v)",
                    [b](eg::EGraph& g, Id, Subst s) -> Id { return fuse_attention(b, g, b->child(g, s.root, 0), s[0], s[1], 0.0); });
    if (fuse_dropout)
      rs.emplace_back("attention-dropout", t.lang,
                      "(aten.matmul.default (aten.mul.Tensor (aten.mul.Tensor ?keep (" + softmax + " ?s))) ?v)",
                      [b](eg::EGraph& g, Id, Subst s) -> Id { return fuse_attention_dropout(b, g, s); });
  }
  return rs;
}

}  // namespace sator::rules
