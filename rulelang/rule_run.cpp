// Running a compiled rule on one match: the e-graph matcher has bound the
// tensor variables and the root node; here the interior nodes are found
// again (every node of a child class that fits, so that each binding of
// their attributes is tried), the attributes are read by schema parameter,
// each let and condition runs as soon as what it reads is bound (a failing
// one cuts the search there), and for each complete binding whose
// conditions hold the right-hand side is built. A match that is a
// multi-pattern's starts at each pattern's root class.
#include <algorithm>
#include <span>
#include <stdexcept>
#include <unordered_map>

#include "ir/infer_context.h"
#include "rulelang/compiled_rule.h"
#include "rulelang/functions.h"
#include "rulelang/match_memo.h"

namespace sator::rulelang {

namespace {

using eg::Id;
using eg::kNoId;

// More bindings than this of one match are not tried (a class holding
// hundreds of equal views of one tensor would make each rule quadratic).
constexpr size_t kMaxBindings = 256;

// Variable values by index; `bound` has bit v set once variable v has one.
struct Binding {
  std::vector<RValue> vals;
  std::vector<Id> nodes;  // by variable: the node a ?n=(...) matched
  uint64_t bound = 0;
  bool has(size_t v) const { return (bound >> v) & 1; }
  void set(size_t v, RValue x) {
    vals[v] = std::move(x);
    bound |= uint64_t{1} << v;
  }
};

bool is_number(const Value& v) { return v.kind == Value::Kind::Int || v.kind == Value::Kind::Float || v.kind == Value::Kind::Bool; }
double number(const Value& v) { return v.kind == Value::Kind::Int ? static_cast<double>(v.i) : v.kind == Value::Kind::Bool ? v.b : v.f; }
bool same(const Value& a, const Value& b) {
  if (is_number(a) && is_number(b) && a.kind != Value::Kind::Bool && b.kind != Value::Kind::Bool) return number(a) == number(b);
  return a == b;
}

// The value a node gives the pattern's parameter: positional, by keyword, or
// the default.
const Value& arg_value(const OpInfo& op, const NodeAttrs& a, const PatternArg& pa) {
  const ParamSpec& spec = op.params[pa.param];
  if (!spec.kwarg_only && pa.param < a.args.size()) return a.args[pa.param];
  for (const auto& [name, v] : a.kwargs)
    if (name == spec.name) return v;
  return pa.fallback;
}

// Sizes in the form the graph writes them (constants as Int).
Value normal(Value v, Type t) {
  auto constant_sym = [](const Value& x) { return x.kind == Value::Kind::Sym && x.sym.is_constant(); };
  if (t == Type::Size && constant_sym(v)) return Value::of_int(v.sym.constant());
  if ((t == Type::Sizes || t == Type::IntList) && v.is_list() && std::any_of(v.list.begin(), v.list.end(), constant_sym))
    return sizes_value(to_sizes(v));
  return v;
}

class Run {
 public:
  // One per rewrite, its buffers reused from match to match (a rule runs on
  // every match in every iteration; allocating them each time cost more than
  // the matching).
  Run(std::shared_ptr<const CompiledRule> r, TensorEGraph& t) : rule_(std::move(r)), r_(*rule_), t_(t), g_(t.egraph) {
    scratch_.vals.resize(r_.vars.size());
    scratch_.nodes.resize(r_.vars.size(), kNoId);
  }

  // With a diagnosis, the run records why a match did not rewrite (the
  // first condition that failed, where it is written) instead of skipping
  // matches it ran before.
  void diagnose(MatchDiagnosis* d) { diag_ = d; }

