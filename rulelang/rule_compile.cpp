// Compiling a rule entry: names resolved against the op table and the
// function table, variables typed by the schema parameters they stand in,
// every expression typed.
#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "ir/infer_context.h"
#include "rulelang/compiled_rule.h"
#include "rulelang/functions.h"

namespace sator::rulelang {

namespace {

bool is_var_name(const SExpr& e) { return e.is_atom() && e.text.size() > 1 && e.text[0] == '?'; }
bool is_keyword(const SExpr& e) { return e.is_atom() && e.text.size() > 1 && e.text[0] == ':'; }

std::optional<Value> number_literal(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const long long i = std::strtoll(s.c_str(), &end, 10);
  if (*end == '\0') return Value::of_int(i);
  const double f = std::strtod(s.c_str(), &end);
  if (*end == '\0' && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '.' || s[0] == '+'))
    return Value::of_float(f);
  if (s == "inf") return Value::of_float(INFINITY);
  if (s == "-inf") return Value::of_float(-INFINITY);
  return std::nullopt;
}

class Compiler {
 public:
  explicit Compiler(const RuleSpec& spec) : spec_(spec) {}

  CompiledRule run(const std::vector<SExpr>& lhs, const std::vector<SExpr>& rhs) {
    r_.name = spec_.name;
    r_.doc = spec_.doc;
    r_.approx = spec_.approx;
    r_.text = spec_.text;
    r_.at = spec_.at;
    const bool multi = lhs.size() > 1;
    for (const SExpr& p : lhs) {
      if (!p.is_list() && p.head() != "as") throw RuleError(p.at, "a left-hand side is an op pattern, e.g. (view ?x _)");
      if (multi && p.head() != "as")
        throw RuleError(p.at, "each pattern of a multi-pattern names its root (?a=(op ...)), so the right-hand side can rewrite it");
      const int root = pattern(p);
      if (r_.pattern[static_cast<size_t>(root)].is_var) throw RuleError(p.at, "a left-hand side is an op pattern, not a variable");
      if (r_.pattern[static_cast<size_t>(root)].family) throw RuleError(p.at, "an op family can be matched inside a pattern, not as its root");
      if (!r_.roots.empty() && !shares_variable(root))
        throw RuleError(p.at, "this pattern shares no variable with the patterns before it: every pair of matches would be tried");
      r_.roots.push_back(root);
      if (!r_.searcher.empty()) r_.searcher += "; ";
      r_.searcher += searcher_text(root);
    }
    // A variable only inside an op family is not the matcher's to bind: the
    // builder binds it from the family node's inputs.
    for (Variable& v : r_.vars)
      if (v.in_pattern && !searcher_mentions(v.name)) v.in_pattern = false;
    if (r_.vars.size() > 64) throw RuleError(lhs[0].at, "a rule has at most 64 variables");
    for (size_t j = 0; j < r_.roots.size(); ++j) {
      const size_t first = r_.steps.size();
      r_.steps.push_back({r_.roots[j], -1, 0, j});
      for (size_t i = first; i < r_.steps.size(); ++i) {
        const PatternNode& n = r_.pattern[static_cast<size_t>(r_.steps[i].node)];
        for (size_t k = 0; k < n.args.size(); ++k)
          if (n.args[k].kind == PatternArg::Kind::Child && !r_.pattern[static_cast<size_t>(n.args[k].child)].is_var)
            r_.steps.push_back({n.args[k].child, static_cast<int>(i), k, j});
      }
    }
    require_named_before_read();
    for (const auto& [v, x] : spec_.lets) {
      Expr e = expr(x, false);
      if (find_var(v.text) >= 0) throw RuleError(v.at, "'" + v.text + "' is already bound");
      r_.lets.emplace_back(declare(v.text, e.type, false), std::move(e));
    }
    for (const SExpr& c : spec_.conditions) {
      Expr e = expr(c, false);
      need(e, Type::Bool, c.at, "a condition");
      r_.conditions.push_back(std::move(e));
    }
    if (!multi && rhs.size() > 1)
      throw RuleError(rhs[1].at, "a rule of one pattern has one right-hand side (several, ?root=EXPR each, rewrite a multi-pattern's roots)");
    for (const SExpr& x : rhs) {
      size_t j = 0;  // the pattern whose root the side rewrites
      const SExpr* side = &x;
      if (multi) {
        // ?root=EXPR: the class of the pattern whose root is ?root.
        if (x.head() != "as" || x.items.size() != 3)
          throw RuleError(x.at, "a multi-pattern's right-hand side is ?root=EXPR for the roots it rewrites");
        while (j < r_.roots.size() && r_.vars[static_cast<size_t>(r_.pattern[static_cast<size_t>(r_.roots[j])].var)].name != x.items[1].text) ++j;
        if (j == r_.roots.size()) throw RuleError(x.items[1].at, "'" + x.items[1].text + "' names no pattern's root");
        for (const RootRewrite& done : r_.rhs)
          if (done.pattern == j) throw RuleError(x.items[1].at, "'" + x.items[1].text + "' is rewritten twice");
        side = &x.items[2];
      }
      r_.rhs.push_back({j, expr(*side, true)});
      need(r_.rhs.back().expr, Type::Tensor, side->at, "the right-hand side");
    }
    schedule_checks(r_);
    // The ifs that decide what the rule writes, numbered for their counts.
    std::vector<Where> ifs;
    for (auto& [v, e] : r_.lets) number_branches(e, ifs);
    for (RootRewrite& side : r_.rhs) number_branches(side.expr, ifs);
    r_.branches = std::make_shared<BranchCounts>(std::move(ifs));
    return std::move(r_);
  }

