// The vocabulary of an e-graph: interned operators and attributes, and how
// pattern text maps onto them. The engine knows nothing else of a language.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "egraph/id.h"

namespace sator::eg {

// An operator or leaf as written in a pattern: "+", "x", "-1", "permute".
struct Term {
  OpId op;
  AttrId attr;
  bool any_attr = false;  // pattern only: match the op with any attribute
};

class Language {
 public:
  Language();
  virtual ~Language() = default;

  OpId op(std::string_view name);  // interns
  std::optional<OpId> find_op(std::string_view name) const;
  const std::string& op_name(OpId op) const { return op_names_[op]; }
  size_t num_ops() const { return op_names_.size(); }

  AttrId attr(std::string_view text);  // interns; "" is kNoAttr
  const std::string& attr_text(AttrId a) const { return attr_texts_[a]; }

  // How a token of pattern or term text with `arity` children maps to an
  // operator and attribute. The default: the token is the operator, with no
  // attribute. Languages with literal leaves (numbers, symbols) override it.
  virtual std::optional<Term> parse_token(std::string_view token, size_t arity);
  // The inverse, for printing terms.
  virtual std::string format_node(OpId op, AttrId attr) const;

 private:
  std::vector<std::string> op_names_;
  std::unordered_map<std::string, OpId> op_index_;
  std::vector<std::string> attr_texts_;
  std::unordered_map<std::string, AttrId> attr_index_;
};

}  // namespace sator::eg