  Id apply(eg::EGraph& g, Id eclass, eg::Subst s) {
    if (&g != &g_) throw std::logic_error("rule '" + r_.name + "' was made for another e-graph");
    Binding& b = scratch_;
    b.bound = 0;
    uses_ = 0;
    result_ = kNoId;
    // The match as the rule reads it: the root node, the root classes and
    // the pattern's tensor variables, canonical.
    seen_.clear();
    seen_.push_back(s.root);
    for (size_t v = 0; v < r_.vars.size(); ++v)
      if (r_.vars[v].in_pattern) {
        b.set(v, RValue::tensor(g_.find(s[r_.matcher_var[v]])));
        seen_.push_back(b.vals[v].cls);
      }
    chosen_.assign(r_.steps.size(), kNoId);
    classes_.assign(r_.steps.size(), kNoId);
    root_ = s.root;
    root_classes_.assign(1, g_.find(eclass));
    for (uint32_t slot : r_.root_slot) root_classes_.push_back(g_.find(s[slot]));
    seen_.insert(seen_.end(), root_classes_.begin(), root_classes_.end());
    const size_t key_size = seen_.size();
    if (!diag_ && memo_.applied_unchanged(g_, seen_)) return kNoId;  // applied before; nothing it reads has changed since
    const uint32_t clock = g_.change_clock();
    find(0, b);
    memo_.remember(seen_, key_size, clock);
    return result_;
  }

 private:
  std::shared_ptr<const CompiledRule> rule_;
  const CompiledRule& r_;
  TensorEGraph& t_;
  eg::EGraph& g_;
  Binding scratch_;
  std::vector<Id> chosen_, classes_;  // per step: the node matched, its class
  Id root_ = kNoId;                // the first pattern's root node (the matcher's)
  std::vector<Id> root_classes_;   // each pattern's root class
  std::vector<Id> built_;          // scratch: one binding's right-hand sides
  size_t uses_ = 0;  // bindings tried for this match
  // The nodes of a class in an op family, remembered until the next rebuild:
  // every view of a class asks, and a class merged from thousands of views
  // (a deep view chain) would be scanned once per view, quadratically. (A
  // node merged into the class after the scan is seen after the rebuild.)
  uint64_t family_epoch_ = ~uint64_t{0};
  std::unordered_map<Id, std::vector<Id>> family_cache_;
  std::vector<int8_t> in_family_;  // by op id: -1 not asked yet, 0 no, 1 yes (a rule has one family)
  const std::vector<Id>& family_nodes(Id cls, OpFact fact) {
    if (family_epoch_ != g_.stats().rebuilds) {
      family_cache_.clear();
      family_epoch_ = g_.stats().rebuilds;
    }
    auto it = family_cache_.find(cls);
    if (it != family_cache_.end()) return it->second;
    std::vector<Id> found;
    for (Id n : g_.class_nodes(cls)) {
      const eg::OpId op = g_.op(n);
      if (op >= in_family_.size()) in_family_.resize(op + 1, -1);
      if (in_family_[op] < 0) in_family_[op] = op_has(t_.lang.op_name(op), fact) ? 1 : 0;
      if (in_family_[op] == 1) found.push_back(n);
    }
    return family_cache_.emplace(cls, std::move(found)).first->second;
  }
  std::vector<Id> candidates_;  // scratch: a class's nodes, copied before building
  // The match's key (root node, variables' and root classes), then every
  // class the run read or built: what it did depends on these alone.
  std::vector<Id> seen_;
  MatchMemo memo_;
  MatchDiagnosis* diag_ = nullptr;
  void note(const std::string& why) {
    if (diag_ && diag_->why.empty()) diag_->why = why;
  }
  Id result_ = kNoId;

  // The lets and conditions that run at point i (CompiledRule::checks_at):
  // false where a condition does not hold or a function declines.
  bool checks_hold(size_t i, Binding& x) {
    try {
      for (const auto& [let, k] : r_.checks_at[i]) {
        if (let) {
          const auto& [v, e] = r_.lets[k];
          x.set(static_cast<size_t>(v), materialize(eval(e, x)));
        } else if (!eval(r_.conditions[k], x).truth()) {
          note("the condition at " + r_.conditions[k].at.text() + " does not hold");
          return false;
        }
      }
    } catch (const Decline&) {
      note("a function in a let or condition declines the match (at step " + std::to_string(i) + " of the pattern)");
      return false;
    } catch (const SymOverflow&) {
      // A size the condition computes does not fit 64 bits on this match:
      // it does not hold here (the rule's own file is checked for this
      // before it runs: rule_compile's constant conditions).
      return false;
    }
    return true;
  }

