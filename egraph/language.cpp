#include "egraph/language.h"

namespace sator::eg {

Language::Language() { attr_texts_.emplace_back(); }  // kNoAttr is ""

OpId Language::op(std::string_view name) {
  auto it = op_index_.find(std::string(name));
  if (it != op_index_.end()) return it->second;
  const OpId id = static_cast<OpId>(op_names_.size());
  op_names_.emplace_back(name);
  op_index_.emplace(std::string(name), id);
  return id;
}

std::optional<OpId> Language::find_op(std::string_view name) const {
  auto it = op_index_.find(std::string(name));
  if (it == op_index_.end()) return std::nullopt;
  return it->second;
}

AttrId Language::attr(std::string_view text) {
  if (text.empty()) return kNoAttr;
  auto it = attr_index_.find(std::string(text));
  if (it != attr_index_.end()) return it->second;
  const AttrId id = static_cast<AttrId>(attr_texts_.size());
  attr_texts_.emplace_back(text);
  attr_index_.emplace(std::string(text), id);
  return id;
}

// "op", "op@attr", or "op@_" (any attribute, in patterns).
std::optional<Term> Language::parse_token(std::string_view token, size_t) {
  const size_t at = token.find('@');
  if (at == std::string_view::npos) return Term{op(token), kNoAttr};
  if (at == 0) return std::nullopt;
  const std::string_view a = token.substr(at + 1);
  if (a == "_") return Term{op(token.substr(0, at)), kNoAttr, true};
  return Term{op(token.substr(0, at)), attr(a)};
}

std::string Language::format_node(OpId op, AttrId attr) const {
  return attr == kNoAttr ? op_name(op) : op_name(op) + "@" + attr_text(attr);
}

}  // namespace sator::eg