 private:
  // (Expressions are depth-bounded when read: rule_spec.cpp.)
  static void number_branches(Expr& e, std::vector<Where>& ifs) {
    if (e.kind == Expr::Kind::If) {
      e.branch = static_cast<int>(ifs.size());
      ifs.push_back(e.at);
    }
    for (Expr& a : e.args) number_branches(a, ifs);
  }

  const RuleSpec& spec_;
  CompiledRule r_;
  int fresh_ = 0;

  int find_var(const std::string& name) const {
    for (size_t i = 0; i < r_.vars.size(); ++i)
      if (r_.vars[i].name == name) return static_cast<int>(i);
    return -1;
  }
  int declare(const std::string& name, Type t, bool in_pattern) {
    r_.vars.push_back({name, t, in_pattern});
    return static_cast<int>(r_.vars.size() - 1);
  }
  static void need(const Expr& e, Type t, const Where& at, const char* what) {
    if (!assignable(e.type, t))
      throw RuleError(at, std::string(what) + " must be a " + type_name(t) + ", not a " + type_name(e.type));
  }

  const OpInfo* op_named(const SExpr& head) {
    std::string why;
    const OpInfo* op = find_op_by_short_name(head.text, &why);
    if (!op) throw RuleError(head.at, why);
    if (op->variadic) throw RuleError(head.at, "op " + op->name + " has no schema in the op table; rules cannot bind its arguments");
    if (std::find(r_.ops.begin(), r_.ops.end(), op) == r_.ops.end()) r_.ops.push_back(op);
    return op;
  }

  // Arguments of `(op a b :name c)` by parameter index; throws for too many,
  // unknown or repeated names.
  std::vector<const SExpr*> bind_args(const SExpr& call, const OpInfo& op) {
    std::vector<const SExpr*> given(op.params.size(), nullptr);
    size_t positional = 0;
    for (size_t i = 1; i < call.items.size(); ++i) {
      const SExpr& a = call.items[i];
      size_t p;
      if (is_keyword(a)) {
        const std::string name = a.text.substr(1);
        auto it = std::find_if(op.params.begin(), op.params.end(), [&](const ParamSpec& s) { return s.name == name; });
        if (it == op.params.end()) throw RuleError(a.at, op.name + " has no parameter '" + name + "'");
        if (++i >= call.items.size()) throw RuleError(a.at, "':" + name + "' needs a value");
        p = static_cast<size_t>(it - op.params.begin());
      } else {
        while (positional < op.params.size() && op.params[positional].kwarg_only) ++positional;
        if (positional >= op.params.size())
          throw RuleError(a.at, op.name + " takes " + std::to_string(positional) + " positional arguments");
        p = positional++;
      }
      if (given[p]) throw RuleError(call.items[i].at, "parameter '" + op.params[p].name + "' given twice");
      given[p] = &call.items[i];
    }
    return given;
  }