  // The right-hand sides of a complete binding. Every side is built before
  // any is merged: a side that declines leaves nothing merged.
  void use(Binding& x) {
    // Only at the ranks check-rules checked the rule at.
    for (size_t v = 0; v < r_.vars.size(); ++v)
      if (x.has(v) && x.vals[v].cls != kNoId &&
          t_.analysis.data(g_.find(x.vals[v].cls)).type.shape.size() > kMaxCheckedRank) {
        note("a tensor of rank above " + std::to_string(kMaxCheckedRank) + ", beyond the ranks check-rules checks");
        return;
      }
    for (Id c : root_classes_)
      if (c != kNoId && t_.analysis.data(g_.find(c)).type.shape.size() > kMaxCheckedRank) {
        note("a tensor of rank above " + std::to_string(kMaxCheckedRank) + ", beyond the ranks check-rules checks");
        return;
      }
    try {
      built_.clear();
      for (const RootRewrite& side : r_.rhs) {
        built_.push_back(eval(side.expr, x).cls);
        if (built_.back() == kNoId) return;
      }
    } catch (const Decline&) {
      note("the right-hand side declines (a function in it cannot compute its value here)");
      return;
    } catch (const SymOverflow&) {
      return;  // a size of the right-hand side does not fit 64 bits: nothing built is merged
    }
    if (diag_) diag_->fires = true;
    for (size_t k = 0; k < r_.rhs.size(); ++k) {
      if (r_.rhs[k].pattern != 0) {
        g_.union_classes(root_classes_[r_.rhs[k].pattern], built_[k], r_.name);
        continue;
      }
      if (result_ != kNoId) g_.union_classes(result_, built_[k], r_.name);
      result_ = built_[k];
    }
  }

  // Step i onward, every way the e-graph holds it.
  void find(size_t i, Binding& b) {
    // What the bindings so far decide is checked before going deeper.
    if (!checks_hold(i, b)) return;
    // A complete binding is used at once: what it builds cannot disturb the
    // matching above it, which holds no reference into the e-graph across
    // this call (class nodes are copied, attributes read before it).
    if (i == r_.steps.size()) {
      if (uses_++ < kMaxBindings) use(b);
      return;
    }
    const MatchStep& st = r_.steps[i];
    const PatternNode& pn = r_.pattern[static_cast<size_t>(st.node)];
    if (st.parent < 0 && st.pattern == 0) {
      classes_[i] = root_classes_[0];
      try_node(i, pn, root_, b);
      return;
    }
    if (st.parent < 0) {
      // A later pattern's root: the matcher gives its class, not its node.
      classes_[i] = root_classes_[st.pattern];
    } else {
      // The class the parent's argument reads.
      const auto p = static_cast<size_t>(st.parent);
      const PatternNode& parent = r_.pattern[static_cast<size_t>(r_.steps[p].node)];
      const Value& slot = arg_value(*parent.op, t_.lang.attrs(g_.attr(chosen_[p])), parent.args[st.parent_arg]);
      const std::span<const Id> kids = g_.children(chosen_[p]);
      if (!slot.is_node() || slot.node >= kids.size()) return;
      classes_[i] = g_.find(kids[slot.node]);
    }
    seen_.push_back(classes_[i]);
    const size_t from = candidates_.size();
    if (pn.family) {
      const std::vector<Id>& members = family_nodes(classes_[i], *pn.family);
      candidates_.insert(candidates_.end(), members.begin(), members.end());
    } else {
      for (Id n : g_.class_nodes(classes_[i]))
        if (g_.op(n) == pn.op_id) candidates_.push_back(n);
    }
    const size_t to = candidates_.size();
    for (size_t k = from; k < to && uses_ < kMaxBindings; ++k) try_node(i, pn, candidates_[k], b);
    candidates_.resize(from);
  }

