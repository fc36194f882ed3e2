#include "check/cases_generated.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>

#include "ir/infer_context.h"

namespace sator::check {

namespace {

using rulelang::CompiledRule;
using rulelang::PatternArg;
using rulelang::PatternNode;
using B = GraphBuilder;

bool named(const ParamSpec& p, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (p.name == n) return true;
  return false;
}

// `shape` expanded: size-1 dims to a drawn size, others kept or written -1,
// sometimes a new leading dim.
Value expand_sizes(Draw& d, const std::vector<SymExpr>& shape) {
  std::vector<Value> out;
  if (d.integer(0, 3) == 0) out.push_back(Value::of_int(d.integer(2, 3)));
  for (const SymExpr& s : shape) {
    if (s.as_constant() == 1 && d.coin()) out.push_back(B::sizes({d.big()}).list[0]);
    else if (d.integer(0, 3) == 0) out.push_back(Value::of_int(-1));
    else out.push_back(B::sizes({s}).list[0]);
  }
  return Value::of_list(std::move(out));
}

// A value for parameter p of `op`, whose first tensor argument has `shape`.
Value draw_param(Draw& d, const OpInfo& op, const ParamSpec& p, const std::vector<SymExpr>& shape, DType input = DType::Float32) {
  const auto rank = static_cast<int64_t>(shape.size());
  if (p.optional && d.integer(0, 3) == 0) return Value::none();
  switch (p.type) {
    case ParamType::Int:
      if (named(p, {"dim", "dim0", "dim1", "start_dim", "end_dim"})) return Value::of_int(d.integer(-rank - 1, rank));
      return Value::of_int(d.integer(0, 3));
    case ParamType::IntList: {
      if (named(p, {"dims", "perm"})) {
        std::vector<int64_t> perm = d.permutation(shape.size());
        for (int64_t& x : perm) x = d.maybe_negative(x, shape.size());
        return B::ints(perm);
      }
      std::vector<int64_t> dims;  // a reduction's dims: a non-empty subset
      for (int64_t i = 0; i < rank; ++i)
        if (d.coin()) dims.push_back(d.maybe_negative(i, shape.size()));
      if (dims.empty() && rank > 0) dims.push_back(d.integer(0, rank - 1));
      return B::ints(dims);
    }
    case ParamType::SymIntList:
      if (op.name == "aten.expand.default") return expand_sizes(d, shape);
      if (rank >= 2 && d.integer(0, 2) == 0) {
        // The leading dims flattened into one, the last one or two kept: how
        // AOTAutograd feeds mm and bmm.
        const int64_t keep = d.integer(1, std::min<int64_t>(2, rank - 1));
        std::vector<SymExpr> out = {product({shape.begin(), shape.end() - keep})};
        out.insert(out.end(), shape.end() - keep, shape.end());
        return B::sizes(out);
      }
      return B::sizes(regroup(d, shape));
    case ParamType::SymInt: {
      // Slice bounds and the like: often the whole dim (start 0 or None,
      // end past the end as PyTorch writes it, or None), else a small bound.
      if (p.optional && d.integer(0, 2) == 0) return Value::none();
      static const std::vector<int64_t> menu = {0, 0, std::numeric_limits<int64_t>::max(),
                                                std::numeric_limits<int64_t>::max(), 1, 2, -1};
      return Value::of_int(d.pick(menu));
    }
    case ParamType::ScalarType: {
      // Casts mostly go to float32 or back to the input's dtype (autocast's
      // up- and downcasts), sometimes elsewhere.
      const std::vector<DType> menu = {input, input, DType::Float32, DType::Float32, DType::Float64, DType::BFloat16, DType::Float16};
      return Value::of_dtype(d.pick(menu));
    }
    case ParamType::Float:
    case ParamType::Scalar:
    case ParamType::Tensor: return Value::of_float(d.number());
    case ParamType::Bool: return Value::of_bool(d.coin());
    default:
      if (p.has_default) return parse_default(p);
      throw ShapeError("check-rules cannot draw parameter '" + p.name + "' of " + op.name);
  }
}

// The numbers a rule's conditions and lets compare or compute with
// (`(= ?c 1)`, `(> ?c 0.5)`): drawn for its numeric variables half the time,
// so that a condition holding only at such a value is met in the trials
// (`mul-one` was "never fired" in 32,400 draws, issue 42).
void collect_numbers(const rulelang::Expr& e, std::vector<double>& out) {
  if (e.kind == rulelang::Expr::Kind::Literal) {
    if (e.literal.kind == Value::Kind::Float) out.push_back(e.literal.f);
    if (e.literal.kind == Value::Kind::Int) out.push_back(static_cast<double>(e.literal.i));
  }
  for (const rulelang::Expr& a : e.args) collect_numbers(a, out);
}

std::vector<double> condition_numbers(const CompiledRule& r) {
  std::vector<double> out;
  for (const rulelang::Expr& c : r.conditions) collect_numbers(c, out);
  for (const auto& [var, e] : r.lets) collect_numbers(e, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool numeric(ParamType t) { return t == ParamType::Float || t == ParamType::Scalar || t == ParamType::Tensor; }

class Instance {
 public:
  Instance(const CompiledRule& r, const std::vector<double>& numbers, Draw& d, size_t rank)
      : r_(r), d_(d), rank_(rank), numbers_(numbers) {}

  NodeId build(int i) {
    const PatternNode& n = r_.pattern[static_cast<size_t>(i)];
    if (n.is_var) {
      // A multi-pattern's later pattern may read a node an earlier one named.
      if (const auto it = named_.find(n.var); it != named_.end()) return it->second;
      return tensor_var(n.var);
    }
    const NodeId node = build_op(n);
    if (n.var >= 0) named_[n.var] = node;
    return node;
  }

 private:
  NodeId build_op(const PatternNode& n) {
    if (n.family) return family_member(n);
    std::vector<Value> args;
    std::vector<std::pair<std::string, Value>> kwargs;
    std::vector<SymExpr> first_shape;
    DType first_dtype = dtype_;
    bool have_shape = false;
    for (const PatternArg& a : n.args) {
      const ParamSpec& p = n.op->params[a.param];
      Value v;
      switch (a.kind) {
        case PatternArg::Kind::Child: {
          const NodeId c = build(a.child);
          if (!have_shape) first_shape = d_.b.type(c).shape, first_dtype = d_.b.type(c).dtype, have_shape = true;
          v = B::ref(c);
          break;
        }
        case PatternArg::Kind::Literal: v = a.literal; break;
        case PatternArg::Kind::Var: {
          auto it = attrs_.find(a.var);
          if (it == attrs_.end()) {
            const bool steered = numeric(p.type) && !numbers_.empty() && d_.coin();
            it = attrs_.emplace(a.var, steered ? Value::of_float(d_.pick(numbers_))
                                               : draw_param(d_, *n.op, p, first_shape, first_dtype)).first;
          }
          v = it->second;
          break;
        }
        case PatternArg::Kind::Any: v = draw_param(d_, *n.op, p, first_shape, first_dtype); break;
      }
      if (p.kwarg_only) {
        if (!(a.kind == PatternArg::Kind::Literal && p.has_default && v == a.fallback)) kwargs.emplace_back(p.name, std::move(v));
      } else {
        args.push_back(std::move(v));
      }
    }
    // Trailing arguments equal to their defaults are left out, as PyTorch writes them.
    while (!args.empty()) {
      const ParamSpec& p = n.op->params[args.size() - 1];
      if (!p.has_default || !(args.back() == parse_default(p))) break;
      args.pop_back();
    }
    return d_.b.op(n.op->name, std::move(args), std::move(kwargs));
  }

  // A random op of the family over the pattern's inputs, its other
  // parameters drawn.
  NodeId family_member(const PatternNode& n) {
    std::vector<const OpInfo*> members;
    for (std::string_view name : ops_with(*n.family))
      if (const OpInfo* op = find_op(name)) {
        size_t tensors = 0;
        for (const ParamSpec& p : op->params) tensors += p.type == ParamType::Tensor && !p.optional;
        if (tensors >= n.args.size()) members.push_back(op);
      }
    if (members.empty()) throw ShapeError("check-rules: no op of the family takes these inputs");
    const OpInfo& op = *d_.pick(members);
    std::vector<Value> args;
    std::vector<SymExpr> first_shape;
    size_t next = 0;
    for (const ParamSpec& p : op.params) {
      if (p.kwarg_only) break;
      if (p.type == ParamType::Tensor && next < n.args.size()) {
        const NodeId c = build(n.args[next++].child);
        if (first_shape.empty()) first_shape = d_.b.type(c).shape;
        args.push_back(B::ref(c));
      } else if (!p.has_default) {
        args.push_back(draw_param(d_, op, p, first_shape));
      }
    }
    const NodeId node = d_.b.op(op.name, std::move(args));
    return node;
  }

  const CompiledRule& r_;
  Draw& d_;
  size_t rank_;
  const std::vector<double>& numbers_;  // condition_numbers(r_), computed once per rule
  std::map<int, NodeId> tensors_;
  std::map<int, NodeId> named_;  // ?n=(...) nodes built so far
  std::map<int, Value> attrs_;

  // A tensor variable: an input of the instance's rank, or of a shape
  // related to the first one's.
  NodeId tensor_var(int var) {
    if (auto it = tensors_.find(var); it != tensors_.end()) return it->second;
    if (shape_.empty() && !drawn_) {
      shape_ = d_.shape(rank_);
      // Mostly float32; sometimes the 16-bit types autocast and bf16
      // weights give, or float64 (a rule that holds only for one dtype, or
      // reads one, is drawn both ways).
      static const std::vector<DType> dtypes = {DType::Float32, DType::Float32, DType::Float32,
                                                DType::BFloat16, DType::Float16, DType::Float64};
      dtype_ = d_.pick(dtypes);
      drawn_ = true;
    }
    // The first tensor has the instance's shape; each later one half the
    // time too, else one that broadcasts into it, as a bias or a mask does:
    // a suffix of it, or it with some dims 1. (Shapes that broadcast only
    // where two sizes happen to be equal would make symbolic instances the
    // prover cannot type.)
    if (tensors_.empty() || d_.coin()) return tensors_[var] = d_.b.input(shape_, dtype_);
    std::vector<SymExpr> s;
    if (d_.coin()) {
      s.assign(shape_.begin() + d_.integer(0, static_cast<int64_t>(shape_.size())), shape_.end());
    } else {
      s = shape_;
      for (SymExpr& x : s)
        if (d_.coin()) x = SymExpr(1);
    }
    return tensors_[var] = d_.b.input(s, dtype_);
  }
  std::vector<SymExpr> shape_;
  DType dtype_ = DType::Float32;
  bool drawn_ = false;
};

bool layout_only(const CompiledRule& r) {
  if (r.has_family) return false;
  for (const OpInfo* op : r.ops)
    if (op->cls != OpClass::Layout) return false;
  return true;
}

}  // namespace

RuleFactory file_rules(const std::vector<rulelang::RuleFile>& files) {
  return [files](TensorEGraph& t) { return rulelang::make_rewrites(files, t); };
}

RuleFactory file_rule(const std::vector<rulelang::RuleFile>& files, const std::string& name) {
  std::vector<rulelang::RuleFile> only;
  for (const rulelang::RuleFile& f : files) {
    rulelang::RuleFile g{f.path, {}};
    for (const rulelang::RuleSpec& s : f.rules)
      if (s.name == name || (s.both_ways && s.name + "-reverse" == name)) g.rules.push_back(s);
    if (!g.rules.empty()) only.push_back(std::move(g));
  }
  return file_rules(only);
}

std::vector<RuleCase> generated_cases(const std::vector<rulelang::RuleFile>& files) {
  std::vector<RuleCase> cases;
  TensorLanguage lang;
  for (const std::shared_ptr<CompiledRule>& r : rulelang::compile_rules(files, lang)) {
    RuleCase c;
    c.name = r->name;
    c.min_rank = 0;
    c.max_rank = rulelang::kMaxCheckedRank;  // and no higher at run time (rule_run.cpp)
    c.index_map = layout_only(*r);
    c.draw_factor = 8;
    c.approx = r->approx;
    c.branches = r->branches;
    // A multi-pattern: every root is an output, the rewritten ones first.
    c.rewritten_outputs = r->rhs.size();
    if (r->roots.size() > 1) c.index_map = false;  // the index proof reads one output
    c.lhs = [r, numbers = condition_numbers(*r)](Draw& d, size_t rank) {
      Instance inst(*r, numbers, d, rank);
      std::vector<NodeId> root_nodes;
      for (int root : r->roots) root_nodes.push_back(inst.build(root));
      std::vector<NodeId> ordered;
      for (const rulelang::RootRewrite& side : r->rhs) ordered.push_back(root_nodes[side.pattern]);
      for (size_t j = 0; j < root_nodes.size(); ++j)
        if (std::none_of(r->rhs.begin(), r->rhs.end(), [&](const rulelang::RootRewrite& s) { return s.pattern == j; }))
          ordered.push_back(root_nodes[j]);
      d.extra_outputs.assign(ordered.begin() + 1, ordered.end());
      return ordered.front();
    };
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace sator::check