  Value literal(const SExpr& e, Type t) {
    if (e.is_atom("none")) return Value::none();
    if ((t == Type::Bool || t == Type::Any) && (e.is_atom("true") || e.is_atom("false"))) return Value::of_bool(e.text == "true");
    if (t == Type::DType || t == Type::Any) {
      if (e.is_atom())
        if (const auto d = parse_dtype(e.text)) return Value::of_dtype(*d);
      if (t == Type::DType) throw RuleError(e.at, "expected a dtype (float32, bfloat16, ...), found " + e.to_string());
    }
    if (e.kind == SExpr::Kind::Brackets) {
      std::vector<Value> items;
      for (const SExpr& x : e.items) items.push_back(literal(x, Type::Size));
      return Value::of_list(std::move(items));
    }
    if (e.is_atom())
      if (const auto v = number_literal(e.text)) {
        if ((t == Type::Int || t == Type::Size) && v->kind != Value::Kind::Int)
          throw RuleError(e.at, std::string("expected an integer for a ") + type_name(t) + ", found " + e.text);
        return *v;
      }
    throw RuleError(e.at, std::string("expected a ") + type_name(t) + ", found " + e.to_string());
  }

  // ---- the left-hand side ----
  // `?c:number`: a variable with its type written (where the parameter's
  // type does not say it: a Python number in a tensor parameter).
  static bool annotated(const SExpr& e) { return e.is_atom() && e.text.find(':') != std::string::npos; }
  std::pair<std::string, std::optional<Type>> annotation(const SExpr& e) const {
    const size_t colon = e.text.find(':');
    if (colon == std::string::npos) return {e.text, std::nullopt};
    const std::string type = e.text.substr(colon + 1);
    static const std::pair<const char*, Type> kTypes[] = {{"number", Type::Number}, {"int", Type::Int}, {"size", Type::Size},
                                                          {"dtype", Type::DType}, {"bool", Type::Bool}};
    for (const auto& [name, t] : kTypes)
      if (type == name) return {e.text.substr(0, colon), t};
    throw RuleError(e.at, "no type '" + type + "' (number, int, size, dtype, bool)");
  }
  int add_node(PatternNode n) {
    r_.pattern.push_back(std::move(n));
    return static_cast<int>(r_.pattern.size() - 1);
  }
  int tensor_var(const SExpr& e) {
    const std::string name = e.is_atom("_") ? "?_" + std::to_string(fresh_++) : e.text;
    int v = find_var(name);
    if (v < 0) v = declare(name, Type::Tensor, true);
    else if (r_.vars[static_cast<size_t>(v)].type != Type::Tensor)
      throw RuleError(e.at, "'" + name + "' is a " + type_name(r_.vars[static_cast<size_t>(v)].type) + ", used here as a tensor");
    PatternNode n;
    n.is_var = true;
    n.var = v;
    n.at = e.at;
    return add_node(std::move(n));
  }
  int pattern(const SExpr& e) {
    if (is_var_name(e) || e.is_atom("_")) return tensor_var(e);
    if (e.head() == "as") {
      if (e.items.size() != 3 || !is_var_name(e.items[1]) || !e.items[2].is_list())
        throw RuleError(e.at, "a named node is written ?name=(op ...)");
      const int n = pattern(e.items[2]);
      if (find_var(e.items[1].text) >= 0) throw RuleError(e.items[1].at, "'" + e.items[1].text + "' is already bound");
      r_.pattern[static_cast<size_t>(n)].var = declare(e.items[1].text, Type::Tensor, false);
      r_.vars.back().names_node = true;
      return n;
    }
    if (!e.is_list() || e.items.empty() || !e.items[0].is_atom())
      throw RuleError(e.at, "expected an op pattern (op args...), a ?variable or _, found " + e.to_string());
    if (e.items[0].text.size() > 1 && e.items[0].text[0] == '@') return family_node(e);
    PatternNode n;
    n.at = e.at;
    n.op = op_named(e.items[0]);
    const std::vector<const SExpr*> given = bind_args(e, *n.op);
    for (size_t p = 0; p < n.op->params.size(); ++p) {
      const ParamSpec& spec = n.op->params[p];
      const Type t = param_type(spec);
      PatternArg a;
      a.param = p;
      if (spec.has_default) a.fallback = parse_default(spec);
      const SExpr* g = given[p];
      if (!g) {
        // An argument left out holds its default, as in a call.
        if (!spec.has_default) throw RuleError(e.at, n.op->name + " needs its '" + spec.name + "' argument (write _ for any)");
        a.kind = PatternArg::Kind::Literal;
        a.literal = parse_default(spec);
      } else if (t == Type::Tensor && (g->is_list() || (is_var_name(*g) && !annotated(*g)) || g->is_atom("_"))) {
        a.kind = PatternArg::Kind::Child;
        a.child = pattern(*g);
      } else if (g->is_atom("_")) {
        a.kind = PatternArg::Kind::Any;
      } else if (is_var_name(*g)) {
        // `?c:number` where a tensor parameter holds a Python number.
        const auto [name, declared] = annotation(*g);
        const Type want = declared ? *declared : t;
        if (declared && t != Type::Tensor && !assignable(*declared, t))
          throw RuleError(g->at, "'" + name + "' is declared a " + type_name(*declared) + ", used here as a " + type_name(t));
        if (want == Type::Tensor) throw RuleError(g->at, "a tensor variable needs no type");
        a.kind = PatternArg::Kind::Var;
        a.var = find_var(name);
        if (a.var < 0) a.var = declare(name, want, false);
        else if (!assignable(want, r_.vars[static_cast<size_t>(a.var)].type))
          throw RuleError(g->at, "'" + name + "' is a " + type_name(r_.vars[static_cast<size_t>(a.var)].type) + ", used here as a " + type_name(want));
      } else {
        a.kind = PatternArg::Kind::Literal;
        a.literal = literal(*g, t == Type::Tensor ? Type::Number : t);
      }
      n.args.push_back(std::move(a));
    }
    return add_node(std::move(n));
  }
  // `(@family ?x ...)`: any op of the family over these tensor inputs. The
  // e-graph matcher sees a variable there; the builder finds the nodes.
  int family_node(const SExpr& e) {
    static const std::pair<const char*, OpFact> kFamilies[] = {{"@valuewise", OpFact::Valuewise},
                                                               {"@reshape", OpFact::ReshapeByValue},
                                                               {"@same-value", OpFact::SameValue}};
    if (r_.has_family) throw RuleError(e.at, "a rule matches one op family at most");
    PatternNode n;
    n.at = e.at;
    for (const auto& [name, fact] : kFamilies)
      if (e.items[0].text == name) n.family = fact;
    if (!n.family) throw RuleError(e.items[0].at, "no op family '" + e.items[0].text + "' (@valuewise, @reshape, @same-value)");
    if (e.items.size() < 2) throw RuleError(e.at, "an op family takes its tensor inputs, e.g. (@valuewise ?x)");
    for (size_t k = 1; k < e.items.size(); ++k) {
      if (!is_var_name(e.items[k]) && !e.items[k].is_atom("_"))
        throw RuleError(e.items[k].at, "an op family's inputs are ?variables or _");
      PatternArg a;
      a.kind = PatternArg::Kind::Child;
      a.param = k - 1;
      a.child = pattern(e.items[k]);
      n.args.push_back(std::move(a));
    }
    n.matcher_var = declare("?_family" + std::to_string(fresh_++), Type::Tensor, true);
    r_.has_family = true;
    return add_node(std::move(n));
  }

