// Rewrite rules: a searcher (one pattern, or several sharing variables), an
// applier (a pattern, or a C++ builder), and conditions checked per match.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "egraph/matcher.h"

namespace sator::eg {

// A substitution: the class bound to each variable, by variable index.
struct Subst {
  const Id* values;
  Id root = kNoId;  // the e-node the searcher's root matched, if it is not a variable
  Id operator[](uint32_t var) const { return values[var]; }
};

using Condition = std::function<bool(EGraph&, Id eclass, Subst)>;
// Builds the right-hand side; returns the class to union with the match's
// class, or kNoId for none.
using Builder = std::function<Id(EGraph&, Id eclass, Subst)>;

class Rewrite {
 public:
  // `searcher` may hold several patterns separated by ';' (a multi-pattern,
  // joined on the variables they share). Pattern j's root class (j >= 1) is
  // the substitution's variable "?#rootj".
  Rewrite(std::string name, Language& lang, std::string_view searcher, std::string_view applier,
          std::vector<Condition> conditions = {});
  Rewrite(std::string name, Language& lang, std::string_view searcher, Builder builder,
          std::vector<Condition> conditions = {});

  const std::string& name() const { return name_; }
  Rewrite& add_condition(Condition c) {
    conditions_.push_back(std::move(c));
    return *this;
  }
  uint32_t var(std::string_view name) const;  // index of "?x"; throws if unknown
  const std::vector<std::string>& vars() const { return vars_; }
  const std::vector<Pattern>& searcher() const { return searcher_; }
  const Pattern* applier() const { return applier_.empty() ? nullptr : &applier_.front(); }

  void search(const EGraph& g, Matches& out, size_t limit = SIZE_MAX) const { program_.search(g, out, limit); }
  // The matches whose first root is class `eclass`.
  void search_class(const EGraph& g, Id eclass, Matches& out, size_t limit = SIZE_MAX) const {
    program_.search_class(g, eclass, out, limit);
  }
  // Applies every match (or, past `deadline`, stops between matches: each
  // applied match is an equality on its own); returns how many changed the
  // e-graph.
  size_t apply(EGraph& g, const Matches& matches,
               std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) const;
  // Match i's right-hand side, added but not merged with the match's class:
  // its class, or kNoId where a condition or the builder declines (for
  // destructive, one-rewrite-at-a-time use; the builder may still merge
  // classes of its own).
  Id build(EGraph& g, const Matches& matches, size_t i) const;

 private:
  void parse_searcher(Language& lang, std::string_view text);
  void name_later_roots();

  std::string name_;
  std::vector<std::string> vars_;
  std::vector<Pattern> searcher_;
  std::vector<Pattern> applier_;  // empty when a builder is used
  Builder builder_;
  std::vector<Condition> conditions_;
  Program program_;
};

// Instantiates pattern `p` under substitution `s`, adding its nodes.
Id instantiate_pattern(EGraph& g, const Pattern& p, Subst s, bool uncanonical = false);

}  // namespace sator::eg
