// Patterns: s-expressions over a Language with ?variables, e.g.
// "(+ ?a (* -1 ?b))". A token is an operator (with the Language deciding
// literals and attributes, "op@attr" or "op@_" for any attribute).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "egraph/language.h"

namespace sator::eg {

struct PatternError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct PatternNode {
  bool is_var = false;
  uint32_t var = 0;  // is_var: index into the variable table
  Term term{};       // otherwise: operator and attribute
  std::vector<uint32_t> children;  // indices of earlier nodes
  bool ground = false;  // no variable below
};

class Pattern {
 public:
  // Parses `text`; variables are looked up in / added to `vars`, so several
  // patterns (a multi-pattern, or a searcher and its applier) share names.
  static Pattern parse(std::string_view text, Language& lang, std::vector<std::string>& vars);

  const std::vector<PatternNode>& nodes() const { return nodes_; }
  uint32_t root() const { return static_cast<uint32_t>(nodes_.size() - 1); }
  const PatternNode& root_node() const { return nodes_.back(); }
  // Variables used anywhere in the pattern.
  std::vector<uint32_t> variables() const;
  std::string to_string(const Language& lang, const std::vector<std::string>& vars) const;

 private:
  std::vector<PatternNode> nodes_;  // children before parents; root last
};

}  // namespace sator::eg