  // A node named ?n=(...) and read again as ?n is compared when the step
  // holding the read is matched, so the naming step must come first (steps
  // go breadth first: `(f (g ?n=(h ?x)) ?n)` reads ?n at f, before h).
  void require_named_before_read() const {
    std::vector<size_t> named_at(r_.vars.size(), SIZE_MAX);
    for (size_t i = 0; i < r_.steps.size(); ++i) {
      const PatternNode& n = r_.pattern[static_cast<size_t>(r_.steps[i].node)];
      if (n.var >= 0) named_at[static_cast<size_t>(n.var)] = i;
    }
    for (size_t i = 0; i < r_.steps.size(); ++i)
      for (const PatternArg& a : r_.pattern[static_cast<size_t>(r_.steps[i].node)].args) {
        if (a.kind != PatternArg::Kind::Child) continue;
        const PatternNode& c = r_.pattern[static_cast<size_t>(a.child)];
        if (c.is_var && r_.vars[static_cast<size_t>(c.var)].names_node && named_at[static_cast<size_t>(c.var)] >= i)
          throw RuleError(c.at, "'" + r_.vars[static_cast<size_t>(c.var)].name +
                                    "' is read before the node it names is matched: name the node where it is read first");
      }
  }

  // Whether pattern node `root`'s pattern uses a variable (or a named node)
  // of the patterns compiled before it.
  bool shares_variable(int root) const {
    std::vector<bool> earlier(r_.vars.size(), false), mine(r_.vars.size(), false);
    const auto mark = [&](auto&& self, int i, std::vector<bool>& seen) -> void {
      const PatternNode& n = r_.pattern[static_cast<size_t>(i)];
      if (n.var >= 0) seen[static_cast<size_t>(n.var)] = true;
      for (const PatternArg& a : n.args) {
        if (a.kind == PatternArg::Kind::Child) self(self, a.child, seen);
        if (a.kind == PatternArg::Kind::Var) seen[static_cast<size_t>(a.var)] = true;
      }
    };
    for (int r : r_.roots) mark(mark, r, earlier);
    mark(mark, root, mine);
    for (size_t v = 0; v < mine.size(); ++v)
      if (mine[v] && earlier[v]) return true;
    return false;
  }

