#include "rulelang/rule_diagnose.h"

#include "egraph/matcher.h"
#include "ir/op_table.h"
#include "ir/printable.h"

namespace sator::rulelang {

namespace {

std::string op_label(const PatternNode& p) { return p.op ? p.op->name : std::string("a member of its op family"); }

class Explainer {
 public:
  Explainer(const CompiledRule& r, TensorEGraph& t) : r_(r), t_(t), g_(t.egraph) {}

  bool node_has_op(const PatternNode& p, eg::Id n) const {
    const std::string& name = t_.lang.op_name(g_.op(n));
    return p.family ? op_has(name, *p.family) : (p.op && name == p.op->name);
  }

  // Why e-node `n` does not fit pattern node `p` by its op, its attributes
  // and its arguments' ops (recursively); "" where it fits. Variables bound
  // twice are the matcher's to compare.
  std::string misfit(int p, eg::Id n, int depth = 0) const {
    const PatternNode& pn = r_.pattern[static_cast<size_t>(p)];
    if (pn.is_var) return "";
    if (!node_has_op(pn, n)) return "it is " + t_.lang.op_name(g_.op(n)) + ", not " + op_label(pn);
    if (pn.family || depth > 32) return "";
    const NodeAttrs& attrs = t_.lang.attrs(g_.attr(n));
    const auto kids = g_.children(n);
    for (const PatternArg& a : pn.args) {
      if (a.kind == PatternArg::Kind::Any || a.kind == PatternArg::Kind::Var) continue;
      const std::string& param = pn.op->params[a.param].name;
      const Value& v = pattern_arg_value(*pn.op, attrs, a);
      if (a.kind == PatternArg::Kind::Literal) {
        if (!same_attribute(v, a.literal))
          return "its argument '" + param + "' is " + printable(encode_value_text(v)) + " where " + pn.at.text() +
                 " says " + printable(encode_value_text(a.literal));
        continue;
      }
      // A child: an op node of the pattern in the class this argument reads.
      const PatternNode& cn = r_.pattern[static_cast<size_t>(a.child)];
      if (cn.is_var) continue;
      if (!v.is_node() || v.node >= kids.size()) return "its argument '" + param + "' is not a tensor";
      const eg::Id cls = g_.find(kids[v.node]);
      std::string first;
      bool any_op = false;
      for (eg::Id m : g_.class_nodes(cls)) {
        if (!node_has_op(cn, m)) continue;
        any_op = true;
        const std::string why = misfit(a.child, m, depth + 1);
        if (why.empty()) {
          first.clear();
          break;
        }
        if (first.empty()) first = why;
      }
      if (!any_op) return "its argument '" + param + "' is never " + op_label(cn) + " (" + cn.at.text() + ")";
      if (!first.empty()) return "its argument '" + param + "', " + op_label(cn) + " (" + cn.at.text() + "): " + first;
    }
    return "";
  }

 private:
  static std::string encode_value_text(const Value& v) {
    switch (v.kind) {
      case Value::Kind::None: return "none";
      case Value::Kind::Bool: return v.b ? "true" : "false";
      case Value::Kind::Int: return std::to_string(v.i);
      case Value::Kind::Float: return std::to_string(v.f);
      case Value::Kind::DType: return std::string(dtype_name(v.dtype));
      case Value::Kind::List: {
        std::string s = "[";
        for (size_t i = 0; i < v.list.size(); ++i) s += (i ? ", " : "") + encode_value_text(v.list[i]);
        return s + "]";
      }
      case Value::Kind::Sym: return v.sym.to_string();
      default: return v.s.empty() ? std::string("a value") : v.s;
    }
  }

  const CompiledRule& r_;
  TensorEGraph& t_;
  eg::EGraph& g_;
};

}  // namespace

std::vector<RulePlace> rule_places(const std::shared_ptr<CompiledRule>& rule, TensorEGraph& t, size_t limit,
                                   size_t* places_total) {
  eg::EGraph& g = t.egraph;
  g.rebuild();
  const eg::Rewrite rw = make_rewrite(rule, t);  // binds the matcher's variables (matcher_var, root_slot)
  const int root = rule->roots.front();
  const Explainer explain(*rule, t);
  std::vector<eg::Id> candidates;
  for (eg::Id c : g.class_ids())
    for (eg::Id n : g.class_nodes(c))
      if (explain.node_has_op(rule->pattern[static_cast<size_t>(root)], n)) candidates.push_back(n);
  if (places_total) *places_total = candidates.size();
  std::vector<RulePlace> out;
  for (eg::Id n : candidates) {
    if (out.size() >= limit) break;
    RulePlace place;
    place.node = n;
    const eg::Id cls = g.find(n);
    eg::Matches m;
    rw.search_class(g, cls, m);
    bool matched = false;
    for (size_t i = 0; i < m.size() && !place.fires; ++i) {
      if (m.roots[i] != n && m.roots[i] != eg::kNoId) continue;
      matched = true;
      const MatchDiagnosis d = diagnose_match(rule, t, m.classes[i], eg::Subst{m.subst(i), m.roots[i]});
      place.fires = d.fires;
      if (!d.fires && place.why.empty()) place.why = d.why;
    }
    if (!matched) {
      place.why = explain.misfit(root, n);
      if (place.why.empty())
        place.why = rule->roots.size() > 1 ? "the rule's other patterns find no partner for it"
                                           : "a variable the pattern uses twice is bound to two different tensors";
    }
    out.push_back(std::move(place));
  }
  return out;
}

}  // namespace sator::rulelang
