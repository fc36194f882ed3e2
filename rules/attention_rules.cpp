#include "rules/attention_rules.h"

#include "rulelang/rule_set.h"

#include <memory>
#include <cmath>
#include <optional>

#include "rulelang/rule_set.h"
#include "rules/attention_builder.h"

namespace sator::rules {

using eg::Subst;

const std::vector<RuleInfo>& recompose_rule_info() {
  // In the order recompose_rules() builds them; rules/matmul.rules and
  // rules/softmax.rules in their places.
  static const std::vector<RuleInfo> info = [] {
    std::vector<RuleInfo> out = {
        {"bmm-as-matmul", "view(bmm(view(a, [N,L,E]), view(b, [N,E,S])), P+[L,S]) = matmul(a, b) for a = P+[L,E], b = P+[E,S], N = prod(P)"},
        {"softmax-recompose", "exp(x - amax(x, d, keep)) / sum(exp(x - amax(x, d, keep)), d, keep) = _softmax(x, d)"},
    };
    for (const char* file : {"matmul", "softmax"})
      for (const rulelang::RuleSpec& r : rulelang::shipped_rule_file(file).rules) out.push_back({r.name.c_str(), r.doc.c_str()});
    out.push_back({"linear", "view(addmm(b, view(x, [N, In]), permute(W, [1, 0])), P+[Out]) = linear(x, W, b) for x = P+[In], N = prod(P)"});
    out.push_back({"linear-no-bias", "view(mm(view(x, [N, In]), permute(W, [1, 0])), P+[Out]) = linear(x, W)"});
    return out;
  }();
  return info;
}

const std::vector<RuleInfo>& attention_rule_info() {
  static const std::vector<RuleInfo> info = {
      {"attention", "matmul(_softmax(matmul(q, kᵀ) · s [+ m], -1), v) = scaled_dot_product_attention(q, k, v, m, 0, False, scale=s)"},
      {"attention-dropout", "matmul(dropout_p(_softmax(...)), v) = scaled_dot_product_attention(..., dropout_p, ...): equal in distribution only, so opt-in (--fuse-dropout)"},
  };
  return info;
}

namespace {
using Builder = AttentionBuilder;
}  // namespace

std::vector<eg::Rewrite> recompose_rules(TensorEGraph& t) {
  auto b = std::make_shared<Builder>(Builder{t});
  std::vector<eg::Rewrite> rs;
  rs.emplace_back("bmm-as-matmul", t.lang,
                  "(aten.view.default@_ (aten.bmm.default (aten.view.default@_ ?a) (aten.view.default@_ ?b)))",
                  [b](eg::EGraph& g, Id eclass, Subst s) -> Id {
                    const auto *sa = b->shape(s[0]), *sb = b->shape(s[1]), *out = b->shape(eclass);
                    if (!sa || !sb || !out || sa->size() < 3 || sa->size() != sb->size() || out->size() != sa->size())
                      return kNoId;
                    const size_t r = sa->size();
                    // a = P+[L,E], b = P+[E,S] with the same P; the result P+[L,S].
                    SymExpr n = 1;
                    for (size_t i = 0; i + 2 < r; ++i) {
                      if (!b->equal((*sa)[i], (*sb)[i]) || !b->equal((*sa)[i], (*out)[i])) return kNoId;
                      n = n * (*sa)[i];
                    }
                    if (!b->equal((*sa)[r - 1], (*sb)[r - 2]) || !b->equal((*out)[r - 2], (*sa)[r - 2]) ||
                        !b->equal((*out)[r - 1], (*sb)[r - 1]))
                      return kNoId;
                    // The bmm operands must be exactly the flattened a and b.
                    const Id bmm_class = b->child(g, s.root, 0);
                    for (Id bmm : b->nodes(g, bmm_class, "aten.bmm.default")) {
                      const auto *va = b->shape(b->child(g, bmm, 0)), *vb = b->shape(b->child(g, bmm, 1));
                      if (!va || !vb || va->size() != 3 || vb->size() != 3) continue;
                      if (b->equal((*va)[0], n) && b->equal((*va)[1], (*sa)[r - 2]) && b->equal((*va)[2], (*sa)[r - 1]) &&
                          b->equal((*vb)[0], n) && b->equal((*vb)[1], (*sb)[r - 2]) && b->equal((*vb)[2], (*sb)[r - 1]))
                        return b->matmul(g, s[0], s[1]);
                    }
                    return kNoId;
                  });
  rs.emplace_back(
      "softmax-recompose", t.lang,
      "(aten.div.Tensor (aten.exp.default (aten.sub.Tensor ?x ?m)) (aten.sum.dim_IntList@_ (aten.exp.default (aten.sub.Tensor ?x ?m))))",
      [b](eg::EGraph& g, Id, Subst s) -> Id {
        const auto* sx = b->shape(s[0]);
        if (!sx || sx->empty()) return kNoId;
        const size_t rank = sx->size();
        // ?m must be amax(x, [d], keepdim) and the denominator sum over [d], keepdim.
        std::optional<int64_t> dim;
        for (Id amax : b->nodes(g, g.find(s[1]), "aten.amax.default")) {
          const NodeAttrs& a = b->attrs(g, amax);
          if (b->child(g, amax, 0) != g.find(s[0]) || a.args.size() < 3 || a.args[2].kind != Value::Kind::Bool || !a.args[2].b)
            continue;
          const auto dims = int_list(a.args[1], rank);
          if (dims.size() == 1) dim = dims[0];
        }
        if (!dim) return kNoId;
        bool sum_ok = false;
        for (Id sum : b->nodes(g, b->child(g, s.root, 1), "aten.sum.dim_IntList")) {
          const NodeAttrs& a = b->attrs(g, sum);
          if (a.args.size() < 3 || a.args[2].kind != Value::Kind::Bool || !a.args[2].b || !a.kwargs.empty()) continue;
          const auto dims = int_list(a.args[1], rank);
          sum_ok |= dims.size() == 1 && dims[0] == *dim;
        }
        if (!sum_ok) return kNoId;
        NodeAttrs at;
        at.args = {Value::of_node(0), Value::of_int(*dim), Value::of_bool(false)};
        return b->add(g, "aten._softmax.default", at, {s[0]});
      });
  // A number scaling a matmul operand (rules/matmul.rules).
  for (eg::Rewrite& r : rulelang::make_rewrites({rulelang::shipped_rule_file("matmul")}, t)) rs.push_back(std::move(r));
  // Softmax of a 16-bit tensor written with casts (rules/softmax.rules).
  for (eg::Rewrite& r : rulelang::make_rewrites({rulelang::shipped_rule_file("softmax")}, t)) rs.push_back(std::move(r));
  // nn.Linear, as AOTAutograd decomposes it: flatten, addmm (or mm) with the
  // transposed weight, unflatten.
  auto linear = [b](bool bias) {
    return [b, bias](eg::EGraph& g, Id eclass, Subst s) -> Id {
      const Id x = s[0], w = s[1];
      const auto *sx = b->shape(x), *sw = b->shape(w), *out = b->shape(eclass);
      if (!sx || !sw || !out || sx->empty() || sw->size() != 2 || out->size() != sx->size()) return kNoId;
      for (size_t i = 0; i + 1 < sx->size(); ++i)
        if (!b->equal((*sx)[i], (*out)[i])) return kNoId;
      if (!b->equal(out->back(), (*sw)[0]) || !b->equal(sx->back(), (*sw)[1])) return kNoId;
      // The product node: its operands must be exactly view(x, [N, In]) and W transposed.
      const Id prod_class = b->child(g, s.root, 0);
      for (Id mm : b->nodes(g, prod_class, bias ? "aten.addmm.default" : "aten.mm.default")) {
        if (!b->attrs(g, mm).kwargs.empty()) continue;  // beta, alpha: the defaults only
        const size_t a0 = bias ? 1 : 0;
        const auto* flat = b->shape(b->child(g, mm, a0));
        if (!flat || flat->size() != 2 || !b->equal((*flat)[1], sx->back())) continue;
        bool transposed = false;
        for (Id p : b->nodes(g, b->child(g, mm, a0 + 1), "aten.permute.default"))
          transposed |= b->child(g, p, 0) == g.find(w) && int_list(b->attrs(g, p).args[1], 2) == std::vector<int64_t>{1, 0};
        if (!transposed) continue;
        bool flattens_x = false;
        for (Id v : b->nodes(g, b->child(g, mm, a0), "aten.view.default")) flattens_x |= b->child(g, v, 0) == g.find(x);
        if (!flattens_x) continue;
        NodeAttrs at;
        at.args = {Value::of_node(0), Value::of_node(1), bias ? Value::of_node(2) : Value::none()};
        std::vector<Id> kids = {x, w};
        if (bias) {
          const auto* sb = b->shape(b->child(g, mm, 0));
          if (!sb || sb->size() != 1 || !b->equal((*sb)[0], (*sw)[0])) continue;
          kids.push_back(b->child(g, mm, 0));
        }
        return b->add(g, "aten.linear.default", at, kids);
      }
      return kNoId;
    };
  };
  rs.emplace_back("linear", t.lang,
                  "(aten.view.default (aten.addmm.default ?b (aten.view.default ?x) (aten.permute.default ?w)))",
                  [lin = linear(true)](eg::EGraph& g, Id eclass, Subst s) {
                    // The searcher binds ?b first: pass x and w in the order the builder expects.
                    const Id vals[2] = {s[1], s[2]};
                    return lin(g, eclass, Subst{vals, s.root});
                  });
  rs.emplace_back("linear-no-bias", t.lang, "(aten.view.default (aten.mm.default (aten.view.default ?x) (aten.permute.default ?w)))",
                  linear(false));
  return rs;
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
      query = b->add(g, f.divide ? "aten.div.Tensor" : "aten.mul.Tensor", sa, {f.q, f.scale_tensor});
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

std::vector<eg::Rewrite> attention_rules(TensorEGraph& t, bool fuse_dropout) {
  auto b = std::make_shared<Builder>(Builder{t});
  std::vector<eg::Rewrite> rs;
  rs.emplace_back("attention", t.lang, "(aten.matmul.default (aten._softmax.default@_ ?s) ?v)",
                  [b](eg::EGraph& g, Id, Subst s) -> Id { return fuse_attention(b, g, b->child(g, s.root, 0), s[0], s[1], 0.0); });
  if (!fuse_dropout) return rs;
  // Dropout written out: matmul(mul(mul(gt(rand, p), softmax), 1/(1-p)), v).
  // SDPA draws its own random numbers: equal in distribution, not in value.
  rs.emplace_back("attention-dropout", t.lang,
                  "(aten.matmul.default (aten.mul.Tensor (aten.mul.Tensor ?keep (aten._softmax.default ?s))) ?v)",
                  [b](eg::EGraph& g, Id, Subst s) -> Id {
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
                  });
  return rs;
}

}  // namespace sator::rules