  // Node `node` as step i's pattern node: its arguments checked and bound,
  // then the steps after it; the bindings it made are undone after.
  void try_node(size_t i, const PatternNode& pn, Id node, Binding& b) {
    const uint64_t before = b.bound;
    const NodeAttrs& attrs = t_.lang.attrs(g_.attr(node));
    const std::span<const Id> kids = g_.children(node);
    bool ok = true;
    if (pn.var >= 0) {
      b.set(static_cast<size_t>(pn.var), RValue::tensor(classes_[i]));
      b.nodes[static_cast<size_t>(pn.var)] = node;
    }
    if (pn.family) {
      // A family member: its tensor inputs in order, each a variable.
      ok = kids.size() == pn.args.size();
      for (size_t k = 0; ok && k < pn.args.size(); ++k) {
        const auto var = static_cast<size_t>(r_.pattern[static_cast<size_t>(pn.args[k].child)].var);
        seen_.push_back(g_.find(kids[k]));
        if (!b.has(var)) b.set(var, RValue::tensor(seen_.back()));  // only the family binds it
        else ok = g_.find(b.vals[var].cls) == seen_.back();
      }
      if (ok) {
        chosen_[i] = node;
        find(i + 1, b);
      }
      b.bound = before;
      return;
    }
    for (const PatternArg& a : pn.args) {
      if (a.kind == PatternArg::Kind::Any) continue;
      const Value& v = arg_value(*pn.op, attrs, a);
      if (a.kind == PatternArg::Kind::Literal) {
        ok = same(v, a.literal);
      } else if (a.kind == PatternArg::Kind::Var) {
        const auto var = static_cast<size_t>(a.var);
        // A tensor input is never an attribute; a number is an int or a float.
        ok = !v.is_node() && (r_.vars[var].type != Type::Number || v.kind == Value::Kind::Int || v.kind == Value::Kind::Float);
        if (!ok) break;
        if (b.has(var)) ok = same(b.vals[var].value(), v);
        else b.set(var, RValue::at(v));
      } else {  // Child: a tensor variable is checked here, an op node by its own step
        ok = v.is_node() && v.node < kids.size();
        const PatternNode& cn = r_.pattern[static_cast<size_t>(a.child)];
        if (ok && cn.is_var) {
          seen_.push_back(g_.find(kids[v.node]));
          ok = g_.find(b.vals[static_cast<size_t>(cn.var)].cls) == seen_.back();
        }
      }
      if (!ok) break;
    }
    if (ok) {
      chosen_[i] = node;
      find(i + 1, b);
    }
    b.bound = before;  // values past `bound` are never read
  }

  RValue eval(const Expr& e, const Binding& b) {
    switch (e.kind) {
      case Expr::Kind::Var: return b.vals[static_cast<size_t>(e.var)].view();
      case Expr::Kind::Literal: return RValue::at(e.literal);
      case Expr::Kind::If: {
        const bool then = eval(e.args[0], b).truth();
        if (e.branch >= 0 && r_.branches) r_.branches->hits[2 * static_cast<size_t>(e.branch) + (then ? 0 : 1)]++;
        return eval(e.args[then ? 1 : 2], b);  // (a branch's shape is read in place too)
      }
      case Expr::Kind::Call: {
        using S = Expr::Special;
        switch (e.special) {
          case S::Equal:
          case S::NotEqual: {
            // Shapes compared where they live.
            const Truth eq = equality(t_, eval(e.args[0], b), eval(e.args[1], b));
            return RValue::of_bool(eq == (e.special == S::Equal ? Truth::True : Truth::False));
          }
          case S::And:
          case S::Or: {
            // Stops at the first argument that settles it.
            const bool any = e.special == S::Or;
            for (const Expr& a : e.args)
              if (eval(a, b).truth() == any) return RValue::of_bool(any);
            return RValue::of_bool(!any);
          }
          case S::None: break;
        }
        // Arguments that are variables are read where they are bound; up to
        // four computed ones live on the stack (calls run in every match).
        const size_t n = e.args.size();
        RValue small[4];
        std::vector<RValue> large(n > 4 ? n : 0);
        RValue* computed = n > 4 ? large.data() : small;
        const RValue* small_args[4];
        std::vector<const RValue*> large_args(n > 4 ? n : 0);
        const RValue** args = n > 4 ? large_args.data() : small_args;
        for (size_t i = 0; i < n; ++i) {
          if (e.args[i].kind == Expr::Kind::Var) {
            args[i] = &b.vals[static_cast<size_t>(e.args[i].var)];
            continue;
          }
          computed[i] = eval(e.args[i], b);  // a shape read in place stays valid through the call
          args[i] = &computed[i];
        }
        return e.fn->run(t_, std::span<const RValue* const>(args, n));
      }
      case Expr::Kind::Build: return RValue::tensor(build(e, b));
      case Expr::Kind::Like: {
        // The matched node's op and attributes over the new inputs.
        const Id node = b.nodes[static_cast<size_t>(e.var)];
        std::vector<Id> kids;
        for (const Expr& a : e.args) kids.push_back(eval(a, b).cls);
        if (node == kNoId || kids.size() != g_.children(node).size()) throw Decline{};
        seen_.push_back(g_.add(g_.op(node), g_.attr(node), kids));
        return RValue::tensor(seen_.back());
      }
    }
    throw Decline{};
  }