  bool searcher_mentions(const std::string& var) const {
    for (size_t at = r_.searcher.find(var); at != std::string::npos; at = r_.searcher.find(var, at + 1)) {
      const size_t end = at + var.size();
      if (end == r_.searcher.size() || r_.searcher[end] == ' ' || r_.searcher[end] == ')') return true;
    }
    return false;
  }

  std::string searcher_text(int i) const {
    const PatternNode& n = r_.pattern[static_cast<size_t>(i)];
    if (n.is_var && r_.vars[static_cast<size_t>(n.var)].names_node) {
      // A named node read again: the matcher sees its pattern again (the same
      // class, by hashconsing), so it joins on its variables, and the greedy
      // baseline counts the node's users as the pattern uses it.
      for (size_t k = 0; k < r_.pattern.size(); ++k)
        if (!r_.pattern[k].is_var && r_.pattern[k].var == n.var) return searcher_text(static_cast<int>(k));
    }
    if (n.is_var) return r_.vars[static_cast<size_t>(n.var)].name;
    if (n.family) return r_.vars[static_cast<size_t>(n.matcher_var)].name;
    std::string s = "(" + n.op->name;
    for (const PatternArg& a : n.args)
      if (a.kind == PatternArg::Kind::Child) s += " " + searcher_text(a.child);
    return s + ")";
  }

