// A rule file entry checked against the op table and turned into what runs:
// a left-hand pattern of ops (children are the tensor arguments, attributes
// are matched by the builder), and expressions for the lets, the conditions
// and the right-hand side. Every name is resolved and every expression typed
// here, so a rule that compiles only fails at run time by declining a match.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "egraph/rewrite.h"
#include "ir/op_table.h"
#include "tensor/tensor_egraph.h"
#include "ir/value.h"
#include "rulelang/rule_spec.h"

namespace sator::rulelang {

// The types of the language. Int is a Size (an integer is a size), IntList
// a Sizes; Any is an attribute of a kind the language does not read.
enum class Type : uint8_t { Tensor, Int, Size, IntList, Sizes, DType, Number, Bool, Any };
const char* type_name(Type t);
bool assignable(Type from, Type to);  // a value of `from` where `to` is asked
Type param_type(const ParamSpec& p);

// One argument of an op in a pattern, by schema parameter.
struct PatternArg {
  enum class Kind : uint8_t { Child, Var, Literal, Any } kind = Kind::Any;
  size_t param = 0;   // index into the op's params
  int child = -1;     // Child: index of the pattern node
  int var = -1;       // Var: index of the variable
  Value literal;      // Literal
  Value fallback;     // what a node that leaves the parameter out gives it (its default, or none)
};

struct PatternNode {
  bool is_var = false;       // a tensor variable (or `_`)
  int var = -1;              // is_var: the variable; otherwise the ?name bound to this node's class, or -1
  int matcher_var = -1;      // family: the variable the e-graph matcher binds in its place
  const OpInfo* op = nullptr;
  eg::OpId op_id = 0;
  // `(@valuewise ?x)`: any op with this fact in the op table (op is null),
  // its args the node's tensor inputs in order (PatternArg::param = slot).
  std::optional<OpFact> family;
  std::vector<PatternArg> args;  // every parameter, in schema order
  Where at;
};

// The pattern's op nodes in the order the builder finds them again: the
// root, then each op node after the one whose argument it is.
struct MatchStep {
  int node = 0;         // pattern node
  int parent = -1;      // step of the node it is an argument of (-1: a pattern's root)
  size_t parent_arg = 0;  // which of the parent's args
  size_t pattern = 0;   // a root step: which pattern of a multi-pattern
};

// How often each `if` of a rule's right-hand side (and its lets) took each
// branch, over every e-graph the rule ran in (its copies share one count):
// check-rules fails a rule whose trials never took a branch, since what
// that branch writes was never compared.
struct BranchCounts {
  explicit BranchCounts(std::vector<Where> at)
      : at(std::move(at)), hits(new std::atomic<uint64_t>[2 * this->at.size()]()) {}
  std::vector<Where> at;                        // each if, in the file
  std::unique_ptr<std::atomic<uint64_t>[]> hits;  // 2 per if: then, else
  uint64_t taken(size_t branch, bool then) const { return hits[2 * branch + (then ? 0 : 1)].load(); }
};

// The ranks check-rules draws a rule file's instances at (0 to this):
// at run time a file's rule is not applied to a tensor of higher rank, which
// no trial checked (issue 42: a rule wrong only at rank 6 passed).
constexpr size_t kMaxCheckedRank = 5;

struct Expr {
  // Like: (like ?n ARG...), a node with ?n's op and attributes over new inputs.
  enum class Kind : uint8_t { Var, Literal, Call, Build, If, Like } kind = Kind::Literal;
  Type type = Type::Any;
  int var = -1;                 // Var
  Value literal;                // Literal
  std::string function;         // Call
  const struct Function* fn = nullptr;  // Call: from the function table
  // Calls eval treats itself: comparisons (shapes compared in place),
  // `and`/`or` that stop early.
  enum class Special : uint8_t { None, Equal, NotEqual, And, Or } special = Special::None;
  const OpInfo* op = nullptr;   // Build
  eg::OpId op_id = 0;
  std::vector<int> arg_params;  // Build: the parameter each argument fills
  std::vector<Expr> args;       // Call, Build, If (condition, then, else)
  int branch = -1;              // If in a let or the right-hand side: its index in CompiledRule::branches
  Where at;
};

struct Variable {
  std::string name;
  Type type = Type::Any;
  bool in_pattern = false;  // a tensor variable the e-graph matcher binds
  bool names_node = false;  // ?v=(...): the node itself is bound too (for `like`)
};

// What a match rewrites: the class of one pattern's root, merged with an
// expression's value.
struct RootRewrite {
  size_t pattern = 0;
  Expr expr;
};

struct CompiledRule {
  std::string name, doc, text;
  std::string approx;  // RuleSpec::approx
  Where at;
  std::vector<Variable> vars;
  std::vector<PatternNode> pattern;  // children before parents
  std::vector<int> roots;            // each pattern's root node (one, or a multi-pattern's)
  std::vector<MatchStep> steps;
  std::string searcher;              // the patterns as the e-graph matcher reads them ("P1; P2")
  std::vector<std::pair<int, Expr>> lets;
  std::vector<Expr> conditions;
  std::vector<RootRewrite> rhs;      // one for the root, or one per rewritten root
  std::shared_ptr<BranchCounts> branches;  // the lets' and right-hand side's ifs
  // The lets and conditions, each run as soon as the variables it reads are
  // bound: at point p, before step p is matched (p = steps.size(): the
  // binding is complete), so a binding that fails a condition is not
  // extended further. A let is (true, index into lets), a condition (false,
  // index into conditions); in each point lets first, each in file order.
  std::vector<std::vector<std::pair<bool, size_t>>> checks_at;
  std::vector<uint32_t> matcher_var;  // per variable: its index in the Rewrite (in_pattern only)
  std::vector<uint32_t> root_slot;    // per later pattern: its root class's index in the Rewrite
  // The ops the rule reads or builds (for the checker: a rule of layout ops
  // only gets the index proof).
  std::vector<const OpInfo*> ops;
  bool has_family = false;  // a pattern node stands for an op family
};

// Compiles one entry (for `<=>`, call with reverse=true for the second
// direction). Throws RuleError naming the file, line and column. The op ids
// of one e-graph's language are set by bind_language (a compiled rule is
// kept and reused for every e-graph).
CompiledRule compile_rule(const RuleSpec& spec, bool reverse = false);
// Places each let and condition at the first point where the variables it
// reads are bound (CompiledRule::checks_at); part of compile_rule.
void schedule_checks(CompiledRule& rule);
void bind_language(CompiledRule& rule, TensorLanguage& lang);


// The e-graph rewrite that runs a compiled rule.
eg::Rewrite make_rewrite(std::shared_ptr<CompiledRule> rule, TensorEGraph& t);

// What running a rule on one match of its pattern did: rewrote it (fires),
// or why not (the first condition that failed, where the file writes it).
struct MatchDiagnosis {
  bool fires = false;
  std::string why;
};
// Runs the rule on the match (`s` as the e-graph matcher of
// make_rewrite(rule, t) gives it), recording why it does not rewrite.
MatchDiagnosis diagnose_match(std::shared_ptr<CompiledRule> rule, TensorEGraph& t, eg::Id eclass, eg::Subst s);

// The value node attributes `a` give a pattern argument (positional, by
// keyword, or the parameter's default), and whether two attribute values are
// the same (numbers compared as numbers): how patterns read attributes.
const Value& pattern_arg_value(const OpInfo& op, const NodeAttrs& a, const PatternArg& pa);
bool same_attribute(const Value& a, const Value& b);

}  // namespace sator::rulelang