  Id build(const Expr& e, const Binding& b) {
    NodeAttrs a;
    std::vector<Id> kids;
    for (size_t i = 0; i < e.args.size(); ++i) {
      const auto p = static_cast<size_t>(e.arg_params[i]);
      const ParamSpec& spec = e.op->params[p];
      RValue computed;
      const bool var = e.args[i].kind == Expr::Kind::Var;
      if (!var) computed = eval(e.args[i], b);
      const RValue& x = var ? b.vals[static_cast<size_t>(e.args[i].var)] : computed;
      Value v;
      if (x.cls != kNoId) {
        v = Value::of_node(static_cast<NodeId>(kids.size()));
        kids.push_back(x.cls);
      } else if (const std::vector<SymExpr>* sizes = x.size_list()) {
        v = sizes_value(*sizes);  // already in the graph's form
      } else {
        v = normal(var ? x.value() : computed.take(), param_type(spec));
      }
      if (spec.kwarg_only) {
        a.kwargs.emplace_back(spec.name, std::move(v));
        continue;
      }
      while (a.args.size() < p) a.args.push_back(parse_default(e.op->params[a.args.size()]));
      a.args.push_back(std::move(v));
    }
    seen_.push_back(g_.add(e.op_id, t_.lang.intern(a), kids));
    return seen_.back();
  }
};

}  // namespace

const Value& pattern_arg_value(const OpInfo& op, const NodeAttrs& a, const PatternArg& pa) { return arg_value(op, a, pa); }
bool same_attribute(const Value& a, const Value& b) { return same(a, b); }

MatchDiagnosis diagnose_match(std::shared_ptr<CompiledRule> rule, TensorEGraph& t, eg::Id eclass, eg::Subst s) {
  MatchDiagnosis d;
  Run run(std::move(rule), t);
  run.diagnose(&d);
  const Id built = run.apply(t.egraph, eclass, s);
  if (built != kNoId) d.fires = true;
  if (!d.fires && d.why.empty()) d.why = "no binding of the pattern's inner nodes completes the match";
  return d;
}

eg::Rewrite make_rewrite(std::shared_ptr<CompiledRule> rule, TensorEGraph& t) {
  std::shared_ptr<const CompiledRule> r = rule;
  eg::Rewrite rw(rule->name, t.lang, rule->searcher,
                 [run = std::make_shared<Run>(r, t)](eg::EGraph& g, Id eclass, eg::Subst s) { return run->apply(g, eclass, s); });
  rule->matcher_var.assign(rule->vars.size(), 0);
  for (size_t v = 0; v < rule->vars.size(); ++v)
    if (rule->vars[v].in_pattern) rule->matcher_var[v] = rw.var(rule->vars[v].name);
  rule->root_slot.clear();
  for (size_t j = 1; j < rule->roots.size(); ++j) rule->root_slot.push_back(rw.var("?#root" + std::to_string(j)));
  return rw;
}

}  // namespace sator::rulelang