  // ---- expressions ----
  Expr expr(const SExpr& e, bool builds) {
    Expr x;
    x.at = e.at;
    if (is_var_name(e)) {
      x.kind = Expr::Kind::Var;
      x.var = find_var(e.text);
      if (x.var < 0) throw RuleError(e.at, "'" + e.text + "' is not bound by the left-hand side or a let");
      x.type = r_.vars[static_cast<size_t>(x.var)].type;
      return x;
    }
    if (e.kind == SExpr::Kind::Brackets) {
      x.kind = Expr::Kind::Call;
      x.function = "list";
      x.fn = find_function("list");
      bool ints = true;
      for (const SExpr& item : e.items) {
        x.args.push_back(expr(item, false));
        need(x.args.back(), Type::Size, item.at, "a list element");
        ints &= x.args.back().type == Type::Int;
      }
      x.type = ints ? Type::IntList : Type::Sizes;
      // A list of literals is a literal: built once, not at every match.
      if (std::all_of(x.args.begin(), x.args.end(), [](const Expr& a) { return a.kind == Expr::Kind::Literal; })) {
        std::vector<Value> items;
        for (const Expr& a : x.args) items.push_back(a.literal);
        x.kind = Expr::Kind::Literal;
        x.literal = Value::of_list(std::move(items));
        x.args.clear();
      }
      return x;
    }
    if (e.is_atom()) {
      x.kind = Expr::Kind::Literal;
      x.literal = literal(e, Type::Any);
      x.type = x.literal.kind == Value::Kind::Int ? Type::Int
               : x.literal.kind == Value::Kind::Float ? Type::Number
               : x.literal.kind == Value::Kind::DType ? Type::DType
                                                      : Type::Any;
      if (e.is_atom("true") || e.is_atom("false")) {
        x.literal = Value::of_bool(e.text == "true");
        x.type = Type::Bool;
      }
      return x;
    }
    if (!e.is_list() || e.items.empty() || !e.items[0].is_atom()) throw RuleError(e.at, "expected an expression, found " + e.to_string());
    const SExpr& head = e.items[0];
    if (head.text == "if") {
      if (e.items.size() != 4) throw RuleError(e.at, "(if COND THEN ELSE)");
      x.kind = Expr::Kind::If;
      for (size_t i = 1; i < 4; ++i) x.args.push_back(expr(e.items[i], builds && i > 1));
      need(x.args[0], Type::Bool, e.items[1].at, "an if's condition");
      if (!assignable(x.args[2].type, x.args[1].type) && !assignable(x.args[1].type, x.args[2].type))
        throw RuleError(e.at, std::string("an if's branches are a ") + type_name(x.args[1].type) + " and a " + type_name(x.args[2].type));
      x.type = x.args[1].type == Type::Any ? x.args[2].type : x.args[1].type;
      return x;
    }
    if (head.text == "like") {
      if (!builds) throw RuleError(head.at, "'like' builds a node: only on the right-hand side");
      if (e.items.size() < 3 || !is_var_name(e.items[1])) throw RuleError(e.at, "(like ?node INPUT...)");
      x.kind = Expr::Kind::Like;
      x.type = Type::Tensor;
      x.var = find_var(e.items[1].text);
      if (x.var < 0 || !r_.vars[static_cast<size_t>(x.var)].names_node)
        throw RuleError(e.items[1].at, "'like' copies a node named in the pattern (?n=(...)); " + e.items[1].text + " names none");
      for (size_t i = 2; i < e.items.size(); ++i) {
        x.args.push_back(expr(e.items[i], true));
        need(x.args.back(), Type::Tensor, e.items[i].at, "an input of 'like'");
      }
      return x;
    }
    if (const Function* f = find_function(head.text)) {
      x.kind = Expr::Kind::Call;
      x.function = f->name;
      x.fn = f;
      using S = Expr::Special;
      x.special = x.function == "=" ? S::Equal : x.function == "!=" ? S::NotEqual
                  : x.function == "and" ? S::And : x.function == "or" ? S::Or : S::None;
      const size_t n = e.items.size() - 1;
      if (f->variadic ? n == 0 : n != f->params.size())
        throw RuleError(e.at, "'" + head.text + "' takes " + (f->variadic ? std::string("one or more") : std::to_string(f->params.size())) +
                                  " arguments, not " + std::to_string(n));
      for (size_t i = 0; i < n; ++i) {
        x.args.push_back(expr(e.items[i + 1], false));
        need(x.args.back(), f->params[f->variadic ? 0 : i], e.items[i + 1].at, "this argument");
      }
      // `=` and `!=` take any two values, but of one kind: a tensor against
      // a number is never equal, and such a condition only showed as a rule
      // that never fired (issue 42).
      if ((x.special == S::Equal || x.special == S::NotEqual) && n == 2 &&
          !assignable(x.args[0].type, x.args[1].type) && !assignable(x.args[1].type, x.args[0].type))
        throw RuleError(e.at, "'" + head.text + "' compares a value of type " + type_name(x.args[0].type) +
                                  " with one of type " + type_name(x.args[1].type) +
                                  ": values of different kinds are never equal");
      x.type = f->result;
      // List functions keep their list's kind: entries of an int list are
      // ints (a permutation stays one for `permute`).
      const bool on_ints = !x.args.empty() && x.args[0].type == Type::IntList &&
                           (x.args.size() < 3 || x.args[2].type != Type::Size || x.function != "insert");
      if (on_ints && f->params[0] == Type::Sizes) {
        if (f->result == Type::Sizes) x.type = Type::IntList;
        if (f->result == Type::Size) x.type = Type::Int;
      }
      return x;
    }
    if (!builds) {
      std::string why;
      if (find_op_by_short_name(head.text, &why)) throw RuleError(head.at, "an op (" + head.text + ") is built only on the right-hand side");
      throw RuleError(head.at, "no function or op '" + head.text + "'");
    }
    x.kind = Expr::Kind::Build;
    x.type = Type::Tensor;
    x.op = op_named(head);
    const std::vector<const SExpr*> given = bind_args(e, *x.op);
    for (size_t p = 0; p < x.op->params.size(); ++p) {
      const ParamSpec& spec = x.op->params[p];
      if (!given[p]) {
        if (!spec.has_default) throw RuleError(e.at, x.op->name + " needs its '" + spec.name + "' argument");
        continue;
      }
      const Type t = param_type(spec);
      Expr a = expr(*given[p], t == Type::Tensor);
      if (t == Type::Tensor ? !(a.type == Type::Tensor || assignable(a.type, Type::Number)) : !assignable(a.type, t))
        throw RuleError(given[p]->at, "argument '" + spec.name + "' of " + x.op->name + " is a " + type_name(t) + ", given a " + type_name(a.type));
      x.arg_params.push_back(static_cast<int>(p));
      x.args.push_back(std::move(a));
    }
    return x;
  }
};

}  // namespace

CompiledRule compile_rule(const RuleSpec& spec, bool reverse) {
  if (spec.both_ways && (spec.lhs.size() > 1 || spec.rhs.size() > 1))
    throw RuleError(spec.at, "rule '" + spec.name + "' is a multi-pattern: it runs one way (=>), not both (<=>)");
  if (!reverse) return Compiler(spec).run(spec.lhs, spec.rhs);
  RuleSpec back = spec;
  back.name = spec.name + "-reverse";
  return Compiler(back).run(spec.rhs, spec.lhs);
}

namespace {
void bind_expr(Expr& e, TensorLanguage& lang) {
  if (e.kind == Expr::Kind::Build) e.op_id = lang.op(e.op->name);
  for (Expr& a : e.args) bind_expr(a, lang);
}
}  // namespace

void bind_language(CompiledRule& r, TensorLanguage& lang) {
  for (PatternNode& n : r.pattern)
    if (!n.is_var && n.op) n.op_id = lang.op(n.op->name);
  for (auto& [v, e] : r.lets) bind_expr(e, lang);
  for (Expr& e : r.conditions) bind_expr(e, lang);
  for (RootRewrite& x : r.rhs) bind_expr(x.expr, lang);
}

}  // namespace sator::rulelang
